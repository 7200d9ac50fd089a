"""One scenario's output folder: what it holds and how it is written.

    OUT/scenarios/<name>/history.json     canonical history, pretty
                         session.json     the session file, its messages by reference: `"history": "history.json"`
                                          (inline when they differ from the history: never written twice)
                         usage.json       {"turns": [...], "total": {...}, "attempts": {...} (a real model)}
                         pydantic_ai_dump.json   pydantic-ai's own dump of the messages, for version diffs
                         events.jsonl     the run's events (docs/events.md)
                         ui_answers.json  a UI turn's answer: the adapter's status and encoded events (UI turns only)
                         subagents/<module.attr>.run<N>.history.json   each run of a scripted sub-agent

The checks are written once, in report.json's entry (its `checks`), which also names each of these files
(`files`, from `ScenarioResult.files`).

Creating a file costs more than serializing it on many file systems (0.15-0.3 ms on the 2-core CI machine,
five files and a folder per scenario), so each is one `mkdir` or one open/write/close and nothing more, and a
run writes over the folder an earlier run left instead of deleting it first: overwriting a file costs about
a tenth of deleting it and creating it again. Each folder's files are recorded in the output folder's manifest
before they are written (`write_folder`); what the earlier run left and this one did not write again is removed
when the run finishes, if still provably agentrig's (`runfolder.owned_folder`). Writing
them on a background thread was measured and rejected: a thread that needs the GIL back after every system
call waits out the switch interval behind the running scenario, and a 500-scenario run got 1.4x slower.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentrig.errors import OutputWriteError
from agentrig.runtime.history.events import EVENTS_FILE, Event, dumps_events
from agentrig.runtime.history.redaction import dumps_redacted, redact_json_bytes
from agentrig.runtime.history.run_records import Check, ScenarioResult
from agentrig.runtime.reports.report_files import RUN_LAYOUT
from agentrig.runtime.runfolder.jsonio import is_out_of_space, out_of_space
from agentrig.runtime.runfolder.output_manifest import append_records, dir_line, file_line, record_file, reset_line
from agentrig.runtime.runfolder.owned_folder import OwnedFolder
from agentrig.runtime.suite.options import ExecutionLike

UI_ANSWERS_FILE = "ui_answers.json"

__all__ = [
    "RUN_STOPPED",
    "UI_ANSWERS_FILE",
    "check_json",
    "prepare_run_out_dir",
    "scenario_dir",
    "scenario_folder",
    "write_folder",
    "write_scenario_outputs",
]


# O_NOFOLLOW: a link is never written through (the run's claim on the folder refused any it found, so one here appeared
# since). No O_TRUNC: an earlier run's file is written over in place and cut to length after, which keeps its disk
# blocks; truncating first frees them and allocates them again, and cost ten times as much on the CI machine's ext4.
_FILE_FLAGS = (
    os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def _write_file(path: Path, data: bytes, kept: str) -> None:
    """`path.write_bytes(data)` in plain system calls: the buffered file object costs about as much as the write.

    Not `write_atomic`: these are files in agentrig's own output folder (never a user's file: the manifest proved
    every file there agentrig's before the run began), and an fsync per file made writing them cost more than
    running the scenario."""
    try:
        handle = os.open(path, _FILE_FLAGS, 0o666)
    except OSError as error:
        if is_out_of_space(error):
            raise out_of_space(path, error, kept=kept) from None
        if error.errno == errno.ELOOP:
            raise _not_ours(path, "is a symbolic link agentrig did not make") from None
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
        raise out_of_space(path, error, kept=kept) from None
    finally:
        os.close(handle)


RUN_STOPPED = "the run stopped before writing its reports (they say it was interrupted)"
"""What a full disk leaves: the run replaced an earlier run's reports with ones marked interrupted before it wrote
anything (`reports.mark_run_started`), so no green report stands beside the folders this run half replaced."""


def prepare_run_out_dir(out_dir: Path) -> OwnedFolder:
    """Claim `out_dir` for a run (`OwnedFolder.claim`: refused unless agentrig can prove every file it would replace
    or remove there its own). The run writes each of its scenarios over its old folder: overwriting a file costs a
    tenth of deleting and creating it again. Here, not in `reports`, so that claiming imports neither the runner nor
    the scenario models: the pytest plugin's controller claims --agentrig-out before pytest-xdist starts workers."""
    return OwnedFolder.claim(out_dir, label=f"--out {out_dir}", layout=RUN_LAYOUT, kept=RUN_STOPPED)


def _not_ours(path: Path, reason: str) -> OutputWriteError:
    return OutputWriteError(
        f"{path}: {reason} (it appeared while the run wrote the folder); the run stopped", path=path
    )


def _make_folder(path: Path, kept: str) -> None:
    try:
        path.mkdir(parents=True)
    except FileExistsError:
        if path.is_symlink() or not path.is_dir():
            raise _not_ours(path, "is not the folder agentrig made there") from None
    except OSError as error:
        if is_out_of_space(error):
            raise out_of_space(path, error, kept=kept) from None
        raise


def write_folder(
    out_dir: Path,
    folder: str,
    files: Sequence[tuple[str, bytes]],
    *,
    subfolders: Sequence[str] = (),
    kept: str = RUN_STOPPED,
) -> None:
    """Write one folder of an output folder (`scenarios/NAME`), over what an earlier run left there.

    Recorded in the folder's manifest first (`output_manifest`: a reset of the folder, its folders, each file's
    size and digest), in one append whichever process writes; the files an earlier run left and this one did not
    write again are removed when the run finishes (`OwnedFolder.finish`), if they are still provably agentrig's."""
    parts = folder.split("/")
    lines = [
        reset_line(folder),
        *(dir_line("/".join(parts[:depth])) for depth in range(1, len(parts) + 1)),
        *(dir_line(f"{folder}/{name}") for name in subfolders),
        *(file_line(record_file(f"{folder}/{name}", data)) for name, data in files),
    ]
    append_records(out_dir, lines, kept=kept)
    base = out_dir / folder
    _make_folder(base, kept)
    for name in subfolders:
        _make_folder(base / name, kept)
    for name, data in files:
        _write_file(base / name, data, kept)


def check_json(check: Check) -> dict[str, Any]:
    """A check as JSON (`reports.CHECK_KEYS`), in report.json's entry of its scenario."""
    return {
        "name": check.name,
        "passed": check.passed,
        "expected": check.expected,
        "actual": check.actual,
        "detail": check.detail,
        "skipped_reason": check.skipped_reason,
    }


def scenario_folder(name: str) -> str:
    """Where one scenario's files go, relative to the output folder (names are restricted to `[A-Za-z0-9_.-]`)."""
    return f"scenarios/{name}"


def scenario_dir(out_dir: Path, name: str) -> Path:
    """`scenario_folder` inside `out_dir`."""
    return out_dir / scenario_folder(name)


def write_scenario_outputs(
    out_dir: Path,
    result: ScenarioResult,
    *,
    execution: ExecutionLike | None = None,
    events: Iterable[Event] = (),
) -> ScenarioResult:
    """Write one scenario's files; history, session and dump only when the scenario ran. API keys never reach the
    disk: every document is redacted value by value before it is serialized. Returns `result` with the names of
    the files written (`files`)."""
    from agentrig.runtime.history.sessions import session_to_json
    from agentrig.runtime.history.wire import history_to_json

    usage: dict[str, Any] = {"turns": [turn.usage.to_json() for turn in result.turns], "total": result.usage.to_json()}
    if result.attempts is not None:  # how the requests went on the wire (a real model): attempts, retries, waits
        usage["attempts"] = result.attempts.to_json()
    files = [
        ("usage.json", dumps_redacted(usage, pretty=True)),
        (EVENTS_FILE, dumps_events(events, redacted=True)),
    ]
    answers = [turn.ui.to_json(turn=turn.index + 1) for turn in result.turns if turn.ui is not None]
    if answers:  # UI turns: what the adapter answered each, unmasked (the golden masks ids and timestamps)
        files.append((UI_ANSWERS_FILE, dumps_redacted(answers, pretty=True)))
    subfolders: list[str] = []
    if execution is not None:
        files.append(("history.json", dumps_redacted(history_to_json(result.history), pretty=True)))
        dump = execution.pydantic_ai_dump
        files.append(("pydantic_ai_dump.json", redact_json_bytes(dump, pretty=dump[:2] in (b"[\n", b"{\n"))))
        # The session's messages are history.json's, named rather than written again; a session whose messages
        # are not exactly the history's keeps its own (they are redacted alike: equal messages, equal bytes).
        same = tuple(execution.session.messages) == tuple(result.history)
        session = session_to_json(execution.session, history_file="history.json" if same else None)
        files.append(("session.json", dumps_redacted(session, pretty=True)))
        runs: tuple[Any, ...] = tuple(getattr(execution, "subagent_runs", ()))
        if runs:
            subfolders.append("subagents")
            for run in runs:
                name = f"{run.spec.replace(':', '.')}.run{run.run}.history.json"
                files.append((f"subagents/{name}", dumps_redacted(history_to_json(run.messages), pretty=True)))
    write_folder(out_dir, scenario_folder(result.name), files, subfolders=subfolders)
    return replace(result, files=tuple(name for name, _ in files))
