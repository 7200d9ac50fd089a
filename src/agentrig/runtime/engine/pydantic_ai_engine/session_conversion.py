"""`SessionConversion`: the pydantic-ai form of a session kept between attempts, so a turn converts only the
messages it adds instead of the whole history both ways.

    conversion = SessionConversion()
    native = conversion.to_pydantic_ai(request.history)   # converts only what differs from the last attempt
    ... agent.iter(..., message_history=native) ...
    canonical = conversion.to_canonical(run.all_messages())  # the history's own messages come back converted once

It gives exactly what converting the whole history would: a cached message is reused only for an equal canonical
message at the same position (found by identity first: the session hands back the objects this returned), and a
message the run hands back is taken from the cache only when it is the very object it was given (pydantic-ai
passes the history through unchanged). The conversions themselves run with the cyclic GC paused, as the canonical
reader does: they build many small objects and no reference cycles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic_ai.messages import ModelMessage

from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.wire import no_cyclic_gc
from agentrig.runtime.models.conversion import to_canonical, to_pydantic_ai

__all__ = ["SessionConversion"]

_T = TypeVar("_T")


class SessionConversion:
    """Message-by-message conversions of one session's history, reused while the history keeps its prefix."""

    def __init__(self) -> None:
        self._given: list[Message] = []
        """The canonical history of the last `to_pydantic_ai`, then (after `to_canonical`) the canonical messages
        returned for it: the messages the next request's history is compared with."""
        self._native: list[ModelMessage] = []
        """`to_pydantic_ai` of `_given`, message by message."""
        self._round_trip: list[Message | None] = []
        """`to_canonical` of each of `_native` (None until first needed)."""

    def to_pydantic_ai(self, history: Sequence[Message]) -> list[ModelMessage]:
        """`to_pydantic_ai(history)`, converting only the messages after the prefix the last attempt shared."""
        kept = _shared_prefix(history, self._given)
        if kept == 0:
            added = _paused(lambda: to_pydantic_ai(history))
        else:
            try:
                added = _paused(lambda: to_pydantic_ai(history, start=kept))
            except Exception:
                added = to_pydantic_ai(history)  # raises the error a whole conversion names (message indexes)
                kept = 0
        self._given = list(history)
        self._native = [*self._native[:kept], *added]
        self._round_trip = [*self._round_trip[:kept], *([None] * len(added))]
        return list(self._native)

    def to_canonical(self, messages: Sequence[ModelMessage]) -> list[Message]:
        """`to_canonical(messages)`, reusing the conversion of the leading messages the last `to_pydantic_ai`
        returned (pydantic-ai hands the history back as the same objects)."""
        shared = 0
        for message, native in zip(messages, self._native, strict=False):
            if message is not native:
                break
            shared += 1
        missing = [index for index in range(shared) if self._round_trip[index] is None]
        if missing:
            converted = _paused(lambda: to_canonical([self._native[index] for index in missing]))
            if len(converted) != len(missing):  # never expected: one canonical message per pydantic-ai message
                return _paused(lambda: to_canonical(messages))
            for index, message in zip(missing, converted, strict=True):
                self._round_trip[index] = message
        head = [message for message in self._round_trip[:shared] if message is not None]  # all set above
        result = [*head, *_paused(lambda: to_canonical(messages[shared:]))]
        # The next request's history holds these objects: remember them in place of what was given, where
        # converting them again would give the cached pydantic-ai message (their round trip changed nothing).
        for index in range(shared):
            if head[index] is self._given[index] or head[index] == self._given[index]:
                self._given[index] = head[index]
            else:
                del self._given[index:], self._native[index:], self._round_trip[index:]
                break
        return result


def _shared_prefix(history: Sequence[Message], cached: Sequence[Message]) -> int:
    count = 0
    for message, known in zip(history, cached, strict=False):
        if message is not known and message != known:
            break
        count += 1
    return count


def _paused(convert: Callable[[], _T]) -> _T:
    with no_cyclic_gc():
        return convert()
