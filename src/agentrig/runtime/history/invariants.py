"""History invariants: checked and reported, never repaired.

`check_invariants` reports every violation with the message and part it concerns. The codes are
the scenario format's `InvariantName`s:

- `no_dangling_tool_calls`: every call in a response other than the last message is answered by
  the request right after it (tool return or retry prompt). The last response's calls are the live
  frontier (pending or deferred calls) and are not dangling.
- `no_orphaned_tool_returns`: every tool return and tool-bound retry prompt answers a call made
  earlier in the history.
- `no_consecutive_requests`: no request directly follows a request, except a request bringing new input
  (a prompt) after a request of tool returns alone. That pair is how pydantic-ai stores a run that ended
  with its tool results (the output tool's "Final result processed.", 2.38 and 2.68) followed by the next
  run; it merges the two before sending them, so the model never sees two requests. A prompt after a
  prompt, or tool results after tool results, means a request got no answer.
- `no_persisted_system_prompt`: no system-prompt part anywhere.
- `no_duplicate_tool_call_ids`: no two tool calls share an id, and no call is answered twice.
- `registry_matches_parts`: only with a registry: see `ToolCallRegistry.check_against_history`.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentrig.runtime.history.canonical import History, Message, SystemPromptPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.cleanup import answered_tool_call_id, dangling_tool_calls, orphaned_tool_answers
from agentrig.runtime.history.tool_registry import ToolCallRegistry
from agentrig.runtime.history.violations import INVARIANT_NAMES, Violation

__all__ = ["check_invariants"]


def _dangling_tool_calls(history: History) -> Iterable[Violation]:
    for index, part_index, part in dangling_tool_calls(history):
        yield Violation(
            code="no_dangling_tool_calls",
            message=f"tool call {part.tool_call_id!r} ({part.tool_name}) is not answered by the next request",
            message_index=index,
            part_index=part_index,
        )


def _orphaned_tool_returns(history: History) -> Iterable[Violation]:
    for index, part_index, part in orphaned_tool_answers(history):
        what = "tool return" if isinstance(part, ToolReturnPart) else "retry prompt"
        yield Violation(
            code="no_orphaned_tool_returns",
            message=f"{what} for {part.tool_call_id!r} answers no earlier tool call",
            message_index=index,
            part_index=part_index,
        )


def _ends_a_run(request: Message) -> bool:
    """A request of tool returns alone: the last message of a run that ended with its tools' results."""
    return bool(request.parts) and all(isinstance(p, ToolReturnPart) for p in request.parts)


def _brings_new_input(request: Message) -> bool:
    """A request holding something other than tool results: the first request of a new run."""
    return any(answered_tool_call_id(p) is None for p in request.parts)


def _consecutive_requests(history: History) -> Iterable[Violation]:
    for index in range(1, len(history)):
        current, previous = history[index], history[index - 1]
        if current.kind != "request" or previous.kind != "request":
            continue
        if not (_ends_a_run(previous) and _brings_new_input(current)):
            yield Violation(
                code="no_consecutive_requests",
                message=f"request follows the request at message[{index - 1}]",
                message_index=index,
                part_index=None,
            )


def _persisted_system_prompts(history: History) -> Iterable[Violation]:
    for index, message in enumerate(history):
        for part_index, part in enumerate(message.parts):
            if isinstance(part, SystemPromptPart):
                yield Violation(
                    code="no_persisted_system_prompt",
                    message="system prompt persisted in the history",
                    message_index=index,
                    part_index=part_index,
                )


def _duplicate_tool_call_ids(history: History) -> Iterable[Violation]:
    calls: dict[str, tuple[int, int]] = {}
    answers: dict[str, tuple[int, int]] = {}
    for index, message in enumerate(history):
        for part_index, part in enumerate(message.parts):
            if isinstance(part, ToolCallPart):
                seen, what, tool_call_id = calls, "tool call", part.tool_call_id
            elif (answered := answered_tool_call_id(part)) is not None:
                seen, what, tool_call_id = answers, "answer to tool call", answered
            else:
                continue
            if tool_call_id in seen:
                first_message, first_part = seen[tool_call_id]
                yield Violation(
                    code="no_duplicate_tool_call_ids",
                    message=f"second {what} {tool_call_id!r} (first at message[{first_message}].parts[{first_part}])",
                    message_index=index,
                    part_index=part_index,
                )
            else:
                seen[tool_call_id] = (index, part_index)


_CHECKS = {
    "no_dangling_tool_calls": _dangling_tool_calls,
    "no_orphaned_tool_returns": _orphaned_tool_returns,
    "no_consecutive_requests": _consecutive_requests,
    "no_persisted_system_prompt": _persisted_system_prompts,
    "no_duplicate_tool_call_ids": _duplicate_tool_call_ids,
}


def check_invariants(
    history: History, *, registry: ToolCallRegistry | None = None, only: Iterable[str] | None = None
) -> list[Violation]:
    """Every violation in `history`, ordered by position (registry entries without a part last).

    `only` limits the check to some codes (an unknown code raises `ValueError`). `registry_matches_parts`
    runs only when a registry is given.
    """
    codes = set(INVARIANT_NAMES) if only is None else set(only)
    unknown = codes - set(INVARIANT_NAMES)
    if unknown:
        raise ValueError(f"unknown invariant {sorted(unknown)[0]!r} (known: {', '.join(INVARIANT_NAMES)})")
    violations = [v for code, check in _CHECKS.items() if code in codes for v in check(history)]
    if registry is not None and "registry_matches_parts" in codes:
        violations.extend(registry.check_against_history(history))
    order = {code: rank for rank, code in enumerate(INVARIANT_NAMES)}

    def position(violation: Violation) -> tuple[float, float, int]:
        message = float("inf") if violation.message_index is None else violation.message_index
        part = -1 if violation.part_index is None else violation.part_index
        return message, part, order[violation.code]

    return sorted(violations, key=position)
