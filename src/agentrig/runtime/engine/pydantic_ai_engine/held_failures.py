"""A tool call that fails ends the run once its whole batch is done, and the first failing call in call order is
the one that ends it: the same history on every run and every pinned version (docs/events.md).

pydantic-ai runs the calls of one response in parallel and ends the run with the first exception to arrive,
cancelling the rest: which call is `failed` and which `interrupted` was timing (two failing tools raced), and so
was whether a sibling's result was kept (2.68 keeps those that finished, 2.38 those handled before the failure).
Its `parallel_ordered_events` mode would settle failures in call order, but at 2.38 it also drops the results of
calls that finished before an abort or a timeout, which the default mode keeps.

So the run keeps pydantic-ai's default mode, and `HeldFailures`, a run capability (`wrap_tool_execute`, 2.38 and
2.68), holds each call's exception and answers the call with a placeholder: the batch completes as if nothing
failed, its results in call order, and the engine stops the run before the next model request is sent. The first
failing call in call order then fails the turn; the placeholders are dropped, and the calls after it are closed as
interrupted (`cleanup.drop_answers_from_failed_call`). pydantic-ai's own signals (retry, deferral, approval) and
BaseExceptions (Ctrl-C, cancellation, `sys.exit`) pass as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.capabilities import AbstractCapability

from agentrig.runtime.engine.pydantic_ai_engine.run_failures import tool_failure
from agentrig.runtime.engine.seam import Attempt
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.cleanup import answered_ids, answered_tool_call_id
from agentrig.runtime.history.run_records import RunError
from agentrig.runtime.models.failures import classify
from agentrig.runtime.models.stops import ScriptedToolFailure

__all__ = ["HELD_RESULT", "HeldFailures"]

HELD_RESULT = "agentrig: this call failed; the run ends once the other calls of its response are done"
"""What pydantic-ai records for a failed call until the engine replaces it (never sent to a model)."""


@dataclass
class HeldFailures(AbstractCapability[Any]):
    """One run's held tool failures, by call id (a dataclass field: a copy pydantic-ai makes for the run shares it)."""

    failures: dict[str, BaseException] = field(default_factory=dict[str, BaseException])

    async def wrap_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, handler: Any) -> Any:
        try:
            return await handler(args)
        except Exception as error:
            if type(error).__module__.startswith("pydantic_ai"):  # a retry, a deferral, an approval: not a failure
                raise
            self.failures[call.tool_call_id] = error
            return HELD_RESULT

    def first_in_call_order(self, history: Sequence[Message]) -> tuple[str, RunError]:
        """The failing call that ends the run (the first in its response's order), and the run's error."""
        for message in reversed(history):
            for call in message.tool_calls if message.kind == "response" else ():
                if call.tool_call_id in self.failures:
                    return call.tool_call_id, _run_error(self.failures[call.tool_call_id], call.tool_call_id)
        call_id, error = next(iter(self.failures.items()))  # not in the history (cannot happen): still an error
        return call_id, _run_error(error, call_id)

    def unheld(self, attempt: Attempt) -> Attempt:
        """An attempt that was cancelled (an abort, a timeout, Ctrl-C) while a failed call was held: the failed
        calls' placeholders are dropped, so they close as interrupted, like their unfinished siblings."""
        if self.failures:
            attempt.messages = [
                message.with_parts(part for part in message.parts if answered_tool_call_id(part) not in self.failures)
                if message.kind == "request" and answered_ids(message) & self.failures.keys()
                else message
                for message in attempt.messages
            ]
        return attempt


def _run_error(error: BaseException, call_id: str) -> RunError:
    if isinstance(error, ScriptedToolFailure):  # a YAML tool's `fail:` names its call itself
        return classify(error)
    raised = tool_failure(error, {call_id})
    return raised.error if raised is not None else classify(error)
