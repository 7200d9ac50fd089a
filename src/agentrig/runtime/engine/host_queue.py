"""What the host holds between turns, as the compatibility contract's runtime does: results of deferred calls
answered one at a time, and steering a cancelled turn did not deliver. Framework-free (both engines).

Host actions: a run that ends with several calls deferred to the host leaves them pending. A continuation that
answers only some of them does not run the agent: the results are held, the next pending call is handed over,
and only the continuation that answers the last one resumes the agent, with every held result at once (the
contract's "the model resumes only after the final result"; pydantic-ai itself refuses a partial
`DeferredToolResults`, 2.38 and 2.68).

Steering: a message is acknowledged once a model request carrying it was answered. One the turn's cancellation
left unacknowledged is taken out of the turn's saved messages (so it is never stored twice) and enqueued again
before the next turn's first request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentrig.runtime.history.canonical import Message, TextPart
from agentrig.runtime.history.cleanup import answered_ids
from agentrig.runtime.history.turn_controls import SteeringDelivery
from agentrig.scenarios.turn_controls import SteeringMessage

__all__ = ["HostQueue", "pending_call_ids"]


def pending_call_ids(history: Sequence[Message]) -> tuple[str, ...]:
    """The calls of the last response that nothing after it answers, in call order."""
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if message.kind == "response":
            answered: set[str] = set()
            for later in history[index + 1 :]:
                answered |= answered_ids(later)
            return tuple(call.tool_call_id for call in message.tool_calls if call.tool_call_id not in answered)
    return ()


class HostQueue:
    """Held host results and undelivered steering of one session (see the module docstring)."""

    def __init__(self) -> None:
        self.pending_calls: tuple[str, ...] = ()
        """Calls the last run left waiting for the host."""
        self._held: dict[str, Any] = {}
        self._steering: tuple[str, ...] = ()

    # --- host results ---

    def accept(self, results: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Take a continuation's results: every held result with them when they answer the last pending call (the
        agent resumes), else None (they are held, the agent does not run)."""
        held = {**self._held, **results}
        if self.pending_calls and any(call_id not in held for call_id in self.pending_calls):
            self._held = held
            self.pending_calls = tuple(call_id for call_id in self.pending_calls if call_id not in held)
            return None
        self._held = {}
        return held

    def after_run(self, history: Sequence[Message], *, pending_deferred: bool) -> None:
        """Note the calls a finished run left pending (none unless it ended deferring to the host)."""
        self.pending_calls = pending_call_ids(history) if pending_deferred else ()

    # --- steering ---

    def carried_steering(self) -> tuple[SteeringMessage, ...]:
        """Steering an earlier turn left undelivered, to enqueue before this turn's first request."""
        carried = tuple(SteeringMessage(text=text, after_request=0) for text in self._steering)
        self._steering = ()
        return carried

    def keep_undelivered(
        self, deliveries: Sequence[SteeringDelivery], history: list[Message], first_new: int
    ) -> list[Message]:
        """Hold the steering a cancelled run did not deliver, and take it out of the run's new messages."""
        # A capability part a cancelled run did not deliver is not carried to the next turn (only text is).
        undelivered = [delivery.text for delivery in deliveries if delivery.request is None and delivery.is_text]
        self._steering = (*self._steering, *undelivered)
        if not undelivered:
            return history
        kept: list[Message] = list(history[:first_new])
        for message in history[first_new:]:
            if message.kind == "request":
                parts = [p for p in message.parts if not (isinstance(p, TextPart) and p.content in undelivered)]
                if not parts and message.parts:
                    continue
                message = message.with_parts(parts)
            kept.append(message)
        return kept
