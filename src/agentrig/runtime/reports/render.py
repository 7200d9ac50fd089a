"""report.html from folders already written: a run, a merged shard folder (`agentrig report`), or a matrix folder
(`compatibility.html`, also written by `agentrig matrix` itself).

Reads JSON only (report.json, compatibility.json, the scenario folders, the matrix's diffs): no agent framework.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentrig.errors import AgentrigError, InputError, UsageError
from agentrig.input_files import HISTORY_FILE_LIMIT, InputFileError, read_input_file
from agentrig.runtime.reports.baseline import Baseline
from agentrig.runtime.reports.html import REPORT_HTML, HtmlReport, data_block, page_end, page_start
from agentrig.runtime.reports.repeat_baseline import compare_repeats
from agentrig.runtime.reports.scenario_data import file_href
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.runfolder.jsonio import BeforeReplace
from agentrig.runtime.runfolder.owned_folder import manifest_recorder

__all__ = ["COMPATIBILITY_HTML", "default_output", "render_folder", "write_matrix_html", "write_run_html"]

COMPATIBILITY_HTML = "compatibility.html"
_RUN_FORMAT = "agentrig.report/1"
_MATRIX_FORMAT = "agentrig.compatibility/1"


def default_output(directory: Path) -> Path:
    """Where `agentrig report DIR` writes by default: compatibility.html for a matrix folder, else report.html."""
    return directory / (COMPATIBILITY_HTML if (directory / "compatibility.json").is_file() else REPORT_HTML)


def render_folder(directory: Path, out_file: Path, *, baseline: Path | None = None) -> str:
    """Write the page of `directory` (a run or merged folder, or a matrix folder) to `out_file`; returns its kind."""
    if not directory.is_dir():
        raise InputError(f"{directory}: no such directory")
    # The folder's own page written again: recorded in its manifest, so the next run still proves it agentrig's.
    own_page = out_file.resolve() == default_output(directory).resolve()
    record = manifest_recorder(directory) if own_page else None
    if (directory / "compatibility.json").is_file() and not (directory / "report.json").is_file():
        if baseline is not None:
            raise UsageError("--baseline compares two run folders; a matrix folder already compares its versions")
        write_matrix_html(directory, out_file, before_replace=record)
        return "matrix"
    write_run_html(directory, out_file, baseline=baseline, before_replace=record)
    return "run"


def _read_document(path: Path, expected_format: str, what: str) -> dict[str, Any]:
    if not path.is_file():
        raise InputError(f"{path.parent}: no {path.name} (not an agentrig {what} folder)")
    data = jsonio.read_json_file(path)
    if not isinstance(data, dict) or data.get("format") != expected_format:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise InputError(f"{path}: format: expected {expected_format!r}, found {found!r}")
    return data


def _scenarios(report: Mapping[str, Any], path: Path) -> list[dict[str, Any]]:
    scenarios = report.get("scenarios")
    if not isinstance(scenarios, list):
        raise InputError(f"{path}: scenarios: expected a list")
    for number, entry in enumerate(scenarios):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or "status" not in entry:
            raise InputError(f"{path}: scenarios[{number}]: expected an object with name and status")
        entry.setdefault("id", entry["name"])
    return scenarios


def _files_base(run_dir: Path, out_file: Path) -> str:
    """The run folder as seen from the page, for its links ("" when the page sits in it)."""
    relative = Path(os.path.relpath(run_dir.resolve(), out_file.resolve().parent)).as_posix()
    return "" if relative == "." else relative + "/"


def write_run_html(
    run_dir: Path, out_file: Path, *, baseline: Path | None = None, before_replace: BeforeReplace | None = None
) -> None:
    """report.html of a run folder already written (its report.json and scenario folders)."""
    report = _read_document(run_dir / "report.json", _RUN_FORMAT, "run output")
    entries = _scenarios(report, run_dir / "report.json")
    head = {key: value for key, value in report.items() if key != "scenarios"}
    compared: Baseline | None = None
    if baseline is not None:
        if not baseline.is_dir():
            raise InputError(f"--baseline {baseline}: no such directory")
        baseline_report = _read_document(baseline / "report.json", _RUN_FORMAT, "run output")
        _scenarios(baseline_report, baseline / "report.json")
        compared = Baseline.from_report(baseline, baseline_report)
        if isinstance(head.get("repeats"), dict) and isinstance(baseline_report.get("repeats"), dict):
            # Both repeated: each scenario's pass rate and score against the baseline's (`agentrig run --baseline`
            # writes the same into report.json).
            head["repeats"] = compare_repeats(head["repeats"], baseline_report["repeats"], str(baseline))
    _write(out_file, head, entries, run_dir=run_dir, baseline=compared, before_replace=before_replace)


def _write(
    out_file: Path,
    head: dict[str, Any],
    entries: list[dict[str, Any]],
    *,
    run_dir: Path,
    baseline: Baseline | None,
    before_replace: BeforeReplace | None,
) -> None:
    try:
        with jsonio.open_atomic_files(out_file, before_replace=before_replace) as (handle,):
            page = HtmlReport(
                handle, head, run_dir=run_dir, files_base=_files_base(run_dir, out_file), baseline=baseline
            )
            for entry in entries:
                page.add(entry)
            page.finish()
    except OSError as error:
        raise UsageError(f"{out_file}: cannot write ({error.strerror or error})") from None


# --------------------------------------------------------------------------------------------
# compatibility.html
# --------------------------------------------------------------------------------------------


def _version_entries(directory: Path) -> dict[str, dict[str, Any]]:
    """A version's report entries by scenario name ({} when its run left no readable report)."""
    try:
        report = jsonio.read_json_file(directory / "report.json")
        return {str(entry["name"]): entry for entry in report["scenarios"]}
    except (AgentrigError, KeyError, TypeError):
        return {}


def _read_text(path: Path) -> str | None:
    """A text file of a matrix folder (a diff, a log) for the page; None when it cannot be read or is not a regular
    file of at most `HISTORY_FILE_LIMIT`."""
    try:
        return read_input_file(path, limit=HISTORY_FILE_LIMIT, what="a matrix file").decode("utf-8", errors="replace")
    except (OSError, InputFileError):
        return None


def write_matrix_html(
    matrix_dir: Path, out_file: Path | None = None, *, before_replace: BeforeReplace | None = None
) -> Path:
    """compatibility.html of a matrix folder: a column per version, each scenario's statuses, its failed checks
    per version and its canonical and raw diffs against the baseline."""
    out_file = out_file or matrix_dir / COMPATIBILITY_HTML
    document = _read_document(matrix_dir / "compatibility.json", _MATRIX_FORMAT, "matrix")
    versions = [str(item.get("version")) for item in document.get("versions") or ()]
    # A version whose environment could not be built ran nothing: its folder may hold an earlier matrix's run.
    not_built = {str(item.get("version")) for item in document.get("versions") or () if item.get("build_error")}
    entries = {version: {} if version in not_built else _version_entries(matrix_dir / version) for version in versions}
    base = _files_base(matrix_dir, out_file)
    links = {
        version: file_href(f"{base}{version}/{REPORT_HTML}")
        for version in versions
        if version not in not_built and (matrix_dir / version / REPORT_HTML).is_file()
    }
    rows: list[dict[str, Any]] = []
    keys: set[str] = set()
    try:
        with jsonio.open_atomic_files(out_file, before_replace=before_replace) as (handle,):
            handle.write(page_start(f"agentrig matrix: {', '.join(versions)}"))
            scenarios: list[dict[str, Any]] = document.get("scenarios") or []
            for number, scenario in enumerate(scenarios):
                name = str(scenario.get("name"))
                per_version = {
                    version: _version_cell(entries[version].get(name), f"{base}{version}/") for version in versions
                }
                diffs = [
                    {"file": file_href(base + relative), "name": relative, "text": _read_text(matrix_dir / relative)}
                    for relative in scenario.get("diffs") or []
                ]
                handle.write(
                    data_block(f"ar-s{number}", {"scenario": scenario, "versions": per_version, "diffs": diffs})
                )
                key = name if name not in keys else f"{name}~{number + 1}"
                keys.add(key)
                rows.append(
                    {
                        "i": number,
                        "name": name,
                        "key": key,
                        "tags": scenario.get("tags") or [],
                        "statuses": scenario.get("statuses") or {},
                        "canonical_differs": scenario.get("canonical_differs") or [],
                        "raw_differs": scenario.get("raw_differs") or [],
                    }
                )
            head = {key: value for key, value in document.items() if key != "scenarios"}
            index = {"kind": "matrix", "head": head, "versions": versions, "links": links, "rows": rows, "base": base}
            handle.write(data_block("ar-index", index))
            handle.write(page_end())
    except OSError as error:
        raise UsageError(f"{out_file}: cannot write ({error.strerror or error})") from None
    return out_file


def _version_cell(entry: Mapping[str, Any] | None, base: str) -> dict[str, Any] | None:
    """What the page shows of a scenario on one version: its status, error and failed checks."""
    if entry is None:
        return None
    return {
        "status": entry.get("status"),
        "duration_s": entry.get("duration_s"),
        "error": entry.get("error"),
        "checks": [check for check in entry.get("checks") or () if not check.get("passed")],
        "folder": file_href(f"{base}{entry.get('output_dir') or 'scenarios/' + str(entry.get('name'))}"),
    }
