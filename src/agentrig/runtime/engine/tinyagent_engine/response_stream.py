"""A model's response stream between the model and tinyagent's loop: where the tinyagent engine reports it.

tinyagent iterates the `StreamResponse` its stream function returns (`start`, `*_delta`..., `done`) and then
reads the final message from `result()`. `ObservedResponse` passes every event on unchanged, turns the deltas
into the event log's `StreamDelta`s (text, thought, tool-call argument fragments; a call's name on its first
fragment only, as pydantic-ai streams it), and hands the complete message to the engine before tinyagent acts
on it, so the engine can judge it (and parse tool calls written as text) while the loop waits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tinyagent.agent_types import AssistantMessage, AssistantMessageEvent

from agentrig.runtime.history.events import StreamDelta, StreamListener

__all__ = ["ObservedResponse"]


class ObservedResponse:
    """A model's response stream, reported as tinyagent consumes it: deltas to `listener`, the complete
    message to `on_response` (which may rewrite it) before tinyagent reads it from `result()`."""

    def __init__(
        self,
        inner: Any,
        *,
        listener: StreamListener | None,
        on_response: Callable[[AssistantMessage], AssistantMessage],
    ) -> None:
        self._inner = inner
        self._listener = listener
        self._on_response = on_response
        self._iterator: Any = None
        self._final: AssistantMessage | None = None
        self._opened = False
        self._named: set[str] = set()

    async def result(self) -> AssistantMessage:
        if self._final is None:
            self._final = self._on_response(await self._inner.result())
        return self._final

    def __aiter__(self) -> ObservedResponse:
        return self

    async def __anext__(self) -> AssistantMessageEvent:
        if self._iterator is None:
            self._iterator = self._inner.__aiter__()
        event: AssistantMessageEvent = await self._iterator.__anext__()
        listener = self._listener
        if listener is not None and event.type != "done":
            if not self._opened:
                self._opened = True
                listener.on_stream_open()
            delta = self._delta(event)
            if delta is not None:
                listener.on_stream_delta(delta)
        if event.type == "done":
            await self.result()
        return event

    def _delta(self, event: AssistantMessageEvent) -> StreamDelta | None:
        index = event.content_index or 0
        if event.type == "text_delta" and event.delta:
            return StreamDelta(part_index=index, kind="text", delta=event.delta)
        if event.type == "thinking_delta" and event.delta:
            return StreamDelta(part_index=index, kind="thought", delta=event.delta)
        if event.type == "tool_call_delta" and event.tool_call is not None:
            call_id = event.tool_call.id or ""
            first = call_id not in self._named
            self._named.add(call_id)
            if not event.delta and not first:
                return None
            name = event.tool_call.name if first else None
            return StreamDelta(
                part_index=index, kind="tool-call", delta=event.delta or "", tool_call_id=call_id, tool_name=name
            )
        return None
