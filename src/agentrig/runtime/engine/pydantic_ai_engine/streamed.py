"""`PydanticAIStreamedEngine`: the same agent run as `PydanticAIEngine`, through pydantic-ai's streaming API.

It walks `Agent.iter` node by node like the plain engine, reporting the same observer callbacks, but opens
each model request as a stream (`ModelRequestNode.stream`, which calls the model's `request_stream`):
the response arrives as deltas, which go to the observer when it is a `StreamListener` (the event log's
`message_update`), and the response the run continues with is the one pydantic-ai assembles from them.
`agent.run_stream()` is not used: it ends the run at the first text, so a response with text and tool
calls would never be followed up; `iter` + `node.stream` keeps the whole loop, as `run_stream_events()`
does, while still letting the observer stop the run before a request is sent.

A stream that breaks off (a provider error or a dropped connection mid-response) fails the run like a
plain request would, and the text that had arrived is kept: the run is marked interrupted, so the stored
history ends with `[INTERRUPTED] <partial text>`. A timeout or Ctrl-C mid-response ends the same way, with
that one response in place of the partial one pydantic-ai keeps.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelRequest,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
)
from pydantic_ai.run import AgentRun

from agentrig.runtime.engine.pydantic_ai_engine.held_failures import HeldFailures
from agentrig.runtime.engine.pydantic_ai_engine.plain import PydanticAIEngine, one_message
from agentrig.runtime.engine.seam import Attempt, AttemptRequest, TurnObserver
from agentrig.runtime.history.events import StreamDelta, StreamListener
from agentrig.runtime.models.stops import RunStopped
from agentrig.runtime.runfolder.jsonio import dumps

__all__ = ["PydanticAIStreamedEngine", "stream_delta"]


def _arguments_fragment(args: Any) -> str:
    if args is None:
        return ""
    return args if isinstance(args, str) else dumps(args).decode()


def stream_delta(event: object) -> StreamDelta | None:
    """The canonical delta of a pydantic-ai stream event (None for events that carry no content)."""
    if isinstance(event, PartStartEvent):
        part = event.part
        if isinstance(part, TextPart):
            return StreamDelta(part_index=event.index, kind="text", delta=part.content)
        if isinstance(part, ThinkingPart):
            return StreamDelta(part_index=event.index, kind="thought", delta=part.content)
        if isinstance(part, ToolCallPart):
            return StreamDelta(
                part_index=event.index,
                kind="tool-call",
                delta=_arguments_fragment(part.args),
                tool_call_id=part.tool_call_id,
                tool_name=part.tool_name,
            )
        return None
    if isinstance(event, PartDeltaEvent):
        delta = event.delta
        if isinstance(delta, TextPartDelta):
            return StreamDelta(part_index=event.index, kind="text", delta=delta.content_delta)
        if isinstance(delta, ThinkingPartDelta):
            if not delta.content_delta:
                return None  # a signature arriving
            return StreamDelta(part_index=event.index, kind="thought", delta=delta.content_delta)
        if isinstance(delta, ToolCallPartDelta):
            return StreamDelta(
                part_index=event.index,
                kind="tool-call",
                delta=_arguments_fragment(delta.args_delta),
                tool_call_id=delta.tool_call_id,
                tool_name=delta.tool_name_delta,
            )
    return None


class PydanticAIStreamedEngine(PydanticAIEngine):
    """`PydanticAIEngine` with every model request streamed (see the module docstring)."""

    streams = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._partial_text: list[str] | None = None
        """Text of the response streaming now; None once it completed."""

    async def attempt(self, request: AttemptRequest, observer: TurnObserver) -> Attempt:
        self._partial_text = None
        attempt = await super().attempt(request, observer)
        partial = "".join(self._partial_text or ())
        cut_with_content = False
        if (attempt.error is not None or attempt.interrupted) and self._partial_text is not None:
            # The stream broke off mid-response (a dropped connection, or a timeout or abort while it streamed):
            # keep what had arrived, as an abort keeps its partial text. pydantic-ai keeps the broken-off
            # response (state `interrupted`); the `[INTERRUPTED]` response the orchestrator appends carries its
            # text, so it replaces it rather than following it.
            attempt.interrupted = True
            attempt.partial_text = attempt.partial_text or partial
            added = attempt.messages[len(request.history) :]
            if added and added[-1].kind == "response" and added[-1].state == "interrupted":
                cut_with_content = bool(added[-1].parts)
                attempt.messages = attempt.messages[:-1]
        if attempt.error is not None or attempt.interrupted:
            # A streamed request that failed or was cancelled before its response is counted as a request by
            # some versions (2.38 on a cancel) and leaves an empty `interrupted` response in others (a refused
            # stream; cleanup drops it). Only the requests that were answered count, in whole or in part (a
            # response cut after its first chunk, now the `[INTERRUPTED]` one, as 2.68 and a plain run's cut
            # count it), so that a script's usage is the same streamed or not, on every version.
            added = attempt.messages[len(request.history) :]
            answered = sum(1 for m in added if m.kind == "response" and (m.parts or m.state != "interrupted"))
            answered += cut_with_content
            if attempt.usage.requests > answered:
                attempt.usage = replace(attempt.usage, requests=answered)
            if attempt.cancellation is not None and attempt.cancellation.requests > answered:
                attempt.cancellation = replace(attempt.cancellation, requests=answered)  # the same run's count
        return attempt

    async def _drive(
        self, run: AgentRun[Any, Any], observer: TurnObserver, held: HeldFailures
    ) -> tuple[RunStopped | None, ModelRequest | None]:
        listener = observer if isinstance(observer, StreamListener) else None
        turn = self._turn
        node = run.next_node
        while not Agent.is_end_node(node):
            observer.on_node()
            if Agent.is_model_request_node(node):
                if held.failures:  # a tool call of the last batch failed: the run ends here (`held_failures`)
                    return None, node.request
                if turn is not None and turn.before_request_node(run, node.request):
                    node = await run.next(node)  # cancelled before the request is sent: raises RunCancelled
                    continue
                stopped = observer.on_model_request(one_message(node.request))
                if stopped is not None:
                    return stopped, node.request
                chunks = 0
                async with node.stream(run.ctx) as stream:
                    if turn is not None and turn.cuts_stream(chunks):
                        turn.cut_stream("")
                    async for event in stream:
                        chunks += isinstance(event, PartStartEvent | PartDeltaEvent)
                        self._on_stream_event(event, listener)
                        if turn is not None and turn.cuts_stream(chunks):  # pulls no chunk past the cut
                            turn.cut_stream("".join(self._partial_text or ()))
                self._partial_text = None
            elif Agent.is_call_tools_node(node):
                if turn is not None:
                    turn.on_response(run, node.model_response)
                stopped = observer.on_model_response(one_message(node.model_response))
                if stopped is not None:
                    return stopped, None
            node = await run.next(node)
        return None, None

    def _on_stream_event(self, event: object, listener: StreamListener | None) -> None:
        """One event of the response streaming now: its text kept, its delta handed to the listener."""
        if self._partial_text is None:
            # The first event: the response has begun (a failure before it, e.g. a refused request, is a plain
            # error; one after it breaks off a response).
            self._partial_text = []
            if listener is not None:
                listener.on_stream_open()
        delta = stream_delta(event)
        if delta is None or (not delta.delta and delta.tool_name is None):
            return
        if delta.kind == "text":
            self._partial_text.append(delta.delta)
        if listener is not None:
            listener.on_stream_delta(delta)
