"""A scripted response delivered as a stream: the deltas a provider would send, and the script's usage.

`response_deltas` turns the parts of one scripted `ModelResponse` into the items a FunctionModel stream
function yields, in part order:

- thought: `DeltaThinkingPart`s, up to three, cut at word boundaries;
- text: plain strings, up to three cut at word boundaries, or the step's explicit `chunks`;
- tool calls: `DeltaToolCall`s; the first carries the name and id, every one a fragment of the JSON
  arguments (about three) that is not valid JSON on its own (so a consumer that parses early is caught). Parallel calls
  follow each other, each under its own index, as providers send them;
- no parts (an `empty` step): one empty item, which pydantic-ai turns into a response with no parts (a
  stream that yields nothing is an error in pydantic-ai).

`with_fixed_usage` wraps FunctionModel's streamed response so it reports the script's usage: FunctionModel
estimates a stream's usage from the text it saw (and the estimate differs between versions), and a stream
function has no way to report any. It also gives each thought back what a delta cannot carry: its id, provider
and provider details (FunctionModel names the provider of a signed streamed thought `function`, 2.38 and 2.68),
so a streamed and a plain run of one script leave the same history.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, replace
from typing import TypeAlias

from pydantic_ai.messages import (
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.models import StreamedResponse
from pydantic_ai.models.function import DeltaThinkingPart, DeltaToolCall, FunctionStreamedResponse
from pydantic_ai.usage import RequestUsage

from agentrig.runtime.models.stream_chunks import arguments_text, fragment_size, json_fragments, word_chunks

__all__ = ["StreamItem", "answered_text_chunks", "response_deltas", "with_fixed_usage"]

StreamItem: TypeAlias = str | dict[int, DeltaToolCall] | dict[int, DeltaThinkingPart]
"""What a FunctionModel stream function yields."""

answered_text_chunks: ContextVar[tuple[str, ...] | None] = ContextVar("agentrig_answered_text_chunks", default=None)
"""The explicit `chunks` of the scripted step answered last in this context (None: word chunks), so a plain run
cut after N chunks keeps the same text a streamed one does."""


def response_deltas(
    parts: Sequence[ModelResponsePart], *, text_chunks: Sequence[str] | None = None
) -> Iterator[StreamItem]:
    """The stream items that rebuild `parts` (see the module docstring); `text_chunks` replaces the word
    chunking of the text part."""
    if not parts:
        yield {}
        return
    for index, part in enumerate(parts):
        if isinstance(part, ThinkingPart):
            for chunk in word_chunks(part.content):
                yield {index: DeltaThinkingPart(content=chunk)}
        elif isinstance(part, TextPart):
            yield from (text_chunks if text_chunks is not None else word_chunks(part.content))
        elif isinstance(part, ToolCallPart):
            arguments = arguments_text(part.args)
            pieces = json_fragments(arguments, size=fragment_size(arguments)) if arguments else [""]
            yield {
                index: DeltaToolCall(name=part.tool_name, json_args=pieces[0] or None, tool_call_id=part.tool_call_id)
            }
            for piece in pieces[1:]:
                yield {index: DeltaToolCall(json_args=piece)}


@dataclass
class _ScriptUsageStream(FunctionStreamedResponse):
    """FunctionModel's streamed response, reporting the script's usage instead of an estimate."""

    script_usage: RequestUsage = field(default_factory=RequestUsage)
    script_parts: list[ModelResponsePart] = field(default_factory=list[ModelResponsePart])

    def __post_init__(self) -> None:
        self._usage = self.script_usage

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        # FunctionModel adds an estimate for every item it maps; the script's usage is put back after each
        # (the `usage` property of 2.68 and `get()` of 2.38 both read `_usage`).
        async for event in super()._get_event_iterator():
            self._usage = self.script_usage
            yield event
        self._usage = self.script_usage

    @property
    def usage(self) -> RequestUsage:  # pyright: ignore[reportIncompatibleVariableOverride]
        return self.script_usage

    def get(self) -> ModelResponse:
        response = super().get()
        parts = list(response.parts)
        for index, (built, scripted) in enumerate(zip(parts, self.script_parts, strict=False)):
            if isinstance(built, ThinkingPart) and isinstance(scripted, ThinkingPart):
                parts[index] = replace(
                    built,
                    id=scripted.id,
                    signature=scripted.signature,
                    provider_name=scripted.provider_name,
                    provider_details=scripted.provider_details,
                )
        return replace(response, parts=parts)


def with_fixed_usage(
    stream: StreamedResponse, usage: RequestUsage, *, parts: Sequence[ModelResponsePart] = ()
) -> StreamedResponse:
    """`stream` (a FunctionModel stream, not iterated yet) as a response whose usage is `usage` and whose thoughts
    carry the fields of the scripted `parts`.

    Built from the stream's own constructor fields, so it reads the same deltas; a stream of another kind is
    returned unchanged."""
    if not isinstance(stream, FunctionStreamedResponse):
        return stream
    values = {f.name: getattr(stream, f.name) for f in fields(stream) if f.init}
    return _ScriptUsageStream(**values, script_usage=usage, script_parts=list(parts))
