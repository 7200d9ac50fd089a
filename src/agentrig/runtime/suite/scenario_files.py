"""One scenario's output folder: what it holds and how it is written.

    OUT/scenarios/<name>/history.json     canonical history, pretty
                         session.json     the session file
                         usage.json       {"turns": [...], "total": {...}, "attempts": {...} (a real model)}
                         pydantic_ai_dump.json   pydantic-ai's own dump of the messages, for version diffs
                         checks.json      every check with expected / actual / detail
                         events.jsonl     the run's events (docs/events.md)
                         subagents/<module.attr>.run<N>.history.json   each run of a scripted sub-agent

Creating a file costs more than serializing it on many file systems (0.15-0.3 ms on the 2-core CI machine,
six files and a folder per scenario), so each is one `mkdir` or one open/write/close and nothing more, and a
run writes over the folder an earlier run left instead of deleting it first: overwriting a file costs about
a tenth of deleting it and creating it again. What the earlier run left and this one did not write goes. Writing
them on a background thread was measured and rejected: a thread that needs the GIL back after every system
call waits out the switch interval behind the running scenario, and a 500-scenario run got 1.4x slower.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentrig.runtime.history.events import EVENTS_FILE, Event, dumps_events
from agentrig.runtime.history.jsonio import is_out_of_space, out_of_space
from agentrig.runtime.history.redaction import dumps_redacted, redact_json_bytes
from agentrig.runtime.history.run_records import Check, ScenarioResult
from agentrig.runtime.suite.options import ExecutionLike

__all__ = ["check_json", "remove_scenario_folders", "scenario_dir", "write_scenario_outputs"]


# O_NOFOLLOW: a link an earlier run's folder was given is replaced, never written through. No O_TRUNC: an earlier
# run's file is written over in place and cut to length after, which keeps its disk blocks; truncating first
# frees them and allocates them again, and cost ten times as much on the CI machine's ext4.
_FILE_FLAGS = (
    os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def _write_file(path: Path, data: bytes) -> None:
    """`path.write_bytes(data)` in plain system calls: the buffered file object costs about as much as the write.

    Not `write_atomic`: these are files in agentrig's own output folder (never a user's file), and an fsync per
    file made writing them cost more than running the scenario."""
    try:
        try:
            handle = os.open(path, _FILE_FLAGS, 0o666)
        except OSError:
            if not path.is_symlink():
                raise
            path.unlink()
            handle = os.open(path, _FILE_FLAGS, 0o666)
    except OSError as error:
        if is_out_of_space(error):
            raise out_of_space(path, error, kept=_RUN_STOPPED) from None
        raise
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view) :]
        os.ftruncate(handle, len(data))
    except OSError as error:
        if not is_out_of_space(error):
            raise
        path.unlink(missing_ok=True)  # half an earlier run's file and half this one's would read as either
        raise out_of_space(path, error, kept=_RUN_STOPPED) from None
    finally:
        os.close(handle)


# What a full disk leaves: the reports (report.json, junit.xml, summary.md) are written last, each whole or not at all.
_RUN_STOPPED = "the run stopped before writing its reports (report.json says it was interrupted)"
"""The run replaced an earlier run's report.json with an interrupted one before it wrote anything (`reports.
mark_run_started`), so no green report stands beside the folders this run half replaced."""


class _Folder:
    """One scenario's folder, new or left by an earlier run; what an earlier run left and this one did not
    write is removed by `finish`, so the folder never mixes two runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._written: set[str] = set()
        try:
            try:
                path.mkdir(parents=True)
                self._reused = False
            except FileExistsError:
                if path.is_symlink() or not path.is_dir():
                    path.unlink()
                    path.mkdir()
                self._reused = True
        except OSError as error:
            if is_out_of_space(error):
                raise out_of_space(path, error, kept=_RUN_STOPPED) from None
            raise

    def write(self, name: str, data: bytes) -> None:
        self._written.add(name)
        _write_file(self.path / name, data)

    def subfolder(self, name: str) -> _Folder:
        self._written.add(name)
        return _Folder(self.path / name)

    def finish(self) -> None:
        if not self._reused:
            return
        with os.scandir(self.path) as entries:
            stale = [Path(entry.path) for entry in entries if entry.name not in self._written]
        for path in stale:
            _remove(path)


def _remove(path: Path) -> None:
    """Delete a file, a link (never what it points to) or a whole folder."""
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path)


def remove_scenario_folders(out_dir: Path, names: Iterable[str]) -> None:
    """Delete the folders an earlier run left for scenarios this run did not write."""
    for name in names:
        _remove(scenario_dir(out_dir, name))


def check_json(check: Check) -> dict[str, Any]:
    """A check as JSON (`reports.CHECK_KEYS`), in checks.json and in report.json."""
    return {
        "name": check.name,
        "passed": check.passed,
        "expected": check.expected,
        "actual": check.actual,
        "detail": check.detail,
        "skipped_reason": check.skipped_reason,
    }


def scenario_dir(out_dir: Path, name: str) -> Path:
    """Where one scenario's files go (names are restricted to `[A-Za-z0-9_.-]`, so they are safe here)."""
    return out_dir / "scenarios" / name


def write_scenario_outputs(
    out_dir: Path,
    result: ScenarioResult,
    *,
    execution: ExecutionLike | None = None,
    events: Iterable[Event] = (),
) -> None:
    """Write one scenario's files; history, session and dump only when the scenario ran. API keys never reach the
    disk: every document is redacted value by value before it is serialized."""
    from agentrig.runtime.history.sessions import session_to_json
    from agentrig.runtime.history.wire import history_to_json

    folder = _Folder(scenario_dir(out_dir, result.name))
    usage: dict[str, Any] = {"turns": [turn.usage.to_json() for turn in result.turns], "total": result.usage.to_json()}
    if result.attempts is not None:  # how the requests went on the wire (a real model): attempts, retries, waits
        usage["attempts"] = result.attempts.to_json()
    folder.write("usage.json", dumps_redacted(usage, pretty=True))
    folder.write("checks.json", dumps_redacted([check_json(c) for c in result.checks], pretty=True))
    folder.write(EVENTS_FILE, dumps_events(events, redacted=True))
    if execution is not None:
        folder.write("history.json", dumps_redacted(history_to_json(result.history), pretty=True))
        dump = execution.pydantic_ai_dump
        folder.write("pydantic_ai_dump.json", redact_json_bytes(dump, pretty=dump[:2] in (b"[\n", b"{\n")))
        folder.write("session.json", dumps_redacted(session_to_json(execution.session), pretty=True))
        runs: tuple[Any, ...] = tuple(getattr(execution, "subagent_runs", ()))
        if runs:
            subagents = folder.subfolder("subagents")
            for run in runs:
                name = f"{run.spec.replace(':', '.')}.run{run.run}.history.json"
                subagents.write(name, dumps_redacted(history_to_json(run.messages), pretty=True))
            subagents.finish()
    folder.finish()
