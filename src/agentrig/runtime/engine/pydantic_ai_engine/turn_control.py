"""The host's actions during one pydantic-ai run: steering messages and a cancellation point.

Everything goes through pydantic-ai's public run control (every pinned version, 2.38 on):

- steering `from_call`: `RunContext.enqueue(text)` from a `wrap_tool_execute` hook, in the tool's own context,
  before the tool runs; `after_call` / `after_request`: `AgentRun.enqueue(text)` just before the next
  `ModelRequestNode` runs. Both with `priority='asap'`: the message rides with the next model request.
- delivery: a `wrap_model_request` hook sees every request the model is sent. A message is *carried* by the
  first request whose input holds it, and *acknowledged* once that request is answered; a message never
  acknowledged (the run was cancelled first) is pending, and the orchestrator enqueues it again before the next
  turn's first request.
- cancellation: through the run's `CancellationToken` (`RunControl.stop`): before the Nth `ModelRequestNode`
  runs, after K chunks of the Nth response (a plain run receives the whole response, keeps the text of its
  first K chunks and never hands it on; with K = 0 neither run asks the model), or while a given tool runs (once
  the other calls of its response have finished). A response cut after its first chunk counts as one request
  with its usage, plain or streamed, on every version (`held_usage`).

Where pydantic-ai keeps a steering message in its own history differs by version (content enqueued from a
tool is a request of its own on 2.38, part of the tool-return request on 2.68; `AgentRun.enqueue` is a request
of its own on both): `deliveries` reports it, and the scenario states the placement it expects per version.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunCancelled
from pydantic_ai.capabilities import Hooks
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse

from agentrig.runtime.engine.seam import AttemptRequest
from agentrig.runtime.history.turn_controls import CancellationSnapshot, SteeringDelivery
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.models.conversion import to_canonical
from agentrig.runtime.models.run_control import RunControl
from agentrig.runtime.models.scripted_stream import answered_text_chunks, response_deltas
from agentrig.scenarios.turn_controls import SteeringMessage

__all__ = ["TurnControl"]

_ANSWER_KINDS = ("tool-return", "retry-prompt")


@dataclass(slots=True)
class _Steering:
    message: SteeringMessage
    carried: bool
    enqueued: bool = False
    carried_by: int | None = None
    """The request whose input first held it."""
    acknowledged: int | None = None
    """That request, once it was answered."""
    counts: list[int] = field(default_factory=list[int])


def _occurrences(messages: Iterable[ModelMessage], message: SteeringMessage) -> int:
    """How often the request parts of `messages` hold the steering message: its user text, or its capability part
    (the same kind and content; pydantic-ai renders a capability part only inside the model's own request)."""
    capability = message.capability
    if capability is None:
        return sum(
            1
            for item in messages
            if isinstance(item, ModelRequest)
            for part in item.parts
            if part.part_kind == "user-prompt" and part.content == message.text
        )
    return sum(1 for item in messages if isinstance(item, ModelRequest) and _holds_capability(item, capability))


def _holds_capability(request: ModelRequest, capability: dict[str, Any]) -> bool:
    """Whether a request holds the capability part: stored (the run's history), or as pydantic-ai 2.78 renders it
    into the model's request (the content as a text item of a user prompt, or the text of a system prompt)."""
    content = capability.get("content")
    for part in request.parts:
        if part.part_kind == "capability":
            if getattr(part, "kind", None) == capability["kind"] and getattr(part, "content", None) == content:
                return True
        elif isinstance(content, str) and part.part_kind in ("user-prompt", "system-prompt"):
            value: Any = getattr(part, "content", None)
            texts = [value] if isinstance(value, str) else [getattr(item, "content", None) for item in value]
            if part.part_kind == "user-prompt" and not isinstance(value, str) and content in texts:
                return True
            if part.part_kind == "system-prompt" and value == content:
                return True
    return False


def _content(message: SteeringMessage) -> Any:
    """What `enqueue` is given: the text, or the capability part as pydantic-ai builds it from its stored form."""
    if message.capability is None:
        return message.text
    return pydantic_ai_compat.capability_part(message.capability)


class TurnControl:
    """One run's steering and cancellation (see the module docstring). Inert when the request has neither."""

    def __init__(self, request: AttemptRequest, control: RunControl, *, streamed: bool) -> None:
        self._items = [
            _Steering(message, carried=index < request.carried_steering)
            for index, message in enumerate(request.steering)
        ]
        self._cancel = request.cancel
        self._control = control
        self._streamed = streamed
        self._request_nodes = 0
        self._requests_sent = 0
        self._responses = 0
        self._batch: frozenset[str] = frozenset()
        self._finished: set[str] = set()
        self._batch_changed = asyncio.Event()
        self._held = Usage()

    @property
    def active(self) -> bool:
        """Whether the run has anything to do (no hooks are added otherwise)."""
        return bool(self._items) or self._cancel is not None

    def capabilities(self) -> list[Any]:
        """The per-run capability holding the hooks (empty when inert)."""
        if not self.active:
            return []
        return [Hooks(model_request=self._wrap_model_request, tool_execute=self._wrap_tool_execute)]

    @property
    def held_usage(self) -> Usage:
        """What the cancelled run's usage lacks of the response a plain `during_response` cut held (zero when none
        was held): the request, and on some versions its tokens (`pydantic_ai_compat.uncounted_held_response`)."""
        return self._held

    # --- called by the engine's drive loop ---

    def before_request_node(self, run: Any, request: ModelRequest) -> bool:
        """A `ModelRequestNode` is about to run: enqueue what is due; True when the run is cancelled here."""
        self._request_nodes += 1
        number = self._request_nodes
        returned = {getattr(p, "tool_call_id", None) for p in request.parts if p.part_kind in _ANSWER_KINDS}
        for item in self._items:
            message = item.message
            due = (message.after_request == 0 and number == 1) or (
                message.after_call is not None and message.after_call in returned
            )
            if due and not item.enqueued:
                run.enqueue(_content(message), priority="asap")
                item.enqueued = True
        if self._cancel is not None and self._cancel.before_request == number:
            self._control.stop("abort", where=f"before model request {number}")
            return True
        return False

    def on_response(self, run: Any, response: ModelResponse) -> None:
        """A response arrived (whole, also when streamed): it acknowledges the steering its request carried, what
        is due after it is enqueued (a final answer then gets one more request), and its calls are the batch a
        `during_call` point waits on."""
        self._responses += 1
        for item in self._items:
            if item.carried_by == self._requests_sent and item.acknowledged is None:
                item.acknowledged = self._requests_sent
            if item.message.after_request == self._responses and not item.enqueued:
                run.enqueue(_content(item.message), priority="asap")
                item.enqueued = True
        self._batch = frozenset(call.tool_call_id for call in response.tool_calls)
        self._finished = set()

    def cuts_stream(self, chunks: int) -> bool:
        """Whether the response streaming now is cut before its next chunk (`chunks` have arrived)."""
        point = self._cancel
        return (
            point is not None
            and point.during_response == self._requests_sent
            and chunks >= point.after_chunks
            and self._control.reason is None
        )

    def cut_stream(self, partial_text: str) -> None:
        """Cancel the run in the middle of the response streaming now, keeping the text that arrived."""
        self._control.stop("abort", partial_text=partial_text, where=f"during model response {self._requests_sent}")

    # --- the hooks ---

    async def _wrap_model_request(self, ctx: Any, *, request_context: Any, handler: Any) -> Any:
        self._requests_sent += 1
        number = self._requests_sent
        point = self._cancel
        cut = point if point is not None and point.during_response == number and not self._streamed else None
        before = Usage.from_object(ctx.usage)
        try:
            if cut is not None and cut.after_chunks == 0:
                # Cut before the first chunk: a streamed run is cut as the stream is handed over, before the
                # model's first chunk is pulled, so the scripted step never runs (2.38 and 2.68); a plain run does
                # not ask the model either, and neither counts anything of this request.
                self._control.stop("abort", partial_text="", where=f"during model response {number}")
                await asyncio.Event().wait()  # never answers: the cancellation wakes this await
            response = await handler(request_context)
        finally:
            # Counted once the request went out: 2.68 adds queued messages to the request inside the handler
            # (2.38 before the hook runs), so only then does `messages` hold what the model was sent.
            self._count_input(request_context.messages, number)
        if cut is not None:
            chunking = answered_text_chunks.get()  # a scripted step's explicit chunks, as a stream sends them
            deltas = list(response_deltas(response.parts, text_chunks=chunking))[: cut.after_chunks]
            partial = "".join(delta for delta in deltas if isinstance(delta, str))
            after = Usage.from_object(ctx.usage)
            self._held = pydantic_ai_compat.uncounted_held_response(response, before=before, after=after)
            self._control.stop("abort", partial_text=partial, where=f"during model response {number}")
            await asyncio.Event().wait()  # never answers: the cancellation wakes this await
        return response

    def _count_input(self, messages: list[ModelMessage], number: int) -> None:
        for item in self._items:
            count = _occurrences(messages, item.message)
            item.counts.append(count)
            if count and item.carried_by is None:
                item.carried_by = number

    async def _wrap_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, handler: Any) -> Any:
        for item in self._items:
            if item.message.from_call == call.tool_call_id and not item.enqueued:
                ctx.enqueue(_content(item.message), priority="asap")
                item.enqueued = True
        if self._cancel is not None and self._cancel.during_call == call.tool_call_id:
            others = self._batch - {call.tool_call_id}
            while not others <= self._finished:
                self._batch_changed.clear()
                await self._batch_changed.wait()
            self._control.stop("abort", where=f"while call {call.tool_call_id} ran")
            await asyncio.Event().wait()  # never returns: the cancellation wakes this await
        try:
            return await handler(args)
        finally:
            self._finished.add(call.tool_call_id)
            self._batch_changed.set()

    # --- what the run left ---

    def deliveries(self, messages: list[ModelMessage]) -> tuple[SteeringDelivery, ...]:
        """Each steering message's delivery, from the run's own history (`all_messages()` or the snapshot)."""
        version = pydantic_ai_compat.PYDANTIC_AI_VERSION
        found: list[SteeringDelivery] = []
        for item in self._items:
            holders = [m for m in messages if isinstance(m, ModelRequest) and _occurrences([m], item.message)]
            placement = None
            if holders:
                with_results = any(p.part_kind in _ANSWER_KINDS for p in holders[0].parts)
                placement = "with_tool_return" if with_results else "own_request"
            found.append(
                SteeringDelivery(
                    text=item.message.label,
                    request=item.acknowledged,
                    input_counts=tuple(item.counts),
                    stored_count=_occurrences(messages, item.message),
                    stored_as=placement,
                    carried_over=item.carried,
                    framework_version=version,
                    is_text=item.message.capability is None,
                )
            )
        return tuple(found)

    def snapshot(self, cancelled: RunCancelled) -> CancellationSnapshot | None:
        """The snapshot of a run this control cancelled (None when something else stopped it)."""
        if self._cancel is None:
            return None
        usage = Usage.from_object(pydantic_ai_compat.run_usage(cancelled)) + self._held
        return CancellationSnapshot(
            messages=tuple(to_canonical(list(cancelled.new_messages()))),
            requests=usage.requests,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            streamed=self._streamed,
        )
