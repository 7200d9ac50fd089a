"""Checks on the final history: the invariants a scenario asks for, and its golden file (byte for byte,
rewritten atomically with `--update-golden`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, get_args

from agentrig.input_files import HISTORY_FILE_LIMIT, InputFileError, read_input_file
from agentrig.runtime.checks.check_support import unified_diff
from agentrig.runtime.history.canonical import JsonValue, Message
from agentrig.runtime.history.invariants import check_invariants
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.history.redaction import redact_json_bytes
from agentrig.runtime.history.run_records import Check, TurnRecord
from agentrig.runtime.history.tool_registry import ToolCallRegistry
from agentrig.runtime.history.user_content import elide_base64_data
from agentrig.runtime.history.wire import dumps_history
from agentrig.runtime.runfolder.jsonio import write_atomic
from agentrig.scenarios.model import InvariantName, ScenarioExpectations

__all__ = [
    "ALL_INVARIANTS",
    "InvariantChecker",
    "canonical_golden_bytes",
    "check_golden",
    "check_golden_bytes",
    "check_invariant_expectations",
    "rebuild_registry",
    "strip_run_ids",
    "turn_label",
]

ALL_INVARIANTS: tuple[str, ...] = get_args(InvariantName)
"""Every invariant name a scenario may list; `invariants: all` means these."""


def turn_label(turn: TurnRecord) -> str:
    """`turn 1` etc.: how checks and messages name a turn (1-based)."""
    return f"turn {turn.index + 1}"


InvariantChecker = Callable[[Sequence[Message], Any, Sequence[str] | None], Sequence[Any]]
"""`(history, registry, only) -> violations`; defaults to `agentrig.runtime.history.invariants.check_invariants`.
(Injectable so the checker's own wiring can be tested with planted violations.)"""


def strip_run_ids(history: Iterable[Message]) -> list[Message]:
    """The history without its per-run values (run and conversation ids, capability record ids: `history/per_run`):
    they are random per run, so goldens and diffs ignore them."""
    return without_per_run_values(history)


def canonical_golden_bytes(history: Iterable[Message]) -> bytes:
    """The exact bytes a golden file holds for this history: canonical, pretty, run_ids dropped, secrets redacted
    (a golden never holds a key, and a run whose real tool returned one still matches the golden scaffold wrote)."""
    return redact_json_bytes(dumps_history(strip_run_ids(history), pretty=True), pretty=True)


def check_invariant_expectations(
    expect: ScenarioExpectations,
    history: Sequence[Message],
    turns: Sequence[TurnRecord],
    registry: Any,
    invariant_checker: InvariantChecker | None,
) -> list[Check]:
    """One check per invariant on the final history. `registry_matches_parts` uses the scenario-wide
    `registry` when the engine gives one; otherwise each turn's registry is rebuilt from its final
    statuses and checked against the messages that turn added (a request's registry only knows its turn)."""
    if expect.invariants == "none":
        return []
    names = ALL_INVARIANTS if expect.invariants == "all" else tuple(expect.invariants)
    checker = invariant_checker or _default_invariant_checker
    history_names = [name for name in names if name != "registry_matches_parts"]
    # (prefix, violation, offset): a turn's own registry is checked against the messages it added, whose indexes
    # start at `offset` in the final history (None when they cannot be found there).
    violations: list[tuple[str, Any, int | None]] = (
        [("", v, 0) for v in checker(history, None, history_names)] if history_names else []
    )
    if "registry_matches_parts" in names and registry is not None:
        violations.extend(("", v, 0) for v in checker(history, registry, ["registry_matches_parts"]))
    elif "registry_matches_parts" in names:
        for turn, offset in zip(turns, _turn_offsets(history, turns), strict=True):
            registry = rebuild_registry(turn)
            found = checker(turn.new_messages, registry, ["registry_matches_parts"])
            violations.extend((f"{turn_label(turn)}: ", v, offset) for v in found)
    checks: list[Check] = []
    for name in names:
        found = [(prefix, v, offset) for prefix, v, offset in violations if getattr(v, "code", None) == name]
        checks.append(_invariant_check(f"scenario: invariant {name}", found))
    unknown = [(prefix, v, offset) for prefix, v, offset in violations if getattr(v, "code", None) not in names]
    if unknown:
        checks.append(_invariant_check("scenario: invariant (other)", unknown))
    return checks


def _invariant_check(name: str, violations: Sequence[tuple[str, Any, int | None]]) -> Check:
    """One invariant's check: `actual` lists where each violation is (`message`, `part`: indexes into the final
    history's messages, as history.json holds them, from 0) and what it says, so a report can point at them."""
    if not violations:
        return Check(name=name, passed=True, expected=[], actual=[])
    located: list[JsonValue] = [_located(prefix, v, offset) for prefix, v, offset in violations]
    detail = "\n".join(_describe_violation(prefix, v, offset) for prefix, v, offset in violations)
    return Check(name=name, passed=False, expected=[], actual=located, detail=detail)


def _absolute(violation: Any, offset: int | None) -> tuple[int | None, int | None]:
    index = getattr(violation, "message_index", None)
    part = getattr(violation, "part_index", None)
    if index is None or offset is None:
        return None, None if index is None else part
    return index + offset, part


def _located(prefix: str, violation: Any, offset: int | None) -> dict[str, JsonValue]:
    message, part = _absolute(violation, offset)
    return {
        "code": str(getattr(violation, "code", "?")),
        "message": message,
        "part": part,
        "says": f"{prefix}{getattr(violation, 'message', violation)}",
    }


def _turn_offsets(history: Sequence[Message], turns: Sequence[TurnRecord]) -> list[int | None]:
    """Where each turn's new messages start in the final history, found in order (None when they are not there
    as they were added: a later turn's history preparation may have changed them)."""
    offsets: list[int | None] = []
    cursor = 0
    for turn in turns:
        count = len(turn.new_messages)
        start = next(
            (
                at
                for at in range(cursor, len(history) - count + 1)
                if tuple(history[at : at + count]) == tuple(turn.new_messages)
            ),
            None,
        )
        offsets.append(start)
        if start is not None:
            cursor = start + count
    return offsets


def _default_invariant_checker(history: Sequence[Message], registry: Any, only: Sequence[str] | None) -> Sequence[Any]:
    return check_invariants(history, registry=registry, only=only)


def rebuild_registry(turn: TurnRecord) -> ToolCallRegistry:
    """A `ToolCallRegistry` holding the turn's final statuses, reached by legal lifecycle moves."""
    registry = ToolCallRegistry()
    args = {call.tool_call_id: call.args for call in turn.tool_calls}
    for record in turn.tool_statuses:
        registry.register(record.tool_call_id, record.tool_name, args.get(record.tool_call_id, {}))
        if record.status in ("running", "completed"):
            registry.start(record.tool_call_id)
        if record.status == "completed":
            registry.complete(record.tool_call_id)
        elif record.status == "failed":
            registry.fail(record.tool_call_id, "failed")
        elif record.status == "cancelled":
            registry.cancel(record.tool_call_id, "cancelled")
    return registry


def _describe_violation(prefix: str, violation: Any, offset: int | None = 0) -> str:
    index, part = _absolute(violation, offset)
    if index is None and getattr(violation, "message_index", None) is not None:  # not found in the final history
        index = getattr(violation, "message_index", None)
        prefix += "the turn's own "
    where = "registry" if index is None else f"message {index}"
    if part is not None and index is not None:
        where += f", part {part}"
    return f"{prefix}{getattr(violation, 'code', '?')} at {where}: {getattr(violation, 'message', violation)}"


def _golden_bytes(path: Path) -> bytes | None:
    """The golden file's bytes, None when there is none (yet); read as every input is (`input_files`)."""
    if not path.is_file():
        return None
    return read_input_file(path, limit=HISTORY_FILE_LIMIT, what="a golden file")


def check_golden(path: Path, history: Sequence[Message], *, update: bool) -> Check:
    """Compare the final history with the golden file byte for byte; with `update`, rewrite it (atomically)."""
    return check_golden_bytes(path, canonical_golden_bytes(history), update=update, name="scenario: golden")


def check_golden_bytes(path: Path, actual: bytes, *, update: bool, name: str, what: str = "history") -> Check:
    """Compare `actual` with the golden file at `path` byte for byte; with `update`, rewrite it (atomically)."""
    try:
        existing = _golden_bytes(path)
    except InputFileError as error:  # over the limit: neither compared nor replaced
        return Check(name=name, passed=False, expected=str(path), actual="not read", detail=error.message)
    if update:
        if existing == actual:
            return Check(name=name, passed=True, expected=str(path), detail="golden unchanged")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, actual)
        except OSError as error:  # a folder in its place, a read-only tree: this scenario's check, not the run's end
            in_the_way = isinstance(error, (FileExistsError, NotADirectoryError))  # a file where a folder must be
            reason = "a file is in the way of its folder" if in_the_way else error.strerror or str(error)
            detail = f"cannot write {path}: {reason}"
            return Check(name=name, passed=False, expected=str(path), actual="not written", detail=detail)
        return Check(
            name=name, passed=True, expected=str(path), detail=f"golden {'updated' if existing else 'written'}: {path}"
        )
    if existing is None:
        return Check(
            name=name,
            passed=False,
            expected=str(path),
            actual="no golden file",
            detail=f"golden file {path} is missing; run with --update-golden",
        )
    if existing == actual:
        return Check(name=name, passed=True, expected=str(path))
    expected_text, actual_text = existing.decode("utf-8", errors="replace"), actual.decode("utf-8")
    # An attachment's base64 is shown by its size and hash (a megabyte of it is no failure text); the whole text
    # only when that hides the difference (the same bytes in another base64 alphabet).
    detail = unified_diff(
        elide_base64_data(expected_text),
        elide_base64_data(actual_text),
        expected_label=str(path),
        actual_label="this run",
    ) or unified_diff(expected_text, actual_text, expected_label=str(path), actual_label="this run")
    if not detail:  # the only difference is a key the golden holds in the clear: the diff redacts it away
        detail = f"{path} holds a secret where this run's history has [REDACTED]; "
    return Check(
        name=name,
        passed=False,
        expected=str(path),
        actual=f"a different {what} (diff below)",
        detail=detail + "(run with --update-golden to accept)",
    )
