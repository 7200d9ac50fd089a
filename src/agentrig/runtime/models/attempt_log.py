"""What the provider layer did for one scenario (or one prompt): requests, attempts, retries, waits.

    log = AttemptLog()
    with recording_attempts(log):          # the scenario runner, `agentrig prompt`
        ...                                # every request the retrying model makes in this context is counted
    log.snapshot()                         # -> history.provider_attempts.ProviderAttempts, for usage.json, report.json

    with hearing_retries(event_log.request_retried):   # the event log: one `request_retry` event per retry
        ...

The retrying model finds both through context variables, as the run control is found: nothing is threaded through
pydantic-ai, and scenarios running side by side in one event loop each count their own (a task copies the context
it was started in). The log also knows which request is waiting for an answer right now, so a turn's timeout that
ends while one is can say that the provider did not answer (`timeouts.turn_timeout_error`). Framework-free.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from agentrig.runtime.history.provider_attempts import ProviderAttempts

__all__ = [
    "AttemptLog",
    "RequestInFlight",
    "RetryNotice",
    "current_attempt_log",
    "hearing_retries",
    "notify_retry",
    "recording_attempts",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryNotice:
    """One failed attempt that is retried: what the event log writes as a `request_retry` event."""

    request: int
    """The request's number in the scenario (from 1)."""
    attempt: int
    """The attempt that failed (from 1)."""
    status: int | None
    """Its HTTP status; None when there was no answer (a connection failure, no answer in time)."""
    kind: str
    """The failure's kind: rate_limit, server_error, connection or provider_timeout."""
    wait_s: float
    """Seconds waited before the next attempt."""
    message: str
    """The failure in one redacted line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestInFlight:
    """A request waiting for the provider's answer."""

    number: int
    provider: str
    model: str
    started: float
    """`time.monotonic()` when its current attempt was sent."""

    def describe(self) -> str:
        """`openai: request 2 to gpt-4o`."""
        return f"{self.provider}: request {self.number} to {self.model}"


class AttemptLog:
    """The counts of one scenario's requests; the retrying model feeds it (see the module docstring)."""

    def __init__(self) -> None:
        self.requests = 0
        self.attempts = 0
        self.retries = 0
        self.retry_wait_s = 0.0
        self.queue_wait_s = 0.0
        self.failed: Counter[str] = Counter()
        self.in_flight: dict[int, RequestInFlight] = {}
        self.cut_off: tuple[RequestInFlight, float] | None = None
        """The request a cancellation (the turn's timeout) took away while it waited, and how long it had waited."""

    def start_request(self) -> int:
        """A new request; its number in the scenario."""
        self.requests += 1
        self.cut_off = None
        return self.requests

    def sending(self, number: int, *, provider: str, model: str, queued_s: float) -> None:
        """An attempt of request `number` goes to the provider, after waiting `queued_s` for the limiter."""
        self.attempts += 1
        self.queue_wait_s += queued_s
        self.in_flight[number] = RequestInFlight(
            number=number, provider=provider, model=model, started=time.monotonic()
        )

    def answered(self, number: int, *, cancelled: bool = False) -> None:
        """The attempt in flight for request `number` is over: answered, failed, or `cancelled` while it waited."""
        request = self.in_flight.pop(number, None)
        if cancelled and request is not None:
            self.cut_off = (request, time.monotonic() - request.started)

    def failed_attempt(self, failure: str) -> None:
        """An attempt failed: `failure` is its HTTP status (`"429"`) or `"connection"` / `"timeout"`."""
        self.failed[failure] += 1

    def retrying(self, wait_s: float) -> None:
        """A retry follows, after `wait_s` seconds."""
        self.retries += 1
        self.retry_wait_s += wait_s

    def waiting_request(self) -> tuple[RequestInFlight, float] | None:
        """The request waiting longest for its answer now, or the one a cancellation just took away, with the seconds
        it waited (a turn's timeout is told after the cancellation it caused)."""
        waiting = min(self.in_flight.values(), key=lambda request: request.started, default=None)
        if waiting is not None:
            return waiting, time.monotonic() - waiting.started
        cut_off, self.cut_off = self.cut_off, None
        return cut_off

    def snapshot(self) -> ProviderAttempts | None:
        """The counts as a value; None when no request reached the provider layer (a scripted or replayed run)."""
        if not self.requests:
            return None
        return ProviderAttempts(
            requests=self.requests,
            attempts=self.attempts,
            retries=self.retries,
            retry_wait_s=round(self.retry_wait_s, 3),
            queue_wait_s=round(self.queue_wait_s, 3),
            failed=dict(sorted(self.failed.items())),
        )


_log: ContextVar[AttemptLog | None] = ContextVar("agentrig_attempt_log", default=None)
_retry_listener: ContextVar[Callable[[RetryNotice], None] | None] = ContextVar("agentrig_retry_listener", default=None)


def current_attempt_log() -> AttemptLog | None:
    """The log of the scenario (or prompt) this code runs for, if one is recording."""
    return _log.get()


@contextmanager
def recording_attempts(log: AttemptLog) -> Generator[AttemptLog]:
    """Count the requests made in this context (and the tasks it starts) in `log`."""
    token = _log.set(log)
    try:
        yield log
    finally:
        _log.reset(token)


@contextmanager
def hearing_retries(listener: Callable[[RetryNotice], None]) -> Generator[None]:
    """Tell `listener` of every retry decided in this context."""
    token = _retry_listener.set(listener)
    try:
        yield
    finally:
        _retry_listener.reset(token)


def notify_retry(notice: RetryNotice) -> None:
    """Tell the listener of this context, if any, of a retry."""
    listener = _retry_listener.get()
    if listener is not None:
        listener(notice)
