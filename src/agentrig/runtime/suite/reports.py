"""Run outputs: `report.json` (a versioned contract), `junit.xml`, `summary.md`, and
`merge` of shard outputs into one report.

    OUT/
      report.json                       {"format": "agentrig.report/1", ...}   (REPORT_KEYS below)
      junit.xml                         one <testsuite>, one <testcase> per scenario
      summary.md                        a table + failure details (also appended to $GITHUB_STEP_SUMMARY by the CLI)
      scenarios/<name>/...              one folder per scenario (`scenario_files`)

JUnit and markdown are rendered from the report dict, never from live objects, so `merge` renders
exactly what a single run would have.
"""

from __future__ import annotations

import errno
import os
import platform
import shutil
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from agentrig import __version__
from agentrig.errors import InputError, UsageError
from agentrig.runtime.history.jsonio import dumps, read_json_file, write_atomic
from agentrig.runtime.history.redaction import redact_json
from agentrig.runtime.history.run_records import RunError, ScenarioResult, TurnRecord
from agentrig.runtime.suite.merge_checks import check_shard_set, contained_path
from agentrig.runtime.suite.outcome import SuiteResult
from agentrig.runtime.suite.report_shape import check_report_shape
from agentrig.runtime.suite.scenario_files import check_json

__all__ = [
    "REPORT_FORMAT",
    "append_step_summary",
    "describe_check",
    "load_report",
    "merge_reports",
    "render_junit",
    "render_summary",
    "report_from_suite",
    "write_reports",
]

REPORT_FORMAT = "agentrig.report/1"
REPORT_KEYS = frozenset(
    {
        "format",
        "agentrig_version",
        "pydantic_ai_version",
        "python_version",
        "model",
        "shard",
        "interrupted",
        "merged_from",
        "summary",
        "scenarios",
    }
)
"""Every key `report.json` may have at the top level (`merged_from` only on merged reports)."""
SUMMARY_KEYS = frozenset({"passed", "failed", "error", "skipped", "total", "duration_s"})
SCENARIO_KEYS = frozenset(
    {"id", "name", "path", "status", "tags", "duration_s", "error", "usage", "turns", "checks", "output_dir"}
)
TURN_KEYS = frozenset(
    {
        "index",
        "request_id",
        "prompt",
        "output",
        "output_type",
        "output_json",
        "instructions",
        "usage",
        "error",
        "interrupted",
        "duration_s",
    }
)
CHECK_KEYS = frozenset({"name", "passed", "expected", "actual", "detail", "skipped_reason"})
ERROR_KEYS = frozenset({"kind", "message"})
STATUSES = ("passed", "failed", "error", "skipped")


# --------------------------------------------------------------------------------------------
# the output directory
# --------------------------------------------------------------------------------------------


def prepare_out_dir(out_dir: Path) -> None:
    """Make `out_dir` ready for a merge: create it, or clear the `scenarios/` of an earlier agentrig run.

    A non-empty directory without `report.json` is not ours: refuse rather than mix files into it.
    """
    _ensure_ours(out_dir)
    try:
        stale = out_dir / "scenarios"
        if stale.is_dir():
            shutil.rmtree(stale)
    except OSError as error:
        raise UsageError(f"--out {out_dir}: cannot write there ({error.strerror or error})") from None


def prepare_run_out_dir(out_dir: Path) -> frozenset[str]:
    """Make `out_dir` ready for a run, keeping the scenario folders of an earlier run: the names of those folders.

    A run writes each of its scenarios over its old folder (`scenario_files`) and removes the rest
    (`scenario_files.remove_scenario_folders`): overwriting a file costs a tenth of deleting and creating it again.
    """
    _ensure_ours(out_dir)
    if (out_dir / "scenarios").is_symlink():  # a run writes inside OUT only, never where a link points
        raise UsageError(f"--out {out_dir}: scenarios/ is a link; remove it or choose another directory")
    try:
        with os.scandir(out_dir / "scenarios") as entries:
            return frozenset(entry.name for entry in entries)
    except FileNotFoundError:
        return frozenset()
    except OSError as error:
        raise UsageError(f"--out {out_dir}: cannot write there ({error.strerror or error})") from None


def _ensure_ours(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir}: exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / "report.json").is_file():
        raise UsageError(
            f"--out {out_dir}: the directory is not empty and holds no agentrig report.json; choose another"
        )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if not os.access(out_dir, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, "permission denied")
    except OSError as error:
        raise UsageError(f"--out {out_dir}: cannot write there ({error.strerror or error})") from None


# --------------------------------------------------------------------------------------------
# report.json
# --------------------------------------------------------------------------------------------


def _pydantic_ai_version() -> str | None:
    for distribution in ("pydantic-ai-slim", "pydantic-ai"):
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
    return None


def _error_json(error: RunError | None) -> dict[str, Any] | None:
    return None if error is None else {"kind": error.kind, "message": error.message}


def _turn_json(turn: TurnRecord) -> dict[str, Any]:
    return {
        "index": turn.index,
        "request_id": turn.request_id,
        "prompt": turn.prompt,
        "output": turn.output,
        "output_type": turn.output_type,
        "output_json": turn.output_json,
        "instructions": turn.instructions,
        "usage": turn.usage.to_json(),
        "error": _error_json(turn.error),
        "interrupted": turn.interrupted,
        "duration_s": round(turn.duration_s, 4),
    }


def scenario_json(result: ScenarioResult) -> dict[str, Any]:
    """One scenario's entry in report.json (SCENARIO_KEYS)."""
    return {
        "id": f"{result.path}::{result.name}",
        "name": result.name,
        "path": result.path,
        "status": result.status,
        "tags": list(result.tags),
        "duration_s": round(result.duration_s, 4),
        "error": _error_json(result.error),
        "usage": result.usage.to_json(),
        "turns": [_turn_json(turn) for turn in result.turns],
        "checks": [check_json(check) for check in result.checks],
        "output_dir": f"scenarios/{result.name}",
    }


def summarize(scenarios: Sequence[Mapping[str, Any]], duration_s: float) -> dict[str, Any]:
    """The `summary` block: counts per status, total, wall time."""
    counts = dict.fromkeys(STATUSES, 0)
    for scenario in scenarios:
        counts[scenario["status"]] += 1
    return {**counts, "total": len(scenarios), "duration_s": round(duration_s, 3)}


def report_from_suite(suite: SuiteResult) -> dict[str, Any]:
    """The report.json document of a run."""
    scenarios = [scenario_json(result) for result in suite.results]
    return {
        "format": REPORT_FORMAT,
        "agentrig_version": __version__,
        "pydantic_ai_version": _pydantic_ai_version(),
        "python_version": platform.python_version(),
        "model": suite.model,
        "shard": None if suite.shard is None else {"index": suite.shard[0], "count": suite.shard[1]},
        "interrupted": suite.interrupted,
        "summary": summarize(scenarios, suite.duration_s),
        "scenarios": scenarios,
    }


def write_reports(out_dir: Path, suite: SuiteResult) -> dict[str, Any]:
    """Write report.json, junit.xml and summary.md for a run; returns the report."""
    return write_report_files(out_dir, report_from_suite(suite))


def write_report_files(out_dir: Path, report: Mapping[str, Any]) -> dict[str, Any]:
    """Write the three report files of a report document; returns the document as written (redacted)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    # Redacted once, as data: junit.xml and summary.md are rendered from the redacted document.
    redacted: dict[str, Any] = redact_json(dict(report))
    write_atomic(out_dir / "report.json", dumps(redacted, pretty=True))
    write_atomic(out_dir / "junit.xml", render_junit(redacted))
    write_atomic(out_dir / "summary.md", render_summary(redacted).encode("utf-8"))
    return redacted


def load_report(directory: Path) -> dict[str, Any]:
    """Read `directory/report.json`, checking its format tag."""
    path = directory / "report.json"
    if not path.is_file():
        raise InputError(f"{directory}: no report.json (not an agentrig run output directory)")
    data = read_json_file(path)
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise InputError(f"{path}: expected format {REPORT_FORMAT!r}, found {found!r}")
    check_report_shape(data, path)
    return data


# --------------------------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------------------------


def _short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else dumps(value).decode("utf-8")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_check(check: Mapping[str, Any]) -> str:
    """A failed check as text: name, expected, actual, then the detail (often a diff)."""
    lines = [check["name"]]
    if check.get("expected") is not None:
        lines.append(f"  expected: {_short(check['expected'])}")
    if check.get("actual") is not None or check.get("expected") is not None:
        lines.append(f"  actual:   {_short(check.get('actual'))}")
    if check.get("detail"):
        lines.append("  " + check["detail"].rstrip("\n").replace("\n", "\n  "))
    return "\n".join(lines)


def _failed_checks(scenario: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [check for check in scenario["checks"] if not check["passed"]]


def _skip_reason(scenario: Mapping[str, Any]) -> str:
    reasons = [check["skipped_reason"] for check in scenario["checks"] if check.get("skipped_reason")]
    return reasons[0] if reasons else "skipped"


def _classname(path: str) -> str:
    """`scenarios/tools/roundtrip.yaml` -> `scenarios.tools.roundtrip` (JUnit viewers group by it)."""
    stem = path.rsplit(".", 1)[0] if path.endswith((".yaml", ".yml")) else path
    return stem.strip("./").replace("/", ".")


def render_junit(report: Mapping[str, Any]) -> bytes:
    """JUnit XML: one testsuite, one testcase per scenario; failures carry expected and actual."""
    summary = report["summary"]
    suite_attributes = {
        "name": "agentrig",
        "tests": str(summary["total"]),
        "failures": str(summary["failed"]),
        "errors": str(summary["error"]),
        "skipped": str(summary["skipped"]),
        "time": f"{summary['duration_s']:.3f}",
    }
    root = ElementTree.Element("testsuites", suite_attributes)
    suite = ElementTree.SubElement(root, "testsuite", suite_attributes)
    properties = ElementTree.SubElement(suite, "properties")
    for key in ("agentrig_version", "pydantic_ai_version", "python_version", "model"):
        if report.get(key) is not None:
            ElementTree.SubElement(properties, "property", {"name": key, "value": str(report[key])})
    for scenario in report["scenarios"]:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            {
                "classname": _classname(scenario["path"]),
                "name": scenario["name"],
                "file": scenario["path"],
                "time": f"{scenario['duration_s']:.3f}",
            },
        )
        status = scenario["status"]
        failed = _failed_checks(scenario)
        if status == "failed":
            text = "\n\n".join(describe_check(check) for check in failed)
            message = f"{len(failed)} check(s) failed: {failed[0]['name']}" if failed else "failed"
            ElementTree.SubElement(case, "failure", {"message": message, "type": "expectation"}).text = text
        elif status == "error":
            error = scenario.get("error") or {"kind": "error", "message": "error"}
            element = ElementTree.SubElement(case, "error", {"message": error["message"], "type": error["kind"]})
            element.text = "\n\n".join(describe_check(check) for check in failed) or error["message"]
        elif status == "skipped":
            ElementTree.SubElement(case, "skipped", {"message": _skip_reason(scenario)})
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


_STATUS_MARK = {"passed": "✅ passed", "failed": "❌ failed", "error": "💥 error", "skipped": "⏭️ skipped"}


def summary_line(summary: Mapping[str, Any]) -> str:
    """`N passed, N failed, N skipped` (+ `, N errors` when there are any): the line CI systems read."""
    line = f"{summary['passed']} passed, {summary['failed']} failed, {summary['skipped']} skipped"
    if summary.get("error"):
        line += f", {summary['error']} error{'s' if summary['error'] != 1 else ''}"
    return line


def render_summary(report: Mapping[str, Any]) -> str:
    """Markdown: a headline, a table of every scenario, then the details of each failure."""
    summary = report["summary"]
    facts = [f"pydantic-ai {report.get('pydantic_ai_version') or '?'}", f"agentrig {report.get('agentrig_version')}"]
    if report.get("model"):
        facts.append(f"model `{report['model']}`")
    if report.get("shard"):
        facts.append(f"shard {report['shard']['index']}/{report['shard']['count']}")
    if report.get("merged_from"):
        facts.append(f"merged from {len(report['merged_from'])} outputs")
    if report.get("interrupted"):
        facts.append("**interrupted**")
    facts.append(f"{summary['duration_s']:.2f} s")
    lines = [
        f"## agentrig: {summary_line(summary)}",
        "",
        " · ".join(facts),
        "",
        "| Status | Scenario | File | Requests | Tokens in / out | Time |",
        "|---|---|---|---:|---:|---:|",
    ]
    for scenario in report["scenarios"]:
        usage = scenario["usage"]
        lines.append(
            f"| {_STATUS_MARK[scenario['status']]} | `{scenario['name']}` | {scenario['path']} | {usage['requests']} "
            f"| {usage['input_tokens']} / {usage['output_tokens']} | {scenario['duration_s']:.2f} s |"
        )
    problems = [s for s in report["scenarios"] if s["status"] in ("failed", "error")]
    if problems:
        lines += ["", "### Failures"]
    for scenario in problems:
        lines += ["", f"#### `{scenario['name']}` ({scenario['path']})", ""]
        if scenario.get("error"):
            lines.append(f"- **error** `{scenario['error']['kind']}`: {scenario['error']['message']}")
        for check in _failed_checks(scenario):
            expected = f" expected `{_short(check['expected'], 120)}`" if check.get("expected") is not None else ""
            actual = f", got `{_short(check['actual'], 120)}`" if expected or check.get("actual") is not None else ""
            lines.append(f"- **{check['name']}**{expected}{actual}")
            if check.get("detail"):
                fence = "```diff" if check["detail"].startswith("---") else "```text"
                detail_lines = ["  " + line for line in check["detail"].rstrip("\n").splitlines()]
                lines += ["", "  " + fence, *detail_lines, "  ```"]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# merge
# --------------------------------------------------------------------------------------------


def merge_reports(directories: Iterable[Path], out_dir: Path, *, allow_partial: bool = False) -> dict[str, Any]:
    """Combine shard output directories into one: one report (scenarios sorted by id) and every scenario's files.

    The merged `duration_s` is the slowest input's (shards run side by side). Inputs must come from the same
    pydantic-ai version and may not share a scenario; shards must be a complete set unless `allow_partial`
    (`merge_checks`), and no scenario's `output_dir` may lead outside its input or `out_dir`.
    """
    sources = [Path(d) for d in directories]
    if not sources:
        raise UsageError("merge needs at least one run output directory")
    if any(source.resolve() == out_dir.resolve() for source in sources):
        raise UsageError(f"--out {out_dir} is also an input; choose another directory")
    reports = [load_report(source) for source in sources]
    versions = {report.get("pydantic_ai_version") for report in reports}
    if len(versions) > 1:
        raise InputError(f"cannot merge runs of different pydantic-ai versions: {sorted(map(str, versions))}")
    check_shard_set(sources, reports, allow_partial=allow_partial)
    owner: dict[str, Path] = {}
    scenarios: list[dict[str, Any]] = []
    copies: list[tuple[Path, Path]] = []
    for source, report in zip(sources, reports, strict=True):
        for scenario in report["scenarios"]:
            if scenario["id"] in owner:
                raise InputError(f"scenario {scenario['id']} is in both {owner[scenario['id']]} and {source}")
            owner[scenario["id"]] = source
            scenarios.append(scenario)
            # Checked before anything is written: a report is input, its paths may point anywhere.
            relative, named = scenario.get("output_dir"), (source / "report.json", scenario["id"])
            copies.append((contained_path(source, relative, *named), contained_path(out_dir, relative, *named)))
    scenarios.sort(key=lambda scenario: scenario["id"])
    prepare_out_dir(out_dir)
    for source_dir, target_dir in copies:
        if source_dir.is_dir():
            # Links are copied as links, never followed: a link in an input does not pull outside files in.
            shutil.copytree(source_dir, target_dir, symlinks=True, dirs_exist_ok=True)
    first = reports[0]
    merged = {
        "format": REPORT_FORMAT,
        "agentrig_version": __version__,
        "pydantic_ai_version": first.get("pydantic_ai_version"),
        "python_version": first.get("python_version"),
        "model": first.get("model"),
        "shard": None,
        "interrupted": any(report.get("interrupted") for report in reports),
        "merged_from": [str(source) for source in sources],
        "summary": summarize(scenarios, max(float(report["summary"]["duration_s"]) for report in reports)),
        "scenarios": scenarios,
    }
    return write_report_files(out_dir, merged)


def append_step_summary(out_dir: Path) -> None:
    """On GitHub Actions (`$GITHUB_STEP_SUMMARY` set), append summary.md to the job's summary page."""

    target = os.environ.get("GITHUB_STEP_SUMMARY")
    summary = out_dir / "summary.md"
    if target and summary.is_file():
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(summary.read_text(encoding="utf-8"))
        except OSError as error:
            raise UsageError(
                f"$GITHUB_STEP_SUMMARY {target}: cannot append the summary ({error.strerror or error}); "
                f"the reports are in {out_dir}"
            ) from None
