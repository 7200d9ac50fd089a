"""The model wrapper every orchestrated run talks through: fallback tool-call parsing and compacted input.

`RequestModel` wraps whatever model the run uses (scripted, real provider, replay) as a pydantic-ai
`WrapperModel` (2.38+), so both jobs happen at the one point every request passes, before pydantic-ai
sees the response:

- fallback parsing: a response without structured tool calls whose text holds calls written as text
  (`<tool_call>{...}</tool_call>` or a fenced JSON block) is rewritten into `ToolCallPart`s with
  deterministic ids `fallback_<n>`, numbered after the fallback calls already in the history;
- compacted input: the run is given the full, authoritative history (so `all_messages()` is what the
  session stores), and the leading messages a compaction summarized are swapped for the summary only in
  what the model is sent. Giving pydantic-ai the compacted history instead would persist the summary
  (and pydantic-ai would merge the summary request into the next request).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from agentrig.runtime.models.fallback_parsing import FALLBACK_ID_PREFIX, parse_fallback_tool_calls
from agentrig.runtime.models.stream_fallback import parse_fallback_on_get

__all__ = ["FALLBACK_ID_PREFIX", "InputPrefix", "RequestModel"]


@dataclass(frozen=True, slots=True, kw_only=True)
class InputPrefix:
    """Replace the first `replaced_count` messages of every request with `messages` (model input only)."""

    replaced_count: int
    """How many leading history messages the replacement stands for."""
    messages: tuple[ModelMessage, ...]
    """What the model sees instead (e.g. the compaction summary request)."""


def _with_prefix(messages: list[ModelMessage], prefix: InputPrefix | None) -> list[ModelMessage]:
    if prefix is None or prefix.replaced_count > len(messages):
        return messages
    head = list(prefix.messages)
    tail = messages[prefix.replaced_count :]
    if head and tail and isinstance(head[-1], ModelRequest) and isinstance(tail[0], ModelRequest):
        # Never send two requests in a row: fold the replacement's last request into the next one.
        merged = replace(tail[0], parts=[*head[-1].parts, *tail[0].parts])
        return [*head[:-1], merged, *tail[1:]]
    return [*head, *tail]


def _fallback_ids_used(messages: Sequence[ModelMessage]) -> int:
    return sum(
        1
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart) and part.tool_call_id.startswith(FALLBACK_ID_PREFIX)
    )


def with_fallback_tool_calls(response: ModelResponse, history: Sequence[ModelMessage]) -> ModelResponse:
    """`response` with tool calls written in its text turned into `ToolCallPart`s (unchanged when it has
    structured calls or none are written)."""
    if any(isinstance(part, ToolCallPart) for part in response.parts):
        return response
    number = _fallback_ids_used(history)
    parts: list[ModelResponsePart] = []
    calls: list[ToolCallPart] = []
    for part in response.parts:
        if not isinstance(part, TextPart):
            parts.append(part)
            continue
        parsed = parse_fallback_tool_calls(part.content)
        if not parsed.calls:
            parts.append(part)
            continue
        if parsed.remaining_text:
            parts.append(replace(part, content=parsed.remaining_text))
        for call in parsed.calls:
            number += 1
            calls.append(
                ToolCallPart(tool_name=call.tool_name, args=call.args, tool_call_id=f"{FALLBACK_ID_PREFIX}{number}")
            )
    if not calls:
        return response
    return replace(response, parts=[*parts, *calls])


class RequestModel(WrapperModel):
    """Wraps the run's model: fallback tool-call parsing on responses, compacted prefix on requests."""

    def __init__(self, wrapped: Model, *, input_prefix: InputPrefix | None = None, fallback_parsing: bool = True):
        super().__init__(wrapped)
        self.input_prefix = input_prefix
        self.fallback_parsing = fallback_parsing
        self.last_response: ModelResponse | None = None
        """The response the model gave last, as the run got it (see `pydantic_ai_compat.keep_over_limit_response`)."""
        self.output_tools: set[str] = set()
        """The output tools the run offered the model (`pydantic_ai_compat.with_release_marks` marks their calls)."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        self.output_tools.update(tool.name for tool in model_request_parameters.output_tools)
        response = await self.wrapped.request(
            _with_prefix(messages, self.input_prefix), model_settings, model_request_parameters
        )
        if self.fallback_parsing:
            response = with_fallback_tool_calls(response, messages)
        self.last_response = response
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse]:
        self.output_tools.update(tool.name for tool in model_request_parameters.output_tools)
        async with self.wrapped.request_stream(
            _with_prefix(messages, self.input_prefix), model_settings, model_request_parameters, run_context
        ) as stream:
            if self.fallback_parsing:
                stream = parse_fallback_on_get(stream, lambda response: with_fallback_tool_calls(response, messages))
            yield stream
            self.last_response = stream.get()
