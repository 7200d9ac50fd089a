"""The output-tool mark pydantic-ai 2.78 writes on its parts, written the same way for histories of earlier releases.

pydantic-ai 2.78 stamps `tool_kind='output'` on an output tool's call and on the return or retry that answers it;
2.38-2.68 leave it out. agentrig writes it where a release did not, from the names of the run's output tools, so
one conversation has one canonical history on every release: the engine on a run's history
(`models.pydantic_ai_compat.with_release_marks`) and scaffold on a dump's golden (`scaffold.document`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from agentrig.runtime.history.canonical import Message, Part, RetryPromptPart, ToolCallPart, ToolReturnPart

__all__ = ["OUTPUT_TOOL_KIND", "with_output_tool_kind"]

OUTPUT_TOOL_KIND = "output"


def with_output_tool_kind(history: Sequence[Message], output_tools: Collection[str]) -> list[Message]:
    """`history` with `tool_kind='output'` on the calls of `output_tools` that have no kind, and on the returns and
    retries answering them; every other part untouched (the same objects)."""
    names = frozenset(output_tools)
    calls = {
        part.tool_call_id
        for message in history
        for part in message.parts
        if isinstance(part, ToolCallPart) and part.tool_kind is None and part.tool_name in names
    }
    if not calls:
        return list(history)

    def stamped(part: Part) -> Part:
        if isinstance(part, ToolCallPart | ToolReturnPart | RetryPromptPart) and part.tool_call_id in calls:
            return replace(part, tool_kind=OUTPUT_TOOL_KIND) if part.tool_kind is None else part
        return part

    return [
        message.with_parts(stamped(part) for part in message.parts)
        if any(getattr(part, "tool_call_id", None) in calls for part in message.parts)
        else message
        for message in history
    ]
