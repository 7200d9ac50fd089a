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
function has no way to report any.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field, fields
from itertools import pairwise
from typing import Any, TypeAlias

from pydantic_ai.messages import ModelResponsePart, ModelResponseStreamEvent, TextPart, ThinkingPart, ToolCallPart
from pydantic_ai.models import StreamedResponse
from pydantic_ai.models.function import DeltaThinkingPart, DeltaToolCall, FunctionStreamedResponse
from pydantic_ai.usage import RequestUsage

__all__ = ["StreamItem", "json_fragments", "response_deltas", "with_fixed_usage", "word_chunks"]

StreamItem: TypeAlias = str | dict[int, DeltaToolCall] | dict[int, DeltaThinkingPart]
"""What a FunctionModel stream function yields."""

_WORD = re.compile(r"\s+|\S+\s*")
_FRAGMENT_SIZE = 8
"""Characters per argument fragment (before growing one that would be valid JSON on its own), at least."""
_ARGUMENT_FRAGMENTS = 3
"""Fragments a call's arguments are cut into by default (fewer when they are short)."""
_TEXT_CHUNKS = 3
"""Deltas a text or thought is cut into by default: several, so joining is exercised, but few, since every
delta costs pydantic-ai's stream machinery a pass (one per word made streamed runs 1.35x as slow as plain)."""


def word_chunks(text: str, most: int = _TEXT_CHUNKS) -> list[str]:
    """`text` cut at word boundaries (after a word's trailing whitespace) into at most `most` chunks of about
    as many words each; joins back to `text`."""
    words: list[str] = _WORD.findall(text)
    if len(words) <= 1:
        return [text]
    count = min(most, len(words))
    bounds = [round(index * len(words) / count) for index in range(count + 1)]
    return ["".join(words[start:end]) for start, end in pairwise(bounds)]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def json_fragments(arguments: str, size: int = _FRAGMENT_SIZE) -> list[str]:
    """`arguments` cut into fragments of about `size` characters, none of them valid JSON on its own
    (a fragment that would be, like `123` or `"x"`, grows until it is not). Joins back to `arguments`.

    Arguments of fewer than two characters stay whole: nothing shorter can be cut."""
    if len(arguments) < 2:
        return [arguments]
    fragments: list[str] = []
    start = 0
    while start < len(arguments):
        end = min(start + size, len(arguments))
        while end < len(arguments) and _is_json(arguments[start:end]):
            end += 1
        fragments.append(arguments[start:end])
        start = end
    if len(fragments) > 1 and _is_json(fragments[-1]):
        fragments[-2:] = [fragments[-2] + fragments[-1]]
    if len(fragments) == 1 and len(arguments) >= 2:
        middle = len(arguments) // 2  # a whole JSON value: two halves of a JSON text are never valid alone
        fragments = [arguments[:middle], arguments[middle:]]
    return fragments


def _fragment_size(arguments: str) -> int:
    """About a third of the arguments, and never under `_FRAGMENT_SIZE`: a few fragments per call, as the text."""
    return max(_FRAGMENT_SIZE, -(-len(arguments) // _ARGUMENT_FRAGMENTS))


def _arguments_text(args: Any) -> str:
    if args is None:
        return ""
    if isinstance(args, str):
        return args
    return json.dumps(args, ensure_ascii=False)


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
            arguments = _arguments_text(part.args)
            pieces = json_fragments(arguments, size=_fragment_size(arguments)) if arguments else [""]
            yield {
                index: DeltaToolCall(name=part.tool_name, json_args=pieces[0] or None, tool_call_id=part.tool_call_id)
            }
            for piece in pieces[1:]:
                yield {index: DeltaToolCall(json_args=piece)}


@dataclass
class _ScriptUsageStream(FunctionStreamedResponse):
    """FunctionModel's streamed response, reporting the script's usage instead of an estimate."""

    script_usage: RequestUsage = field(default_factory=RequestUsage)

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


def with_fixed_usage(stream: StreamedResponse, usage: RequestUsage) -> StreamedResponse:
    """`stream` (a FunctionModel stream, not iterated yet) as a response whose usage is `usage`.

    Built from the stream's own constructor fields, so it reads the same deltas; a stream of another kind is
    returned unchanged."""
    if not isinstance(stream, FunctionStreamedResponse):
        return stream
    values = {f.name: getattr(stream, f.name) for f in fields(stream) if f.init}
    return _ScriptUsageStream(**values, script_usage=usage)
