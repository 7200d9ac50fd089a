"""The report of `agentrig matrix`: `compatibility.json` (format `agentrig.compatibility/1`), `compatibility.md` and
`compatibility.html` (`agentrig.runtime.reports.render`).

`build_report` compares the per-version run outputs (`agentrig.runtime.matrix.compare`), writes the diffs, the JSON
document and the markdown page, and returns the `MatrixReport` whose `exit_code` the command exits with. What the
page says of each version's environment (packages, builds that failed, fields, warnings, how the versions were
chosen) is `environment_report`'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from agentrig import __version__
from agentrig.runtime.matrix.compare import MISSING, VOLATILE_KEYS, ScenarioComparison, VersionOutput, compare_outputs
from agentrig.runtime.matrix.contract import contract_section, version_notes
from agentrig.runtime.matrix.environment_report import environment_markdown, regression_lines, resolution_lines
from agentrig.runtime.matrix.judged_scores import judged_table
from agentrig.runtime.matrix.lockfiles import LockFile
from agentrig.runtime.matrix.masking import PER_RUN_SHAPES
from agentrig.runtime.matrix.model_tables import MODEL_EVIDENCE_BOUNDARY, models_table, scenario_metrics_table
from agentrig.runtime.matrix.report_document import (
    EVIDENCE_BOUNDARY,
    REPORT_FORMAT,
    MatrixReport,
    by_version,
    report_json,
)
from agentrig.runtime.matrix.value_changes import merged
from agentrig.runtime.matrix.version_selection import Resolution
from agentrig.runtime.reports.render import write_matrix_html
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.runfolder.jsonio import BeforeReplace

__all__ = ["EVIDENCE_BOUNDARY", "REPORT_FORMAT", "MatrixReport", "build_report", "render_markdown", "report_json"]


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
    resolution: Resolution | None = None,
    lock: LockFile | None = None,
) -> MatrixReport:
    """Compare the outputs and write `compatibility.json`, `compatibility.md` and the diffs into `out` (each told to
    `record` before it replaces anything: the matrix folder's manifest)."""
    if not outputs:
        raise ValueError("build_report needs at least one version's output")
    masked: set[str] = set()
    scenarios, regressions = compare_outputs(outputs, out, record=record, masked_keys=masked)
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
        resolution=resolution,
        lock=lock,
        masked_keys=tuple(sorted(masked)),
    )
    jsonio.write_atomic(
        out / "compatibility.json", jsonio.dumps(report_json(report), pretty=True), before_replace=record
    )
    jsonio.write_atomic(out / "compatibility.md", render_markdown(report).encode(), before_replace=record)
    write_matrix_html(out, before_replace=record)  # compatibility.html, from the files just written
    return report


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
    lines = [
        f"- **Result:** {result}",
        f"- **Canonical histories:** {canonical}",
        f"- **Raw pydantic-ai dumps:** {raw}",
    ]
    if report.not_built:
        named = ", ".join(output.version for output in report.not_built)
        lines.insert(
            0,
            f"- **Not built:** the environment of {named} could not be built (exit 3); nothing ran there "
            "(the error and its build log are below).",
        )
    return lines


def _versions_table(report: MatrixReport) -> list[str]:
    rows: list[list[str]] = []
    for output in report.versions:
        label = f"{output.version} (baseline)" if output.version == report.baseline else output.version
        counts = Counter(output.statuses.values())
        note = "" if output.error is None else f"agentrig run failed (exit {output.exit_code})"
        if output.build_error is not None:
            note = "environment not built"
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
        values = merged(value for item in changed for value in item.raw_changes[version].changed_values)
        if values:
            shown = sorted(values.items(), key=lambda pair: (-pair[1], pair[0]))
            more = f", and {len(shown) - 12} more (compatibility.json)" if len(shown) > 12 else ""
            lines.append("  - changed values: " + ", ".join(f"`{text}` ({count})" for text, count in shown[:12]) + more)
        other = [item.name for item in changed if item.raw_changes[version].summary() == "values differ"]
        if other:
            lines.append("  - values only: " + ", ".join(f"`{name}`" for name in other))
    lines += [
        "",
        "Counts in parentheses are numbers of scenarios. Unified diffs, per scenario and version, are in "
        f"`{report.out}/diffs/<scenario>/<version>.<file>.diff`.",
    ]
    return lines


def _masking_text(report: MatrixReport) -> str:
    keys = ", ".join(f"`{key}`" for key in report.masked_keys) or "none"
    shapes = ", ".join(description for description, _ in PER_RUN_SHAPES)
    return (
        f"the values of keys known to be per run ({', '.join(sorted(VOLATILE_KEYS))}), of keys named like a clock or "
        f"a duration (`*_timestamp`, `*_at`, `duration`, `*_duration`, `elapsed`, `latency`), and any value that is "
        f"{shapes}. Masked in this matrix: "
        f"{keys}."
    )


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
        *_judged_section(report),
        "## What changed",
        "",
        "Canonical histories are compared with the baseline model's after masking values that change on every run "
        f"({', '.join(sorted(VOLATILE_KEYS))}); another model answers in its own words, so a difference is expected "
        "and shows how the conversation changed: the unified diffs are in "
        f"`{report.out}/diffs/<scenario>/<model>.history.diff`.",
        "",
    ]


def _judged_section(report: MatrixReport) -> list[str]:
    """Each judged check's score (and, repeated, its pass rate with its interval) per model; nothing without one."""
    table = judged_table([output.version for output in report.versions], {o.version: o.judged for o in report.versions})
    if not table:
        return []
    intro = (
        "Each judged check's score on each model: its mean (min-max over the runs) and, under `--repeat`, how many "
        "runs it passed with the 95% Wilson interval of that rate. Intervals that do not overlap are a difference the "
        "runs' sampling does not explain."
    )
    return ["## Judged checks", "", intro, "", *table, ""]


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
        *resolution_lines(report.resolution, report.lock),
        *environment_markdown(report.versions, report.scenarios, report.lock),
        "## Evidence boundary",
        "",
        EVIDENCE_BOUNDARY,
        "",
        "Canonical histories (`history.json`) and raw pydantic-ai dumps (`pydantic_ai_dump.json`) are compared with "
        f"the baseline after masking values that change on every run: {_masking_text(report)}",
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
        for item in report.regressions:
            lines += regression_lines(item, by_version(report), report.versions[0])
        lines.append("")
    failed_runs = [output for output in report.versions if output.error is not None and output.build_error is None]
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
