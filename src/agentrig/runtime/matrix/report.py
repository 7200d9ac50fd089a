"""The report of `agentrig matrix`: `compatibility.json` (format `agentrig.compatibility/1`), `compatibility.md` and
`compatibility.html` (`agentrig.runtime.reports.render`).

`build_report` compares the per-version run outputs (`agentrig.runtime.matrix.compare`), writes the diffs, the JSON
document and the markdown page, and returns the `MatrixReport` whose `exit_code` the command exits with.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentrig import __version__
from agentrig.errors import EXIT_FAILED, EXIT_OK
from agentrig.runtime.history import jsonio
from agentrig.runtime.history.jsonio import BeforeReplace
from agentrig.runtime.matrix.compare import (
    MISSING,
    VOLATILE_KEYS,
    Regression,
    ScenarioComparison,
    VersionOutput,
    compare_outputs,
)
from agentrig.runtime.matrix.contract import contract_section, version_notes
from agentrig.runtime.matrix.model_tables import MODEL_EVIDENCE_BOUNDARY, models_table, scenario_metrics_table
from agentrig.runtime.reports.render import write_matrix_html

__all__ = ["EVIDENCE_BOUNDARY", "REPORT_FORMAT", "MatrixReport", "build_report", "render_markdown", "report_json"]

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

    @property
    def exit_code(self) -> int:
        """1 when a version fails a scenario that passes on the baseline, else 0."""
        return EXIT_FAILED if self.regressions else EXIT_OK


def build_report(
    outputs: Sequence[VersionOutput],
    *,
    python_version: str,
    paths: Sequence[Path | str],
    out: Path,
    command: str = "",
    generated_on: str | None = None,
    axis: str = "pydantic-ai",
    record: BeforeReplace | None = None,
) -> MatrixReport:
    """Compare the outputs and write `compatibility.json`, `compatibility.md` and the diffs into `out` (each told to
    `record` before it replaces anything: the matrix folder's manifest)."""
    if not outputs:
        raise ValueError("build_report needs at least one version's output")
    scenarios, regressions = compare_outputs(outputs, out, record=record)
    report = MatrixReport(
        baseline=outputs[0].version,
        versions=tuple(outputs),
        scenarios=scenarios,
        regressions=regressions,
        python_version=python_version,
        paths=tuple(str(path) for path in paths),
        out=str(out),
        command=command,
        generated_on=generated_on or datetime.now(UTC).date().isoformat(),
        axis=axis,
    )
    jsonio.write_atomic(
        out / "compatibility.json", jsonio.dumps(report_json(report), pretty=True), before_replace=record
    )
    jsonio.write_atomic(out / "compatibility.md", render_markdown(report).encode(), before_replace=record)
    write_matrix_html(out, before_replace=record)  # compatibility.html, from the files just written
    return report


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
                    }
                    for version, change in scenario.raw_changes.items()
                },
                "diffs": list(scenario.diffs),
                "metrics": {
                    output.version: dict(output.metrics[scenario.name])
                    for output in report.versions
                    if scenario.name in output.metrics
                },
            }
            for scenario in report.scenarios
        ],
        "regressions": [
            {"scenario": item.scenario, "version": item.version, "status": item.status} for item in report.regressions
        ],
        "exit_code": report.exit_code,
    }


_STATUS_CELLS = {"passed": "pass", "failed": "**FAIL**", "error": "**error**", "skipped": "skip", MISSING: "—"}


def _cell(status: str) -> str:
    return _STATUS_CELLS.get(status, status)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _headline(report: MatrixReport) -> list[str]:
    scenarios = report.scenarios
    total = len(scenarios)
    all_pass = all(status == "passed" for item in scenarios for status in item.statuses.values())
    if report.regressions:
        result = (
            f"**{len(report.regressions)} regression(s)**: a scenario passing on {report.baseline} fails elsewhere."
        )
    elif all_pass:
        result = "every scenario passes on every version."
    else:
        result = f"no regression against {report.baseline}, but not every scenario passes (see the table)."
    canonical_changed = [item.name for item in scenarios if item.canonical_differs]
    raw_changed = [item for item in scenarios if item.raw_differs]
    if canonical_changed:
        canonical = f"**differ from {report.baseline} in {len(canonical_changed)} of {total} scenarios**: " + ", ".join(
            f"`{name}`" for name in canonical_changed
        )
    else:
        canonical = f"identical on every version, for all {total} scenarios."
    if raw_changed:
        raw = (
            f"differ from {report.baseline} in {len(raw_changed)} of {total} scenarios (below). pydantic-ai changed "
            "its own message format; the canonical histories staying identical is the removal contract doing its job."
            if not canonical_changed
            else f"differ from {report.baseline} in {len(raw_changed)} of {total} scenarios (below)."
        )
    else:
        raw = "identical on every version."
    return [f"- **Result:** {result}", f"- **Canonical histories:** {canonical}", f"- **Raw pydantic-ai dumps:** {raw}"]


def _versions_table(report: MatrixReport) -> list[str]:
    rows: list[list[str]] = []
    for output in report.versions:
        label = f"{output.version} (baseline)" if output.version == report.baseline else output.version
        counts = Counter(output.statuses.values())
        note = "" if output.error is None else f"agentrig run failed (exit {output.exit_code})"
        if output.resolved_version not in (None, output.version):
            note = f"resolved {output.resolved_version}"
        rows.append([label, *(str(counts[name]) for name in ("passed", "failed", "error", "skipped")), note])
    return _table(["pydantic-ai", "passed", "failed", "error", "skipped", "note"], rows)


def _areas_table(report: MatrixReport) -> list[str]:
    areas: dict[str, list[ScenarioComparison]] = {}
    for scenario in report.scenarios:
        for tag in scenario.tags or ("(untagged)",):
            areas.setdefault(tag, []).append(scenario)
    versions = [output.version for output in report.versions]
    rows = [
        [
            area,
            ", ".join(f"`{item.name}`" for item in items),
            *(f"{sum(item.statuses[version] == 'passed' for item in items)}/{len(items)}" for version in versions),
        ]
        for area, items in sorted(areas.items())
    ]
    return _table(["area (tag)", "scenarios", *versions], rows)


def _scenarios_table(report: MatrixReport) -> list[str]:
    versions = [output.version for output in report.versions]
    rows = [
        [
            f"`{item.name}`",
            *(_cell(item.statuses[version]) for version in versions),
            "identical" if not item.canonical_differs else "**differs**: " + ", ".join(item.canonical_differs),
            "identical" if not item.raw_differs else "differs: " + ", ".join(item.raw_differs),
        ]
        for item in report.scenarios
    ]
    return _table(["scenario", *versions, "canonical history", "raw dump"], rows)


def _raw_differences(report: MatrixReport) -> list[str]:
    lines: list[str] = []
    total = len(report.scenarios)
    for output in report.versions[1:]:
        version = output.version
        changed = [item for item in report.scenarios if version in item.raw_differs]
        if not changed:
            lines.append(f"- **{version}**: identical to {report.baseline} in every scenario.")
            continue
        lines.append(f"- **{version}**: {len(changed)} of {total} scenarios differ from {report.baseline}.")
        kind_changes = [
            (item.name, item.raw_changes[version]) for item in changed if item.raw_changes[version].part_kinds
        ]
        if kind_changes:
            lines.append(
                f"  - part kinds change in {len(kind_changes)}: "
                + "; ".join(
                    f"`{name}` " + ", ".join(f"{kind} {a}→{b}" for kind, (a, b) in change.part_kinds.items())
                    for name, change in kind_changes
                )
            )
        new_keys = Counter(key for item in changed for key in item.raw_changes[version].new_keys)
        if new_keys:
            lines.append("  - new keys: " + ", ".join(f"`{key}` ({count})" for key, count in sorted(new_keys.items())))
        removed = Counter(key for item in changed for key in item.raw_changes[version].removed_keys)
        if removed:
            lines.append("  - keys gone: " + ", ".join(f"`{key}` ({count})" for key, count in sorted(removed.items())))
        other = [item.name for item in changed if item.raw_changes[version].summary() == "values differ"]
        if other:
            lines.append("  - values only: " + ", ".join(f"`{name}`" for name in other))
    lines += [
        "",
        "Counts in parentheses are numbers of scenarios. Unified diffs, per scenario and version, are in "
        f"`{report.out}/diffs/<scenario>/<version>.<file>.diff`.",
    ]
    return lines


def _model_markdown(report: MatrixReport) -> list[str]:
    """The head of `compatibility.md` for `agentrig matrix --models`: models, evidence boundary, scenarios."""
    models = ", ".join(f"`{output.version}`" for output in report.versions)
    return [
        "# Model compatibility",
        "",
        f"Generated by `agentrig matrix --models` (agentrig {__version__}) on {report.generated_on}: "
        f"{len(report.scenarios)} scenarios from {', '.join(f'`{path}`' for path in report.paths)} on {models} "
        f"(Python {report.python_version}). Baseline: **`{report.baseline}`**.",
        "",
        *_headline(report),
        "",
        "## Models",
        "",
        *models_table(report.versions, report.baseline),
        "",
        "## Evidence boundary",
        "",
        MODEL_EVIDENCE_BOUNDARY,
        "",
        "## Scenarios",
        "",
        *scenario_metrics_table(report.scenarios, report.versions, _cell),
        "",
        "## What changed",
        "",
        "Canonical histories are compared with the baseline model's after masking values that change on every run "
        f"({', '.join(sorted(VOLATILE_KEYS))}); another model answers in its own words, so a difference is expected "
        "and shows how the conversation changed: the unified diffs are in "
        f"`{report.out}/diffs/<scenario>/<model>.history.diff`.",
        "",
    ]


def render_markdown(report: MatrixReport) -> str:
    """The `compatibility.md` document: headline, versions, evidence boundary, areas, scenarios, diffs, commands."""
    if report.axis == "model":
        return "\n".join(_model_markdown(report) + _markdown_tail(report))
    versions = ", ".join(output.version for output in report.versions)
    lines = [
        "# pydantic-ai compatibility",
        "",
        f"Generated by `agentrig matrix` (agentrig {__version__}) on {report.generated_on}: "
        f"{len(report.scenarios)} scenarios from {', '.join(f'`{path}`' for path in report.paths)} on pydantic-ai "
        f"{versions} (Python {report.python_version}), each version in its own environment. "
        f"Baseline: **{report.baseline}**.",
        "",
        *_headline(report),
        "",
        "## Versions",
        "",
        *_versions_table(report),
        "",
        "## Evidence boundary",
        "",
        EVIDENCE_BOUNDARY,
        "",
        "Canonical histories (`history.json`) and raw pydantic-ai dumps (`pydantic_ai_dump.json`) are compared with "
        f"the baseline after masking values that change on every run ({', '.join(sorted(VOLATILE_KEYS))}, "
        "generated `pyd_ai_…` call ids).",
        "",
        "## Evidence by area",
        "",
        *_areas_table(report),
        "",
        *contract_section(
            report.scenarios,
            [output.version for output in report.versions],
            version_notes([Path(path) for path in report.paths]),
        ),
        "## Scenarios",
        "",
        *_scenarios_table(report),
        "",
        "## Raw pydantic-ai dump differences",
        "",
        *_raw_differences(report),
        "",
    ]
    return "\n".join(lines + _markdown_tail(report))


def _markdown_tail(report: MatrixReport) -> list[str]:
    lines: list[str] = []
    if report.regressions:
        lines += ["## Regressions", ""]
        lines += [f"- `{item.scenario}` on {item.version}: {item.status}" for item in report.regressions]
        lines.append("")
    failed_runs = [output for output in report.versions if output.error is not None]
    if failed_runs:
        lines += ["## Runs that left no report", ""]
        for output in failed_runs:
            lines += [f"{output.version} (exit {output.exit_code}):", "", "```", output.error or "", "```", ""]
    lines += ["## Reproduce", "", "```bash", report.command or "agentrig matrix", "```", ""]
    if any(output.command for output in report.versions):
        each = "Each model's run:" if report.axis == "model" else "Each version's run, inside its environment:"
        lines += [each, "", "```bash"]
        lines += [" ".join(output.command) for output in report.versions if output.command]
        lines += ["```", ""]
    return lines
