"""Run outputs: `report.json` (a versioned contract), `junit.xml`, `summary.md`, and
`merge` of shard outputs into one report.

    OUT/
      report.json                       {"format": "agentrig.report/1", ...}   (REPORT_KEYS below)
      junit.xml                         one <testsuite>, one <testcase> per scenario
      summary.md                        a table + failure details (also appended to $GITHUB_STEP_SUMMARY by the CLI)
      report.html                       the run in one self-contained page (`agentrig.runtime.reports`)
      scenarios/<name>/...              one folder per scenario (`scenario_files`)

A run's three files are written by `report_files`, one scenario at a time: the report is never held whole.
"""

from __future__ import annotations

import os
import platform
import shutil
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentrig import __version__
from agentrig.errors import InputError, UsageError
from agentrig.runtime.checks.outcome import SuiteResult
from agentrig.runtime.history.redaction import redact_json
from agentrig.runtime.history.run_records import RunError, ScenarioResult, SimulatedTurn, TurnRecord
from agentrig.runtime.reports.merge_checks import (
    FolderFiles,
    check_scenario_entries,
    check_shard_set,
    contained_path,
    folder_files,
)
from agentrig.runtime.reports.repeat_baseline import merged_baseline
from agentrig.runtime.reports.report_files import RUN_LAYOUT, HtmlOptions, report_files
from agentrig.runtime.reports.report_shape import check_report_shape, installed_pydantic_ai_version
from agentrig.runtime.reports.totals import RunTotals, cost_json
from agentrig.runtime.runfolder.jsonio import read_json_file
from agentrig.runtime.runfolder.owned_folder import OwnedFolder
from agentrig.runtime.suite.outputs.scenario_files import check_json, prepare_run_out_dir, write_folder
from agentrig.runtime.suite.processes import stop_signals
from agentrig.runtime.suite.repeats import merged_repeats

__all__ = [
    "REPORT_FORMAT",
    "append_step_summary",
    "entries_report",
    "files_json",
    "load_report",
    "mark_run_started",
    "merge_reports",
    "prepare_run_out_dir",
    "report_entries",
    "report_head",
    "scenario_json",
    "write_report_files",
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
        "partial",
        "summary",
        "totals",
        "repeats",
        "scenarios",
    }
)
"""Every key `report.json` may have at the top level (`merged_from` and `partial` only on merged reports)."""
REPEATS_KEYS = frozenset({"count", "default_pass_rate", "confidence", "flaky", "baseline", "scenarios"})
"""The keys of report.json's `repeats` block (`--repeat N`; null without)."""
REPEAT_SCENARIO_KEYS = frozenset(
    {
        "id",
        "name",
        "path",
        "runs",
        "passed",
        "failed",
        "error",
        "skipped",
        "pass_fraction",
        "interval",
        "required_rate",
        "verdict",
        "flaky",
        "usage",
        "cost_usd",
        "duration_s",
        "score",
        "judged",
        "baseline",
    }
)
"""The keys of each scenario in the `repeats` block."""
SUMMARY_KEYS = frozenset({"passed", "failed", "error", "skipped", "total", "duration_s"})
SCENARIO_KEYS = frozenset(
    {
        "id",
        "name",
        "path",
        "status",
        "tags",
        "duration_s",
        "error",
        "usage",
        "cost",
        "attempts",
        "warnings",
        "turns",
        "checks",
        "score",
        "output_dir",
        "files",
    }
)
FILES_KEYS = frozenset({"history", "session", "usage", "events", "pydantic_ai_dump", "ui_answers", "subagents"})
"""The keys of a scenario entry's `files`: each file its folder holds, relative to the report (only those written;
`subagents` a list)."""
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
        "simulated",
        "duration_s",
    }
)
CHECK_KEYS = frozenset({"name", "passed", "expected", "actual", "detail", "skipped_reason"})
ERROR_KEYS = frozenset({"kind", "message"})
STATUSES = ("passed", "failed", "error", "skipped")
_HTML = HtmlOptions()


# --------------------------------------------------------------------------------------------
# the output directory
# --------------------------------------------------------------------------------------------


def prepare_out_dir(out_dir: Path) -> OwnedFolder:
    """Claim `out_dir` for a merge (`OwnedFolder.claim`: refused unless agentrig can prove every file it would replace
    or remove there its own); what an earlier merge or run wrote there and this one does not goes at `finish`."""
    return OwnedFolder.claim(out_dir, label=f"--out {out_dir}", layout=RUN_LAYOUT, kept=_MERGE_STOPPED)


def mark_run_started(folder: OwnedFolder, suite: SuiteResult, *, html: HtmlOptions | None = _HTML) -> None:
    """Replace an earlier run's reports before this run writes anything else into the folder: report.json, junit.xml,
    summary.md (and report.html) say this run was interrupted with no scenario reported (`suite`: an empty,
    interrupted run), until the run writes its own. A run killed outright (SIGKILL, the OOM killer, an agent's
    os.abort() at -j 1) or stopped by a full disk leaves those, never an earlier run's green reports beside its own
    half-written folders. A full disk here leaves the earlier reports as they were, and nothing else touched."""
    with report_files(folder.path, report_head(suite), html=html, owner=folder, kept=_NOT_STARTED):
        pass


_NOT_STARTED = "none was replaced, and the run stopped before it ran a scenario"
_NOT_WRITTEN = (
    "none was replaced: the reports say the run was interrupted before it reported any scenario (they replaced the "
    "earlier run's reports when it started)"
)


# --------------------------------------------------------------------------------------------
# report.json
# --------------------------------------------------------------------------------------------


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
        "simulated": _simulated_json(turn.simulated),
        "duration_s": round(turn.duration_s, 4),
    }


def _simulated_json(simulated: SimulatedTurn | None) -> dict[str, Any] | None:
    """Which turn of the scenario's file ran this one (0-based), its place in the conversation, who wrote its
    message, and on the conversation's last turn why it ended."""
    if simulated is None:
        return None
    return {
        "scenario_turn": simulated.turn,
        "exchange": simulated.exchange,
        "user": simulated.user,
        "ended": simulated.ended,
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
        "cost": cost_json(result.cost),
        "attempts": result.attempts.to_json() if result.attempts is not None else None,
        "warnings": [record.to_json() for record in result.warnings],
        "turns": [_turn_json(turn) for turn in result.turns],
        "checks": [check_json(check) for check in result.checks],
        "score": result.score.to_json() if result.score is not None else None,
        "output_dir": f"scenarios/{result.name}",
        "files": files_json(result),
    }


def files_json(result: ScenarioResult) -> dict[str, Any]:
    """A scenario entry's `files` (FILES_KEYS): where each file its folder holds is, relative to the report.
    A sub-agent's histories are a list, in the order they were written."""
    folder = f"scenarios/{result.name}"
    files: dict[str, Any] = {}
    subagents: list[str] = []
    for name in result.files:
        if name.startswith("subagents/"):
            subagents.append(f"{folder}/{name}")
        else:
            files[name.partition(".")[0]] = f"{folder}/{name}"
    if subagents:
        files["subagents"] = subagents
    return files


def summarize(scenarios: Sequence[Mapping[str, Any]], duration_s: float) -> dict[str, Any]:
    """The `summary` block of these report entries: counts per status, total, wall time."""
    counts: dict[str, int] = dict.fromkeys(STATUSES, 0)
    for scenario in scenarios:
        counts[scenario["status"]] += 1
    return _summary(counts, len(scenarios), duration_s)


def _summary(counts: Mapping[str, int], total: int, duration_s: float) -> dict[str, Any]:
    per_status = {status: counts.get(status, 0) for status in STATUSES}
    return {**per_status, "total": total, "duration_s": round(duration_s, 3)}


def report_head(suite: SuiteResult) -> dict[str, Any]:
    """report.json of a run without its "scenarios" (streamed after it, `report_files`)."""
    return {
        "format": REPORT_FORMAT,
        "agentrig_version": __version__,
        "pydantic_ai_version": installed_pydantic_ai_version(),
        "python_version": platform.python_version(),
        "model": suite.model,
        "shard": None
        if suite.shard is None
        else {"index": suite.shard[0], "count": suite.shard[1], "plan": suite.shard_plan},
        "interrupted": suite.interrupted,
        "summary": _summary(suite.counts, len(suite.results), suite.duration_s),
        "totals": dict(suite.totals) if suite.totals is not None else RunTotals().to_json(),
        "repeats": dict(suite.repeats) if suite.repeats is not None else None,
    }


def report_entries(suite: SuiteResult, *, statuses: Collection[str] = STATUSES) -> Iterator[dict[str, Any]]:
    """The report.json entries of a run's scenarios with these statuses, redacted as written, one at a time."""
    for result in suite.results:
        if result.status in statuses:
            yield redact_json(scenario_json(result))


def write_reports(
    out_dir: Path, suite: SuiteResult, *, html: HtmlOptions | None = _HTML, owner: OwnedFolder | None = None
) -> None:
    """Write report.json, junit.xml, summary.md (and report.html unless `html` is None) for a run, one scenario at
    a time; `owner` records them in the folder's manifest (a full disk then leaves what `mark_run_started` wrote).
    A Ctrl-C or SIGTERM meanwhile stops the writing between two scenarios (`stop_signals.raise_if_stopped`): no file
    is replaced, so report.json stays the one `mark_run_started` wrote, which says the run was interrupted."""
    kept = _NOT_WRITTEN if owner is not None else "none was replaced"
    with report_files(out_dir, report_head(suite), html=html, owner=owner, kept=kept) as add:
        for result in suite.results:
            stop_signals.raise_if_stopped()
            add(scenario_json(result))


def write_report_files(out_dir: Path, report: Mapping[str, Any], *, owner: OwnedFolder | None = None) -> dict[str, Any]:
    """Write the report files of a whole report document; returns the document as written (redacted)."""
    head = {key: value for key, value in report.items() if key != "scenarios"}
    with report_files(out_dir, head, html=_HTML, owner=owner) as add:  # merge: report.html over the merged folders
        scenarios = [add(entry) for entry in report["scenarios"]]
    return {**redact_json(head), "scenarios": scenarios}


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
# merge
# --------------------------------------------------------------------------------------------


def merge_reports(directories: Iterable[Path], out_dir: Path, *, allow_partial: bool = False) -> dict[str, Any]:
    """Combine shard output directories into one: one report (scenarios sorted by id) and every scenario's files.

    The merged `duration_s` is the slowest input's (shards run side by side). Inputs must come from the same
    pydantic-ai version and may not share a scenario; shards must be a complete set unless `allow_partial`
    (`merge_checks`); every scenario's name, id and `output_dir` must be what a run writes, and an input's scenario
    folders may hold only folders and regular files (never a link: it could pull an outside file in).
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
    # A merge of a partial merge is partial too: what the earlier merge lacked is still missing.
    partial = check_shard_set(sources, reports, allow_partial=allow_partial) or next(
        (report["partial"] for report in reports if report.get("partial")), None
    )
    owner: dict[str, Path] = {}
    scenarios: list[dict[str, Any]] = []
    copies: list[tuple[str, FolderFiles]] = []
    for source, report in zip(sources, reports, strict=True):
        check_scenario_entries(report, source / "report.json")
        for scenario in report["scenarios"]:
            if scenario["id"] in owner:
                raise InputError(f"scenario {scenario['id']} is in both {owner[scenario['id']]} and {source}")
            owner[scenario["id"]] = source
            scenarios.append(scenario)
            # Checked before anything is written: a report is input, its paths may point anywhere.
            # It is `scenarios/NAME` (`check_scenario_entries`); a link inside --out is refused by `prepare_out_dir`.
            relative, named = scenario["output_dir"], (source / "report.json", scenario["id"])
            copies.append((relative, folder_files(contained_path(source, relative, *named))))
    scenarios.sort(key=lambda scenario: scenario["id"])
    # Compared again with the shards' baseline, or refused (a mix of baselines), before anything is written.
    repeats = merged_baseline(reports, merged_repeats(reports, scenarios))
    folder = prepare_out_dir(out_dir)
    for relative, files in copies:
        if files.exists:
            write_folder(out_dir, relative, files.read(), subfolders=files.subfolders, kept=_MERGE_STOPPED)
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
        "partial": partial,
        "summary": summarize(scenarios, max(float(report["summary"]["duration_s"]) for report in reports)),
        "totals": _merged_totals(reports, scenarios),
        "repeats": repeats,
        "scenarios": scenarios,
    }
    written = write_report_files(out_dir, merged, owner=folder)
    folder.finish()  # what an earlier merge or run left there and this merge did not write again
    return written


def _merged_totals(reports: Sequence[Mapping[str, Any]], scenarios: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    budgets = [report["totals"] for report in reports if isinstance(report.get("totals"), dict)]
    totals = RunTotals(max_cost_usd=next((b["max_cost_usd"] for b in budgets if b.get("max_cost_usd")), None))
    totals.not_run_for_budget = sum(int(b.get("not_run_for_budget") or 0) for b in budgets)
    return totals.add_all(scenarios).to_json()


_MERGE_STOPPED = "the merge stopped before writing its reports; the input directories are unchanged"


def append_step_summary(out_dir: Path) -> None:
    """On GitHub Actions (`$GITHUB_STEP_SUMMARY` set), append summary.md to the job's summary page."""

    target = os.environ.get("GITHUB_STEP_SUMMARY")
    summary = out_dir / "summary.md"
    if target and summary.is_file():
        try:
            with open(target, "ab") as handle, open(summary, "rb") as source:
                shutil.copyfileobj(source, handle)  # a summary of 10,000 scenarios is megabytes: not read whole
        except OSError as error:
            raise UsageError(
                f"$GITHUB_STEP_SUMMARY {target}: cannot append the summary ({error.strerror or error}); "
                f"the reports are in {out_dir}"
            ) from None


def entries_report(
    entries: Sequence[Mapping[str, Any]], *, duration_s: float, model: str | None = None, interrupted: bool = False
) -> dict[str, Any]:
    """report.json of scenarios whose entries (`scenario_json`) a front end gathered itself (the pytest plugin:
    from every pytest-xdist worker), sorted by id as a run's are."""
    head = report_head(SuiteResult(results=(), duration_s=duration_s, model=model, interrupted=interrupted))
    scenarios = sorted(entries, key=lambda entry: entry["id"])
    totals = RunTotals().add_all(scenarios).to_json()
    return {**head, "summary": summarize(scenarios, duration_s), "totals": totals, "scenarios": scenarios}
