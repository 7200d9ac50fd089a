"""tinyagent messages <-> canonical messages for the engine, with what the engine knows beyond tinyagent's messages.

The conversion itself is `history/tinyagent_format` (the documented format). The engine adds what only the
run knows (`tools.ToolOutcomes`): an error result that answered a YAML `retry` (or malformed arguments) is a
retry prompt, as pydantic-ai writes it, and a structured `return` is kept as its value (tinyagent results are
text). It also rewrites a response whose text holds tool calls (fallback parsing) and reads a response's usage.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic import TypeAdapter, ValidationError
from tinyagent.agent_types import (
    AssistantMessage,
    CustomAgentMessage,
    TextContent,
    ToolCallContent,
    ToolResultMessage,
    UserMessage,
)

from agentrig.runtime.engine.tinyagent_engine.script import object_arguments
from agentrig.runtime.engine.tinyagent_engine.tools import ToolOutcomes
from agentrig.runtime.history.canonical import Message, Part, RetryPromptPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.run_records import RunError
from agentrig.runtime.history.tinyagent_format import messages_from_tinyagent, messages_to_tinyagent
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models.fallback_parsing import FALLBACK_ID_PREFIX, parse_fallback_tool_calls
from agentrig.scenarios.model import Settings

__all__ = [
    "agent_messages",
    "canonical_messages",
    "fallback_parsed",
    "host_results",
    "invalid_arguments_error",
    "response_usage",
    "token_limit_error",
]

_ROLES: dict[str, Any] = {"user": UserMessage, "assistant": AssistantMessage, "tool_result": ToolResultMessage}
_OBJECT = TypeAdapter(dict[str, Any])


def agent_messages(history: Sequence[Message]) -> list[Any]:
    """The canonical history as tinyagent message models (system prompts as custom messages it never sends)."""
    return [
        _ROLES.get(item["role"], CustomAgentMessage).model_validate(item) for item in messages_to_tinyagent(history)
    ]


def canonical_messages(items: Sequence[Any], outcomes: ToolOutcomes) -> list[Message]:
    """The canonical form of tinyagent messages, with what the run's tools did (see the module docstring)."""
    dumped = [item.model_dump(exclude_none=True) if hasattr(item, "model_dump") else item for item in items]
    messages, _ = messages_from_tinyagent(dumped)
    return [message.with_parts(_mapped(part, outcomes) for part in message.parts) for message in messages]


def _mapped(part: Part, outcomes: ToolOutcomes) -> Part:
    if not isinstance(part, ToolReturnPart):
        return part
    call_id = part.tool_call_id
    if call_id in outcomes.retried and part.outcome == "failed":
        content = outcomes.retry_details.get(call_id, part.content)
        return RetryPromptPart(content=content, tool_name=part.tool_name, tool_call_id=call_id)  # pyright: ignore[reportArgumentType]
    if call_id in outcomes.denied and part.outcome == "success":
        return replace(part, outcome="denied")
    if call_id in outcomes.returned and part.outcome == "success":
        return replace(part, content=outcomes.returned[call_id])
    return part


def invalid_arguments_error(call: ToolCallContent) -> list[dict[str, Any]] | None:
    """pydantic's validation errors for arguments that are no JSON object (tinyagent keeps them as the call's
    `partial_json` and would run the tool with `{}`); None when the arguments are fine."""
    raw = call.partial_json
    if raw is None or call.arguments or object_arguments(raw) is not None:
        return None
    try:
        _OBJECT.validate_json(raw)
    except ValidationError as error:
        return [
            {**detail, "loc": list(detail["loc"])} for detail in error.errors(include_url=False, include_context=False)
        ]
    return [{"type": "dict_type", "loc": [], "msg": "Input should be an object", "input": raw}]


def _fallback_ids_used(history: Sequence[Message]) -> int:
    return sum(
        1
        for message in history
        for part in message.parts
        if isinstance(part, ToolCallPart) and part.tool_call_id.startswith(FALLBACK_ID_PREFIX)
    )


def fallback_parsed(message: AssistantMessage, history: Sequence[Message]) -> AssistantMessage:
    """`message` with tool calls written in its text as tool-call blocks, numbered after the history's
    (unchanged when it has tool calls already or its text holds none)."""
    if any(isinstance(block, ToolCallContent) for block in message.content):
        return message
    number = _fallback_ids_used(history)
    content: list[Any] = []
    calls: list[ToolCallContent] = []
    for block in message.content:
        parsed = parse_fallback_tool_calls(block.text or "") if isinstance(block, TextContent) else None
        if parsed is None or not parsed.calls:
            content.append(block)
            continue
        if parsed.remaining_text:
            content.append(TextContent(text=parsed.remaining_text))
        for call in parsed.calls:
            number += 1
            calls.append(
                ToolCallContent(id=f"{FALLBACK_ID_PREFIX}{number}", name=call.tool_name, arguments=dict(call.args))
            )
    if not calls:
        return message
    return message.model_copy(update={"content": [*content, *calls], "stop_reason": "tool_calls"})


def response_usage(message: AssistantMessage) -> Usage:
    """One model request's usage, from tinyagent's usage object (`input`, `output`, `cache_read`, `cache_write`)."""
    usage: dict[str, Any] = dict(message.usage or {})
    return Usage(
        requests=1,
        input_tokens=int(usage.get("input", 0) or 0),
        output_tokens=int(usage.get("output", 0) or 0),
        cache_read_tokens=int(usage.get("cache_read", 0) or 0),
        cache_write_tokens=int(usage.get("cache_write", 0) or 0),
    )


def host_results(history: Sequence[Message], results: Mapping[str, Any], outcomes: ToolOutcomes) -> list[Any]:
    """The host's answers to deferred calls, as the tool results tinyagent continues from (a structured answer is
    its JSON text for the model, the value for the history)."""
    names = {call.tool_call_id: call.tool_name for message in history for call in message.tool_calls}
    answers: list[Any] = []
    for call_id, value in results.items():
        text = value if isinstance(value, str) else json.dumps(value)
        if not isinstance(value, str):
            outcomes.returned[call_id] = value
        outcomes.deferred.discard(call_id)
        answers.append(
            ToolResultMessage(tool_call_id=call_id, tool_name=names.get(call_id), content=[TextContent(text=text)])
        )
    return answers


def token_limit_error(usage: Usage, settings: Settings) -> RunError | None:
    """The error of a run whose usage went past a token limit (pydantic-ai's `UsageLimits` words), else None."""
    for name, limit, value in (
        ("input_tokens_limit", settings.input_tokens_limit, usage.input_tokens),
        ("output_tokens_limit", settings.output_tokens_limit, usage.output_tokens),
        ("total_tokens_limit", settings.total_tokens_limit, usage.total_tokens),
    ):
        if limit is not None and value > limit:
            return RunError(kind="usage_limit", message=f"Exceeded the {name} of {limit} ({name[:-6]}={value})")
    return None
