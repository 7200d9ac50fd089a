"""`EventingEngine`: any engine, with its runs written to an `EventLog` (docs/events.md).

It wraps the engine the orchestrator drives and the observer the orchestrator passes in: every callback
goes on to the orchestrator unchanged and is also turned into events (a request sent starts a turn, a
response ends the message and starts its tool calls); a streaming engine's deltas (`StreamListener`)
become `message_update`s; the `Attempt` the engine returns closes the run with `agent_end`.
"""

from __future__ import annotations

from typing import Protocol

from agentrig.runtime.engine.seam import Attempt, AttemptRequest, Engine, TurnObserver
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.events import EventLog, StreamDelta
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.user_content import describe_prompt
from agentrig.runtime.models.attempt_log import RetryNotice, hearing_retries
from agentrig.runtime.models.stops import RunStopped

__all__ = ["EventingEngine", "UsageSource"]


class UsageSource(Protocol):
    """Where each response's usage comes from (`models.usage_tap.UsageTap` for pydantic-ai, the tinyagent
    engine itself for tinyagent): a protocol, so this module imports no agent framework."""

    def take_usage(self) -> Usage | None:
        """The latest response's usage, once."""
        ...


class _EventObserver:
    """The orchestrator's observer, with events on the side (a `TurnObserver` and a `StreamListener`)."""

    def __init__(self, inner: TurnObserver, log: EventLog, tap: UsageSource | None) -> None:
        self.inner = inner
        self.log = log
        self.tap = tap

    def on_node(self) -> None:
        self.inner.on_node()

    def on_model_request(self, request: Message) -> RunStopped | None:
        stopped = self.inner.on_model_request(request)
        self.log.request_sent(request, sent=stopped is None)
        return stopped

    def on_model_response(self, response: Message) -> RunStopped | None:
        stopped = self.inner.on_model_response(response)
        usage = self.tap.take_usage() if self.tap is not None else None
        self.log.response_received(response, usage=usage, runs_tools=stopped is None)
        return stopped

    def on_stream_open(self) -> None:
        self.log.stream_opened()

    def on_stream_delta(self, delta: StreamDelta) -> None:
        self.log.stream_delta(delta)


class EventingEngine:
    """Runs `inner` and records its runs in `log`; `tap` (the inner engine's model, if it is one) gives
    each response's usage."""

    def __init__(self, inner: Engine, log: EventLog, *, tap: UsageSource | None = None) -> None:
        self.inner = inner
        self.log = log
        self.tap = tap

    @property
    def label(self) -> str:
        return self.inner.label

    @property
    def model_name(self) -> str | None:
        return self.inner.model_name

    async def attempt(self, request: AttemptRequest, observer: TurnObserver) -> Attempt:
        self.log.start_run(describe_prompt(request.prompt))
        with hearing_retries(self._retried):  # the provider layer's retries, as `request_retry` events
            attempt = await self.inner.attempt(request, _EventObserver(observer, self.log, self.tap))
        output = attempt.output if isinstance(attempt.output, str) or attempt.output is None else str(attempt.output)
        error = (attempt.error.kind, attempt.error.message) if attempt.error is not None else None
        self.log.end_run(
            messages=attempt.messages,
            output=output,
            usage=attempt.usage,
            error=error,
            interrupted=attempt.interrupted,
            pending_deferred=attempt.pending_deferred,
            failed_call=(attempt.failed_call_id, error[1]) if attempt.failed_call_id and error else None,
        )
        return attempt

    def _retried(self, notice: RetryNotice) -> None:
        self.log.request_retried(
            request=notice.request,
            attempt=notice.attempt,
            status=notice.status,
            kind=notice.kind,
            wait_s=notice.wait_s,
            message=notice.message,
        )
