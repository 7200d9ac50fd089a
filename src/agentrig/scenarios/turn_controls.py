"""What the host does during a turn besides answering: steering messages and a cancellation point.

Kept apart from `model.py` (whose `Turn` inherits `TurnControls`), with the same rules: unknown keys are
errors, field docstrings become the schema's descriptions and docs/scenarios.md. A point that names a call
or a request the turn's own script never makes is an error at load time, located at its line.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from agentrig.scenarios._strict import Strict

__all__ = ["CancelPoint", "SteeringMessage", "check_turn_points"]


def _one_point(model: Strict, names: tuple[str, ...], what: str) -> None:
    given = [name for name in names if getattr(model, name) is not None]
    if len(given) != 1:
        raise ValueError(f"{what} needs exactly one of {', '.join(names)} (got {', '.join(given) or 'none'})")


class SteeringMessage(Strict):
    """A message the host enqueues while the turn runs, with pydantic-ai's `enqueue(priority='asap')`: it rides
    with the next model request and is acknowledged once that request is answered. Exactly one of `text` or
    `capability` is the message; exactly one of `from_call`, `after_call` or `after_request` says when it is
    enqueued."""

    text: str | None = Field(default=None, min_length=1)
    """The message, as user text."""
    capability: dict[str, Any] | None = None
    """The message as a capability part (pydantic-ai 2.78+ `CapabilityPart`), as pydantic-ai stores it: its `kind`
    (`namespace.name`), its `content` and its other fields (`source`, `scope`, `rendering`, the kind's own typed
    fields). pydantic-ai renders it before the model sees it. `agentrig scaffold` writes this for a capability part
    a recorded run's tool enqueued."""
    from_call: str | None = None
    """Enqueued from inside the tool running this call (`RunContext.enqueue`), before the tool itself runs."""
    after_call: str | None = None
    """Enqueued by the host (`AgentRun.enqueue`) once this call has returned, before the next request is sent."""
    after_request: int | None = Field(default=None, ge=0)
    """Enqueued by the host once the turn's Nth model request was answered (0: before the first request)."""

    @model_validator(mode="after")
    def _one_steering_point(self) -> SteeringMessage:
        _one_point(self, ("text", "capability"), "a steering message")
        _one_point(self, ("from_call", "after_call", "after_request"), "a steering message")
        if self.capability is not None and not isinstance(self.capability.get("kind"), str):
            raise ValueError("capability needs its `kind` (namespace.name), as pydantic-ai stores the part")
        return self

    @property
    def label(self) -> str:
        """How checks and reports name the message: its text, or `capability KIND`."""
        if self.capability is not None:
            return f"capability {self.capability['kind']}"
        return self.text or ""


class CancelPoint(Strict):
    """Where the turn is cancelled, through pydantic-ai's `CancellationToken`: the run raises `RunCancelled`
    with its snapshot, and the turn ends interrupted (`[INTERRUPTED]`, unfinished calls closed). Exactly one of
    `before_request`, `during_response` or `during_call`."""

    before_request: int | None = Field(default=None, ge=1)
    """The turn's Nth model request is never sent."""
    during_response: int | None = Field(default=None, ge=1)
    """The answer to the turn's Nth model request is cut off after `after_chunks` streamed chunks (a plain run
    never receives it; the partial text is kept in `[INTERRUPTED]` either way). The cut request counts in the
    turn's usage as one request with the step's usage, plain or streamed (docs/streaming.md)."""
    after_chunks: int = Field(default=0, ge=0)
    """With `during_response`: how many chunks of the response arrive first (the step's deltas, as `--stream`
    sends them). 0: none, the model is never asked and the request counts nothing."""
    during_call: str | None = None
    """While the tool running this call works: the other calls of the same response finish first, this one
    never does."""

    @model_validator(mode="after")
    def _one_cancel_point(self) -> CancelPoint:
        _one_point(self, ("before_request", "during_response", "during_call"), "a cancel point")
        if self.after_chunks and self.during_response is None:
            raise ValueError("after_chunks belongs to during_response")
        return self


def check_turn_points(steps: tuple[Any, ...], steer: tuple[SteeringMessage, ...], cancel: CancelPoint | None) -> None:
    """A `ValueError` for a steering or cancel point the turn's script never reaches (`Turn`'s validator)."""
    if not steps:
        return  # no script (a real model, or a continuation): the points are checked when the turn runs
    call_ids = {call.id for step in steps for call in step.tool_calls}
    answered = sum(1 for step in steps if step.summary is None)
    for index, message in enumerate(steer):
        call = message.from_call or message.after_call
        if call is not None and call not in call_ids:
            raise ValueError(f"steer[{index}]: no scripted step of this turn makes the call {call!r}")
        if message.after_request is not None and message.after_request >= answered and cancel is None:
            # (a cancelled turn may leave it pending: it is then delivered with the next turn's first request)
            raise ValueError(
                f"steer[{index}]: after_request {message.after_request} needs a request after it, and the"
                f" turn's script answers {answered}"
            )
    point = cancel
    if point is not None:
        if point.during_call is not None and point.during_call not in call_ids:
            raise ValueError(f"cancel: no scripted step of this turn makes the call {point.during_call!r}")
        if point.during_response is not None and point.during_response > answered:
            raise ValueError(f"cancel: the turn's script answers {answered} request(s), not {point.during_response}")
        if point.before_request is not None and point.before_request > answered + 1:
            raise ValueError(
                f"cancel: before_request {point.before_request} is never reached: the turn's script answers"
                f" {answered} request(s)"
            )
