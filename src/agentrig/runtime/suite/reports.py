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

import errno
import os
import platform
import shutil
import stat
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentrig import __version__
from agentrig.errors import InputError, UsageError
from agentrig.input_files import not_a_regular_file
from agentrig.runtime.checks.outcome import SuiteResult
from agentrig.runtime.history.jsonio import is_out_of_space, out_of_space, read_json_file
from agentrig.runtime.history.redaction import redact_json
from agentrig.runtime.history.run_records import RunError, ScenarioResult, TurnRecord
from agentrig.runtime.reports.merge_checks import check_shard_set, contained_path
from agentrig.runtime.reports.report_files import HtmlOptions, report_files
from agentrig.runtime.reports.report_shape import check_report_shape, installed_pydantic_ai_version
from agentrig.runtime.suite import stop_signals
from agentrig.runtime.suite.scenario_files import check_json

__all__ = [
    "REPORT_FORMAT",
    "append_step_summary",
    "entries_report",
    "load_report",
    "mark_run_started",
    "merge_reports",
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
        "scenarios",
    }
)
"""Every key `report.json` may have at the top level (`merged_from` and `partial` only on merged reports)."""
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
_HTML = HtmlOptions()


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


def mark_run_started(out_dir: Path, suite: SuiteResult) -> None:
    """Replace an earlier run's reports, before this run writes anything else into `out_dir`: report.json says this
    run was interrupted with no scenario reported (`suite`: an empty, interrupted run), and junit.xml and
    summary.md are gone, until the run writes its own. A run killed outright (SIGKILL, the OOM killer, an agent's
    os.abort() at -j 1) leaves that, never an earlier run's green report beside its own half-written folders."""
    with report_files(out_dir, report_head(suite)):
        pass
    for name in ("junit.xml", "summary.md"):
        try:
            (out_dir / name).unlink()
        except FileNotFoundError:
            pass
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
    }


def report_entries(suite: SuiteResult, *, statuses: Collection[str] = STATUSES) -> Iterator[dict[str, Any]]:
    """The report.json entries of a run's scenarios with these statuses, redacted as written, one at a time."""
    for result in suite.results:
        if result.status in statuses:
            yield redact_json(scenario_json(result))


def write_reports(out_dir: Path, suite: SuiteResult, *, html: HtmlOptions | None = _HTML) -> None:
    """Write report.json, junit.xml, summary.md (and report.html unless `html` is None) for a run, one scenario at
    a time. A Ctrl-C or SIGTERM meanwhile stops the writing between two scenarios (`stop_signals.raise_if_stopped`):
    no file is replaced, so report.json stays the one `mark_run_started` wrote, which says the run was interrupted."""
    with report_files(out_dir, report_head(suite), html=html) as add:
        for result in suite.results:
            stop_signals.raise_if_stopped()
            add(scenario_json(result))


def write_report_files(out_dir: Path, report: Mapping[str, Any]) -> dict[str, Any]:
    """Write the three report files of a whole report document; returns the document as written (redacted)."""
    head = {key: value for key, value in report.items() if key != "scenarios"}
    with report_files(out_dir, head, html=_HTML) as add:  # merge: report.html over the merged scenario folders
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
    # A merge of a partial merge is partial too: what the earlier merge lacked is still missing.
    partial = check_shard_set(sources, reports, allow_partial=allow_partial) or next(
        (report["partial"] for report in reports if report.get("partial")), None
    )
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
            _copy_scenario_folder(source_dir, target_dir)
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
        "scenarios": scenarios,
    }
    return write_report_files(out_dir, merged)


def _copy_scenario_folder(source_dir: Path, target_dir: Path) -> None:
    """Copy one input's scenario folder into the merged output; a full disk stops the merge with one line."""

    def copy_file(source: str, target: str) -> object:
        mode = os.lstat(source).st_mode
        if not stat.S_ISREG(mode):  # a FIFO or a device in an input: copying it would never end (`input_files`)
            raise InputError(f"{source}: {not_a_regular_file(mode)}; {_MERGE_STOPPED}")
        try:
            return shutil.copy2(source, target)
        except OSError as error:  # raised past copytree, which would gather it into a list of strings
            if is_out_of_space(error):
                raise out_of_space(target, error, kept=_MERGE_STOPPED) from None
            raise

    try:
        # Links are copied as links, never followed: a link in an input does not pull outside files in.
        shutil.copytree(source_dir, target_dir, symlinks=True, dirs_exist_ok=True, copy_function=copy_file)
    except OSError as error:
        if is_out_of_space(error):
            raise out_of_space(target_dir, error, kept=_MERGE_STOPPED) from None
        raise


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
    return {**head, "summary": summarize(scenarios, duration_s), "scenarios": scenarios}
