"""compatibility.json (format `agentrig.compatibility/1`): the `MatrixReport` every matrix builds, as one document.

`report` builds the report and writes it; compatibility.md is rendered from the same `MatrixReport`, and
compatibility.html from this document (`agentrig.runtime.reports.render`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from agentrig import __version__
from agentrig.errors import EXIT_FAILED, EXIT_OK, EXIT_PROVIDER
from agentrig.runtime.matrix.compare import Regression, ScenarioComparison, VersionOutput
from agentrig.runtime.matrix.environment_report import lock_json, regression_json, resolution_json, version_json
from agentrig.runtime.matrix.lockfiles import LockFile
from agentrig.runtime.matrix.model_tables import MODEL_EVIDENCE_BOUNDARY
from agentrig.runtime.matrix.version_selection import Resolution

__all__ = ["EVIDENCE_BOUNDARY", "REPORT_FORMAT", "MatrixReport", "by_version", "report_json"]

REPORT_FORMAT = "agentrig.compatibility/1"
EVIDENCE_BOUNDARY = (
    "Each scenario runs a real pydantic-ai `Agent` (through `agent.iter`, or its streaming API for scenarios with "
    "`stream: true` and with `--stream`) against `FunctionModel` driven by the scenario's script, in a separate "
    "environment per version; no provider request leaves the machine. A pass means that on that version the "
    "scenario's expectations, the history invariants, its event-log checks and its golden canonical history all "
    "held. The compat sessions also run every scenario streamed against the same golden histories. It is not "
    "evidence about live providers or versions that are not in the table; a version between two passing pins is "
    "likely but not proven to pass."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class MatrixReport:
    """The whole comparison; `exit_code` is what `agentrig matrix` exits with."""

    baseline: str
    """The version every other one is compared with (the first)."""
    versions: tuple[VersionOutput, ...]
    """Every version's output, in the order given."""
    scenarios: tuple[ScenarioComparison, ...]
    """Every scenario any version reported, sorted by name."""
    regressions: tuple[Regression, ...]
    """Scenarios passing on the baseline and failing elsewhere."""
    python_version: str
    """The Python the environments were built from."""
    paths: tuple[str, ...]
    """The scenario paths that were run."""
    out: str
    """The report directory, as given on the command line."""
    command: str
    """The command that reproduces this report."""
    generated_on: str
    """The UTC date of the run."""
    axis: str = "pydantic-ai"
    """What the columns are: `pydantic-ai` versions, or `model`s (`agentrig matrix --models`)."""
    resolution: Resolution | None = None
    """How `--versions` was resolved, when it named `latest`, `locked` or a range."""
    lock: LockFile | None = None
    """The lock file every environment was built from (`--lock`)."""
    masked_keys: tuple[str, ...] = ()
    """The keys whose per-run values were masked before comparing, sorted."""

    @property
    def not_built(self) -> tuple[VersionOutput, ...]:
        """The versions whose environment could not be built."""
        return tuple(output for output in self.versions if output.build_error is not None)

    @property
    def exit_code(self) -> int:
        """3 when an environment could not be built; else 1 when a version fails a scenario that passes on the
        baseline; else 0."""
        if self.not_built:
            return EXIT_PROVIDER
        return EXIT_FAILED if self.regressions else EXIT_OK


def by_version(report: MatrixReport) -> dict[str, VersionOutput]:
    """Each version's output by its version."""
    return {output.version: output for output in report.versions}


def report_json(report: MatrixReport) -> dict[str, Any]:
    """The `compatibility.json` document (format `agentrig.compatibility/1`)."""
    return {
        "format": REPORT_FORMAT,
        "agentrig_version": __version__,
        "generated_on": report.generated_on,
        "python_version": report.python_version,
        "paths": list(report.paths),
        "baseline": report.baseline,
        "command": report.command,
        "axis": report.axis,
        "evidence_boundary": MODEL_EVIDENCE_BOUNDARY if report.axis == "model" else EVIDENCE_BOUNDARY,
        "resolution": resolution_json(report.resolution),
        "lock": lock_json(report.lock),
        "masked_keys": list(report.masked_keys),
        "versions": [
            {
                "version": output.version,
                "resolved_version": output.resolved_version,
                "exit_code": output.exit_code,
                "environment": str(output.environment) if output.environment else None,
                "reused": output.reused,
                "command": list(output.command),
                "error": output.error,
                "counts": dict(Counter(output.statuses.values())),
                "totals": dict(output.totals) if output.totals is not None else None,
                **(
                    {"judged": {name: dict(checks) for name, checks in output.judged.items()}}
                    if report.axis == "model"
                    else version_json(output, report.versions[0], report.scenarios, report.lock)
                ),
            }
            for output in report.versions
        ],
        "scenarios": [
            {
                "name": scenario.name,
                "tags": list(scenario.tags),
                "statuses": dict(scenario.statuses),
                "canonical_identical": not scenario.canonical_differs,
                "canonical_differs": list(scenario.canonical_differs),
                "raw_dump_identical": not scenario.raw_differs,
                "raw_dump_differs": list(scenario.raw_differs),
                "raw_dump_changes": {
                    version: {
                        "part_kinds": {kind: list(counts) for kind, counts in change.part_kinds.items()},
                        "new_keys": list(change.new_keys),
                        "removed_keys": list(change.removed_keys),
                        "changed_values": [
                            {"key": item.key, "from": item.before, "to": item.after, "count": item.count}
                            for item in change.changed_values
                        ],
                    }
                    for version, change in scenario.raw_changes.items()
                },
                "diffs": list(scenario.diffs),
                "new_warnings": {
                    version: [warning.to_json() for warning in found]
                    for version, found in scenario.new_warnings.items()
                },
                "metrics": {
                    output.version: dict(output.metrics[scenario.name])
                    for output in report.versions
                    if scenario.name in output.metrics
                },
            }
            for scenario in report.scenarios
        ],
        "regressions": [regression_json(item, by_version(report), report.versions[0]) for item in report.regressions],
        "exit_code": report.exit_code,
    }
