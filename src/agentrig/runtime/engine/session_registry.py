"""The scenario-wide tool-call registry, rebuilt from each turn's statuses and the final history (both engines)."""

from __future__ import annotations

from collections.abc import Iterable

from agentrig.runtime.history.canonical import Message, RetryPromptPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.run_records import ToolCallStatusRecord, TurnRecord
from agentrig.runtime.history.tool_registry import ToolCallRegistry

__all__ = ["scenario_registry"]


def scenario_registry(turns: Iterable[TurnRecord], history: Iterable[Message]) -> ToolCallRegistry:
    """One registry for the session: each turn's final statuses (later turns win: a deferred call that was
    running at the end of one turn completes in the next), then calls only the history knows.

    A call that history preparation removed later (a pending call abandoned by a new prompt, which the loop
    contract's cleanup deletes) is no longer part of the session, so it is left out."""
    registry = ToolCallRegistry()
    history = list(history)
    called = {p.tool_call_id for m in history for p in m.parts if isinstance(p, ToolCallPart)}
    final: dict[str, ToolCallStatusRecord] = {}
    for turn in turns:
        for record in turn.tool_statuses:
            if record.tool_call_id in called:
                final[record.tool_call_id] = record
    answers: dict[str, str] = {}
    for message in history:
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                answers.setdefault(part.tool_call_id, part.outcome)
            elif isinstance(part, RetryPromptPart) and part.tool_call_id is not None:
                answers.setdefault(part.tool_call_id, "retry")
    for message in history:
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.tool_call_id not in final and part.tool_call_id not in registry:
                status = {"success": "completed", "interrupted": "cancelled", None: "running"}.get(
                    answers.get(part.tool_call_id), "failed"
                )
                final[part.tool_call_id] = ToolCallStatusRecord(
                    tool_call_id=part.tool_call_id,
                    tool_name=part.tool_name,
                    status=status,  # pyright: ignore[reportArgumentType]
                )
    for record in final.values():
        registry.register(record.tool_call_id, record.tool_name, {})
        if record.status == "registered":
            continue
        if record.status == "failed":
            registry.fail(record.tool_call_id, "failed")
        elif record.status == "cancelled":
            registry.cancel(record.tool_call_id, "cancelled")
        else:
            registry.start(record.tool_call_id)
            if record.status == "completed":
                registry.complete(record.tool_call_id)
    return registry
