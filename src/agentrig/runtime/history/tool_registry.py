"""The tool call registry: the single source of truth for tool call status during a run.

Lifecycle, keyed by `tool_call_id`:

    register ──> registered ──start──> running ──complete──> completed
                     │                    ├──────fail──────> failed
                     │                    └─────cancel─────> cancelled
                     ├──fail──> failed        (arguments rejected before the tool ran)
                     └──cancel──> cancelled   (aborted before the tool ran)

Any other move (start before register, complete twice, complete after cancel, a second register
with the same id) raises `IllegalToolTransition`. It subclasses `ValueError`, not `AgentrigError`:
it means the orchestrator has a bug, not that a user's input is wrong, so it must not be turned
into a one-line exit-code-2 message.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from agentrig.runtime.history.canonical import History, JsonValue, Part, RetryPromptPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.run_records import ToolCallStatusRecord
from agentrig.runtime.history.violations import Violation

__all__ = ["IllegalToolTransition", "ToolCallRegistry", "ToolCallStatus"]

ToolCallStatus: TypeAlias = Literal["registered", "running", "completed", "failed", "cancelled"]

_ALLOWED: dict[str, frozenset[str]] = {
    "start": frozenset({"registered"}),
    "complete": frozenset({"running"}),
    "fail": frozenset({"registered", "running"}),
    "cancel": frozenset({"registered", "running"}),
}

# How each final status must show in the history: which answers agree with it. None means "no answer".
_AGREEING_ANSWERS: dict[str, frozenset[str | None]] = {
    "registered": frozenset({None}),
    "running": frozenset({None}),
    "completed": frozenset({"success"}),
    "failed": frozenset({"retry", "failed", "denied"}),
    "cancelled": frozenset({None, "interrupted", "denied"}),
}


class IllegalToolTransition(ValueError):
    """A tool call status change the lifecycle does not allow (a bug in the caller)."""


@dataclass(slots=True, kw_only=True)
class _Entry:
    """The registry's mutable record of one call."""

    tool_call_id: str
    tool_name: str
    args: dict[str, JsonValue] | str
    status: ToolCallStatus = "registered"
    error: str | None = None
    reason: str | None = None


def _answer_kind(part: Part) -> str | None:
    """`retry` for a tool-bound retry prompt, the outcome for a tool return, None for anything else."""
    if isinstance(part, RetryPromptPart) and part.tool_call_id is not None:
        return "retry"
    if isinstance(part, ToolReturnPart):
        return part.outcome
    return None


class ToolCallRegistry:
    """Tool call statuses of one run, in registration order."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def register(self, tool_call_id: str, tool_name: str, args: dict[str, JsonValue] | str) -> None:
        """Record a call the model made (status `registered`)."""
        if tool_call_id in self._entries:
            raise IllegalToolTransition(f"tool call {tool_call_id!r} is already registered")
        self._entries[tool_call_id] = _Entry(tool_call_id=tool_call_id, tool_name=tool_name, args=args)

    def _move(self, tool_call_id: str, action: str, status: ToolCallStatus) -> _Entry:
        entry = self._entries.get(tool_call_id)
        if entry is None:
            raise IllegalToolTransition(f"cannot {action} tool call {tool_call_id!r}: it is not registered")
        if entry.status not in _ALLOWED[action]:
            raise IllegalToolTransition(f"cannot {action} tool call {tool_call_id!r}: it is {entry.status}")
        entry.status = status
        return entry

    def start(self, tool_call_id: str) -> None:
        """The tool began running."""
        self._move(tool_call_id, "start", "running")

    def complete(self, tool_call_id: str) -> None:
        """The tool returned a result (a tool-return part with outcome success follows)."""
        self._move(tool_call_id, "complete", "completed")

    def fail(self, tool_call_id: str, error: str) -> None:
        """The tool failed or asked for a retry (a retry prompt or a failed tool return follows)."""
        self._move(tool_call_id, "fail", "failed").error = error

    def cancel(self, tool_call_id: str, reason: str) -> None:
        """The call was abandoned: abort, timeout, or the run ended first."""
        self._move(tool_call_id, "cancel", "cancelled").reason = reason

    def status(self, tool_call_id: str) -> ToolCallStatus | None:
        """The call's current status, or None when it was never registered."""
        entry = self._entries.get(tool_call_id)
        return None if entry is None else entry.status

    def error(self, tool_call_id: str) -> str | None:
        """Why the call failed or was cancelled, when it was."""
        entry = self._entries.get(tool_call_id)
        return None if entry is None else entry.error or entry.reason

    def records(self) -> list[ToolCallStatusRecord]:
        """Every call's status, in registration order."""
        return [
            ToolCallStatusRecord(tool_call_id=e.tool_call_id, tool_name=e.tool_name, status=e.status)
            for e in self._entries.values()
        ]

    def clear(self) -> None:
        """Forget every call (the orchestrator's runtime reset at the start of a request)."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, tool_call_id: object) -> bool:
        return tool_call_id in self._entries

    def check_against_history(self, history: History) -> list[Violation]:
        """Violations of `registry_matches_parts`: the registry and the parts disagree.

        Pass the messages of the run this registry followed (the registry is cleared at every request,
        so a whole multi-turn session holds calls it never saw). Checked:

        - every registered id appears as a tool-call part, and every tool-call part is registered;
        - the status agrees with the call's answer: completed ↔ tool return with outcome success;
          failed ↔ retry prompt or tool return failed/denied; cancelled ↔ tool return interrupted/denied
          or no answer; registered or running ↔ no answer yet.
        """
        calls: dict[str, tuple[int, int]] = {}
        answers: dict[str, tuple[int, int, str]] = {}
        violations: list[Violation] = []
        for message_index, message in enumerate(history):
            for part_index, part in enumerate(message.parts):
                if isinstance(part, ToolCallPart):
                    calls.setdefault(part.tool_call_id, (message_index, part_index))
                    if part.tool_call_id not in self._entries:
                        violations.append(
                            _mismatch(
                                f"tool call {part.tool_call_id!r} is not in the registry", message_index, part_index
                            )
                        )
                elif (kind := _answer_kind(part)) is not None and isinstance(part, ToolReturnPart | RetryPromptPart):
                    assert part.tool_call_id is not None
                    answers.setdefault(part.tool_call_id, (message_index, part_index, kind))
        for entry in self._entries.values():
            violations.extend(_entry_violations(entry, calls.get(entry.tool_call_id), answers.get(entry.tool_call_id)))
        return violations


def _mismatch(message: str, message_index: int | None, part_index: int | None) -> Violation:
    return Violation(code="registry_matches_parts", message=message, message_index=message_index, part_index=part_index)


def _entry_violations(
    entry: _Entry, call: tuple[int, int] | None, answer: tuple[int, int, str] | None
) -> Iterable[Violation]:
    if call is None:
        yield _mismatch(f"registered tool call {entry.tool_call_id!r} has no tool-call part in the history", None, None)
        return
    answer_kind = None if answer is None else answer[2]
    if answer_kind in _AGREEING_ANSWERS[entry.status]:
        return
    if answer is None:
        yield _mismatch(f"registry says {entry.tool_call_id!r} is {entry.status}, but it has no answer", *call)
    else:
        shown = "a retry prompt" if answer_kind == "retry" else f"a tool return with outcome {answer_kind}"
        yield _mismatch(
            f"registry says {entry.tool_call_id!r} is {entry.status}, but it is answered by {shown}", *answer[:2]
        )
