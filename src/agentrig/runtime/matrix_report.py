"""The comparison behind `agentrig matrix`: per-version run outputs in, `compatibility.json`/`.md` and diffs out.

Each version's output is an `agentrig run --out DIR` directory (`report.json`, `scenarios/<name>/history.json`,
`scenarios/<name>/pydantic_ai_dump.json`). Every scenario's canonical history and raw pydantic-ai dump is compared
with the baseline's (the first version) after masking volatile values (timestamps, run ids, generated call ids);
differences are written as unified diffs to `OUT/diffs/<scenario>/<version>.<file>.diff`. Pure file work: no
pydantic-ai import, no subprocess, so it is tested on fabricated directories.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from agentrig import __version__
from agentrig.errors import EXIT_FAILED, EXIT_OK, AgentrigError
from agentrig.runtime import jsonio

__all__ = [
    "COMPARED_FILES",
    "REPORT_FORMAT",
    "DumpChange",
    "MatrixReport",
    "Regression",
    "ScenarioComparison",
    "VersionOutput",
    "build_report",
    "compare_dumps",
    "compare_outputs",
    "load_version_output",
    "normalized_json_text",
    "render_markdown",
    "report_json",
    "summarize_change",
]

REPORT_FORMAT = "agentrig.compatibility/1"
COMPARED_FILES = ("history.json", "pydantic_ai_dump.json")
"""The canonical history (must be identical on every version) and the raw pydantic-ai dump (may differ)."""
MISSING = "missing"
"""The status of a scenario a version's run did not report (its run crashed, or the scenario is new)."""
FAILING_STATUSES = frozenset({"failed", "error", MISSING})
VOLATILE_KEYS = frozenset({"timestamp", "run_id", "conversation_id", "provider_response_id", "created_at"})
"""Values that differ between any two runs, even on one version; masked before comparing."""
GENERATED_ID = re.compile(r"^pyd_ai_[0-9a-f]{32}$")
"""pydantic-ai generates `pyd_ai_<uuid hex>` tool call ids where a response gives none."""
MASK = "<volatile>"

EVIDENCE_BOUNDARY = (
    "Each scenario runs a real pydantic-ai `Agent` (through `agent.iter`) against `FunctionModel` driven by the "
    "scenario's script, in a separate environment per version; no provider request leaves the machine. A pass means "
    "that on that version the scenario's expectations, the history invariants and its golden canonical history all "
    "held. It is not evidence about live providers, streaming, or versions that are not in the table; a version "
    "between two passing pins is likely but not proven to pass."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionOutput:
    """One version's `agentrig run` output, as far as the comparison needs it."""

    version: str
    """The pinned pydantic-ai version."""
    directory: Path
    """The `agentrig run --out` directory."""
    exit_code: int
    """The exit code of `agentrig run` in that version's environment."""
    statuses: Mapping[str, str] = field(default_factory=dict[str, str])
    """Scenario name -> passed / failed / error / skipped, from `report.json`."""
    tags: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Scenario name -> its tags (the areas the scenario covers)."""
    error: str | None = None
    """Set when the run left no readable report: the end of its stderr."""
    resolved_version: str | None = None
    """`pydantic_ai_version` as the run reported it (must equal `version`)."""
    environment: Path | None = None
    """The environment the run used."""
    reused: bool = False
    """True when the environment was reused rather than built."""
    command: tuple[str, ...] = ()
    """The command that produced the output."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DumpChange:
    """How one raw pydantic-ai dump differs from the baseline's, in terms a reader can scan."""

    part_kinds: Mapping[str, tuple[int, int]] = field(default_factory=dict[str, tuple[int, int]])
    """Part kind -> (count in the baseline, count here), only where the counts differ."""
    new_keys: tuple[str, ...] = ()
    """JSON keys that appear here and nowhere in the baseline's dump."""
    removed_keys: tuple[str, ...] = ()
    """JSON keys of the baseline's dump that appear nowhere here."""

    def summary(self) -> str:
        """One line: part kind counts, keys that appear or disappear ("values differ" when neither)."""
        notes: list[str] = []
        if self.part_kinds:
            notes.append("part kinds " + ", ".join(f"{k} {a}→{b}" for k, (a, b) in self.part_kinds.items()))
        if self.new_keys:
            notes.append("new keys " + ", ".join(f"`{key}`" for key in self.new_keys))
        if self.removed_keys:
            notes.append("keys gone " + ", ".join(f"`{key}`" for key in self.removed_keys))
        return "; ".join(notes) or "values differ"


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioComparison:
    """One scenario across the versions."""

    name: str
    """The scenario name."""
    tags: tuple[str, ...]
    """Its tags."""
    statuses: Mapping[str, str]
    """Version -> status (`missing` when that version's run did not report it)."""
    canonical_differs: tuple[str, ...]
    """Versions whose canonical history differs from the baseline's."""
    raw_differs: tuple[str, ...]
    """Versions whose raw pydantic-ai dump differs from the baseline's."""
    raw_changes: Mapping[str, DumpChange]
    """Version -> how its raw dump differs from the baseline's."""
    diffs: tuple[str, ...]
    """Diff files written for this scenario, relative to the report directory."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Regression:
    """A scenario that passes on the baseline and fails on another version."""

    scenario: str
    """The scenario name."""
    version: str
    """The version it fails on."""
    status: str
    """Its status there."""


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

    @property
    def exit_code(self) -> int:
        """1 when a version fails a scenario that passes on the baseline, else 0."""
        return EXIT_FAILED if self.regressions else EXIT_OK


def load_version_output(
    version: str,
    directory: Path,
    *,
    exit_code: int,
    stderr_tail: str = "",
    environment: Path | None = None,
    reused: bool = False,
    command: Sequence[str] = (),
) -> VersionOutput:
    """Read a run's `report.json`; a missing or unreadable one becomes a `VersionOutput` with `error` set."""
    common: dict[str, Any] = {
        "version": version,
        "directory": directory,
        "exit_code": exit_code,
        "environment": environment,
        "reused": reused,
        "command": tuple(command),
    }
    try:
        report = jsonio.read_json_file(directory / "report.json")
        scenarios = report["scenarios"]
        statuses = {str(item["name"]): str(item["status"]) for item in scenarios}
        tags = {str(item["name"]): tuple(str(tag) for tag in item.get("tags", ())) for item in scenarios}
    except (AgentrigError, KeyError, TypeError) as error:
        reason = stderr_tail.strip() or str(error)
        return VersionOutput(error=reason, **common)
    resolved = report.get("pydantic_ai_version")
    return VersionOutput(statuses=statuses, tags=tags, resolved_version=str(resolved) if resolved else None, **common)


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: MASK if key in VOLATILE_KEYS and item is not None else _mask(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask(item) for item in value]
    if isinstance(value, str) and GENERATED_ID.match(value):
        return MASK
    return value


def normalized_json_text(path: Path) -> str | None:
    """The file's JSON with volatile values masked, keys sorted, two-space indent; None when absent or unreadable."""
    try:
        data = jsonio.read_json_file(path)
    except AgentrigError:
        return None
    return orjson.dumps(_mask(data), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def _shape(text: str) -> tuple[Counter[str], set[str]]:
    objects = list(_walk(orjson.loads(text)))
    kinds = Counter(str(obj["part_kind"]) for obj in objects if "part_kind" in obj)
    keys = {key for obj in objects for key in obj}
    return kinds, keys


def compare_dumps(baseline_text: str, other_text: str) -> DumpChange:
    """Part kind counts and key sets of two JSON documents, compared."""
    base_kinds, base_keys = _shape(baseline_text)
    kinds, keys = _shape(other_text)
    changed = sorted(kind for kind in base_kinds | kinds if base_kinds[kind] != kinds[kind])
    return DumpChange(
        part_kinds={kind: (base_kinds[kind], kinds[kind]) for kind in changed},
        new_keys=tuple(sorted(keys - base_keys)),
        removed_keys=tuple(sorted(base_keys - keys)),
    )


def summarize_change(baseline_text: str, other_text: str) -> str:
    """One line on how a JSON document differs: part kind counts and keys that appear or disappear."""
    return compare_dumps(baseline_text, other_text).summary()


def _diff_scenario(
    name: str, baseline: VersionOutput, others: Sequence[VersionOutput], out: Path
) -> tuple[list[str], list[str], dict[str, DumpChange], list[str]]:
    canonical_differs: list[str] = []
    raw_differs: list[str] = []
    raw_changes: dict[str, DumpChange] = {}
    diffs: list[str] = []
    for file_name in COMPARED_FILES:
        base_text = normalized_json_text(baseline.directory / "scenarios" / name / file_name)
        if base_text is None:
            continue
        for other in others:
            text = normalized_json_text(other.directory / "scenarios" / name / file_name)
            if text is None or text == base_text:
                continue
            lines = difflib.unified_diff(
                base_text.splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"{baseline.version}/scenarios/{name}/{file_name}",
                tofile=f"{other.version}/scenarios/{name}/{file_name}",
            )
            relative = f"diffs/{name}/{other.version}.{file_name.removesuffix('.json')}.diff"
            jsonio.write_atomic(out / relative, "".join(lines).encode())
            diffs.append(relative)
            if file_name == "history.json":
                canonical_differs.append(other.version)
            else:
                raw_differs.append(other.version)
                raw_changes[other.version] = compare_dumps(base_text, text)
    return canonical_differs, raw_differs, raw_changes, diffs


def compare_outputs(
    outputs: Sequence[VersionOutput], out: Path
) -> tuple[tuple[ScenarioComparison, ...], tuple[Regression, ...]]:
    """Compare every scenario across versions with the first, writing diff files under `out/diffs/`."""
    baseline, others = outputs[0], list(outputs[1:])
    names = sorted({name for output in outputs for name in output.statuses})
    comparisons: list[ScenarioComparison] = []
    regressions: list[Regression] = []
    for name in names:
        statuses = {output.version: output.statuses.get(name, MISSING) for output in outputs}
        tags = next((output.tags[name] for output in outputs if output.tags.get(name)), ())
        canonical, raw, raw_changes, diffs = _diff_scenario(name, baseline, others, out)
        comparisons.append(
            ScenarioComparison(
                name=name,
                tags=tags,
                statuses=statuses,
                canonical_differs=tuple(canonical),
                raw_differs=tuple(raw),
                raw_changes=raw_changes,
                diffs=tuple(diffs),
            )
        )
        if statuses[baseline.version] == "passed":
            regressions += [
                Regression(scenario=name, version=version, status=status)
                for version, status in statuses.items()
                if status in FAILING_STATUSES
            ]
    return tuple(comparisons), tuple(regressions)


def build_report(
    outputs: Sequence[VersionOutput],
    *,
    python_version: str,
    paths: Sequence[Path | str],
    out: Path,
    command: str = "",
    generated_on: str | None = None,
) -> MatrixReport:
    """Compare the outputs and write `compatibility.json`, `compatibility.md` and the diffs into `out`."""
    if not outputs:
        raise ValueError("build_report needs at least one version's output")
    scenarios, regressions = compare_outputs(outputs, out)
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
    )
    jsonio.write_atomic(out / "compatibility.json", jsonio.dumps(report_json(report), pretty=True))
    jsonio.write_atomic(out / "compatibility.md", render_markdown(report).encode())
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
        "evidence_boundary": EVIDENCE_BOUNDARY,
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


def render_markdown(report: MatrixReport) -> str:
    """The `compatibility.md` document: headline, versions, evidence boundary, areas, scenarios, diffs, commands."""
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
        "## Scenarios",
        "",
        *_scenarios_table(report),
        "",
        "## Raw pydantic-ai dump differences",
        "",
        *_raw_differences(report),
        "",
    ]
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
        lines += ["Each version's run, inside its environment:", "", "```bash"]
        lines += [" ".join(output.command) for output in report.versions if output.command]
        lines += ["```", ""]
    return "\n".join(lines)
