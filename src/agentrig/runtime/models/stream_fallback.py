"""Fallback tool-call parsing for a streamed response.

A streamed response is assembled by pydantic-ai from deltas and read once, through `StreamedResponse.get()`,
when the stream ends; that is the one point where text holding calls written as text can become tool calls,
as `RequestModel` does for a plain response. The deltas already delivered stay what the model sent (the
text with the `<tool_call>` block); the response the run continues with, and stores, holds the parsed calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import StreamedResponse

__all__ = ["parse_fallback_on_get"]

_REWRITE_ATTRIBUTE = "_agentrig_rewrite_response"
_parsing_classes: dict[type[StreamedResponse], type[StreamedResponse]] = {}


def _parsing_class(base: type[StreamedResponse]) -> type[StreamedResponse]:
    """`base` with a `get()` that applies fallback parsing (one subclass per stream class, made once)."""
    made = _parsing_classes.get(base)
    if made is not None:
        return made

    def get(self: StreamedResponse) -> ModelResponse:
        rewrite: Callable[[ModelResponse], ModelResponse] = getattr(self, _REWRITE_ATTRIBUTE)
        return rewrite(base.get(self))

    made = type(f"FallbackParsing{base.__name__}", (base,), {"get": get})
    _parsing_classes[base] = made
    return made


def parse_fallback_on_get(
    stream: StreamedResponse, rewrite: Callable[[ModelResponse], ModelResponse]
) -> StreamedResponse:
    """`stream`, whose `get()` now returns `rewrite(response)` (the fallback parsing, see the docstring).

    The stream object itself is kept (its class becomes a subclass adding only `get`): pydantic-ai and the
    provider hold references to it, and its state lives in private fields no wrapper could share."""
    instance: Any = stream
    setattr(instance, _REWRITE_ATTRIBUTE, rewrite)
    instance.__class__ = _parsing_class(type(stream))
    return stream
