"""The run-wide limiter: which request to a provider may go now, for every worker of a run.

    core = LimiterCore(ProviderOptions(max_concurrency=8, rpm=120))
    limiter = LocalLimiter(core)                 # in this process (`limiter_service` serves it to workers)
    slot = await limiter.acquire("openai@https://api.openai.com/v1")
    ...                                          # one attempt of one request
    limiter.release(slot, tokens=512)            # or pause_s=2.0 after a 429

Per provider (a key: the provider and its base URL) it keeps

- the bound: at most `max_concurrency` slots held at once; with `adaptive_max` the bound grows by one after a
  bound's worth of answers without a 429, up to `adaptive_max`, and halves on every 429 (AIMD, as TCP does);
- `--rpm`: requests spaced evenly, one every 60/rpm seconds (a GCRA with no burst). A window of a minute would let a
  whole minute's requests go in the first second, and a provider that counts over 10 s would answer most with 429;
- `--tpm`: the same schedule for tokens. A request reserves the mean tokens of the requests answered so far, and
  its release corrects the schedule with what it really used; until one has been answered, one goes at a time,
  and that first one's tokens count from its answer (it pays for the client's start, so it may reach the provider
  long after its grant);
- a pause: a 429 stops every request to that provider for the wait the retry policy chose (the provider's
  `Retry-After`), rather than letting the others run into the same limit.

Requests wait in arrival order. Standard library only and thread-safe: grants are handed to callbacks, outside the
lock, from the thread that made them possible (a release, a new request, or the timer thread for a time-based wait).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from agentrig.runtime.models.provider_options import ProviderOptions
from agentrig.runtime.models.spend_gate import SpendGate

__all__ = ["RATE_MARGIN", "Limiter", "LimiterCore", "LocalLimiter", "Slot"]

RATE_MARGIN = 0.05
"""The schedule runs this much below `--rpm` and `--tpm`. A request granted on time reaches the provider a little
early or late (the client builds it, a worker hears of its grant over a socket), and requests bunched by that
jitter J into a provider's window of W seconds are one too many unless the schedule keeps J/W in hand: 5% covers
250 ms of jitter on a 5-second window, and is nothing to notice on a minute's."""

Grant = Callable[[int], None]
"""Called with the ticket once the request may go."""


@dataclass(frozen=True, slots=True)
class Slot:
    """A granted request: return it with `release` (or `LimiterCore.cancel`) exactly once."""

    ticket: int
    key: str


@dataclass(slots=True)
class _Waiter:
    ticket: int
    on_grant: Grant


@dataclass(slots=True)
class _Provider:
    bound: int
    in_flight: dict[int, float] = field(default_factory=dict[int, float])
    """Granted tickets and the tokens each reserved."""
    waiters: deque[_Waiter] = field(default_factory=deque[_Waiter])
    next_request_at: float = 0.0
    next_tokens_at: float = 0.0
    mean_tokens: float | None = None
    answered: int = 0
    paused_until: float = 0.0
    clean_answers: int = 0
    """Answers since the bound last changed (adaptive mode)."""


class LimiterCore:
    """The limiter's state for every provider of a run; thread-safe (see the module docstring)."""

    def __init__(
        self,
        options: ProviderOptions,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_cost_usd: float | None = None,
    ) -> None:
        self.options = options
        self.spend = SpendGate(max_cost_usd)
        """The run's `--max-cost`, request by request (`spend_gate`)."""
        self._clock = clock
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._providers: dict[str, _Provider] = {}
        self._owner: dict[int, str] = {}
        self._tickets = itertools.count(1)
        self._retries_left = options.retry_budget
        self._request_interval = 60.0 / options.rpm * (1 + RATE_MARGIN) if options.rpm else 0.0
        self._tokens_per_second = options.tpm / 60.0 / (1 + RATE_MARGIN) if options.tpm else 0.0
        self._timer: threading.Thread | None = None
        self._closed = False

    # ------------------------------------------------------------------------------------------- the interface

    def request(self, key: str, on_grant: Grant) -> int:
        """Queue a request to provider `key`; `on_grant(ticket)` is called when it may go (perhaps before this
        returns, in this thread). Returns the ticket: `release` or `cancel` it."""
        with self._lock:
            ticket = next(self._tickets)
            provider = self._providers.get(key)
            if provider is None:
                provider = self._providers[key] = _Provider(bound=self.options.max_concurrency)
            provider.waiters.append(_Waiter(ticket, on_grant))
            self._owner[ticket] = key
            granted = self._grant_ready(provider)
        self._notify(granted)
        return ticket

    def release(self, ticket: int, *, tokens: int | None = None, pause_s: float | None = None) -> None:
        """The request of `ticket` is over: `tokens` it used (None: unknown, nothing), `pause_s` after a 429 (every
        request to that provider waits so long; the adaptive bound halves)."""
        with self._lock:
            key = self._owner.get(ticket)
            provider = self._providers.get(key) if key is not None else None
            if key is None or provider is None or ticket not in provider.in_flight:
                return  # released already, or still waiting (`cancel` takes that one out of the queue)
            del self._owner[ticket]
            reserved = provider.in_flight.pop(ticket)
            now = self._clock()
            if self._tokens_per_second:
                used = float(tokens or 0)
                # A request granted blind (nothing reserved: no answer had told the size yet) is the one that pays
                # for the client's start and may reach the provider long after its grant; the provider counts its
                # tokens from its arrival, so the schedule counts them from its answer, the latest that can be.
                since = provider.next_tokens_at if reserved else max(provider.next_tokens_at, now)
                provider.next_tokens_at = since + (used - reserved) / self._tokens_per_second
                if tokens:
                    provider.answered += 1
                    mean = provider.mean_tokens or 0.0
                    provider.mean_tokens = mean + (tokens - mean) / provider.answered
            if pause_s is not None:
                provider.paused_until = max(provider.paused_until, now + pause_s)
                if self.options.adaptive_max is not None:
                    provider.bound = max(1, provider.bound // 2)
                    provider.clean_answers = 0
            elif self.options.adaptive_max is not None and tokens is not None:
                provider.clean_answers += 1
                if provider.clean_answers >= provider.bound and provider.bound < self.options.adaptive_max:
                    provider.bound += 1
                    provider.clean_answers = 0
            granted = self._grant_ready(provider)
        self._notify(granted)

    def cancel(self, ticket: int) -> None:
        """Give up `ticket`: a waiting request leaves the queue, a granted one is released having used nothing."""
        with self._lock:
            key = self._owner.get(ticket)
            provider = self._providers.get(key) if key is not None else None
            if provider is None:
                return
            for waiter in provider.waiters:
                if waiter.ticket == ticket:
                    provider.waiters.remove(waiter)
                    del self._owner[ticket]
                    return
        self.release(ticket)

    def take_retry(self) -> bool:
        """Spend one retry of the run's budget; False when it is spent (no budget: always True)."""
        with self._lock:
            if self._retries_left is None:
                return True
            if self._retries_left <= 0:
                return False
            self._retries_left -= 1
            return True

    def poke(self) -> None:
        """Grant what may go now (the timer thread does this when a time-based wait ends)."""
        with self._lock:
            granted = [grant for provider in self._providers.values() for grant in self._grant_ready(provider)]
        self._notify(granted)

    def bound(self, key: str) -> int:
        """The bound of provider `key` now (`max_concurrency` until it is first used)."""
        with self._lock:
            provider = self._providers.get(key)
            return provider.bound if provider is not None else self.options.max_concurrency

    def close(self) -> None:
        """Stop the timer thread (waiters left queued are never granted)."""
        with self._lock:
            self._closed = True
            self._changed.notify_all()

    # ------------------------------------------------------------------------------------------- granting

    def _grant_ready(self, provider: _Provider) -> list[tuple[Grant, int]]:
        """Under the lock: grant the waiters that may go now, in order; arm the timer for a time-based wait."""
        granted: list[tuple[Grant, int]] = []
        now = self._clock()
        while provider.waiters and len(provider.in_flight) < provider.bound:
            ready_at = self._ready_at(provider)
            if ready_at is None:  # --tpm: the first answer's tokens are not known yet
                break
            if ready_at > now:
                self._wake_at()
                break
            waiter = provider.waiters.popleft()
            reserved = 0.0
            if self._request_interval:
                provider.next_request_at = max(provider.next_request_at, now) + self._request_interval
            if self._tokens_per_second:
                reserved = provider.mean_tokens or 0.0
                provider.next_tokens_at = max(provider.next_tokens_at, now) + reserved / self._tokens_per_second
            provider.in_flight[waiter.ticket] = reserved
            granted.append((waiter.on_grant, waiter.ticket))
        return granted

    def _ready_at(self, provider: _Provider) -> float | None:
        if self._tokens_per_second and provider.mean_tokens is None and provider.in_flight:
            return None
        return max(provider.next_request_at, provider.next_tokens_at, provider.paused_until)

    def _notify(self, granted: list[tuple[Grant, int]]) -> None:
        for on_grant, ticket in granted:
            try:
                on_grant(ticket)
            except BaseException:  # the requester is gone (its loop closed): the slot goes to the next one
                self.cancel(ticket)

    def _wake_at(self) -> None:
        """Under the lock: make sure the timer thread looks again when the next time-based wait ends."""
        if self._timer is None:
            self._timer = threading.Thread(target=self._run_timer, name="agentrig-limiter", daemon=True)
            self._timer.start()
        else:
            self._changed.notify_all()

    def _next_wake(self) -> float | None:
        times = [
            ready_at
            for provider in self._providers.values()
            if provider.waiters and len(provider.in_flight) < provider.bound
            for ready_at in [self._ready_at(provider)]
            if ready_at is not None
        ]
        return min(times) if times else None

    def _run_timer(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                wake = self._next_wake()
                delay = None if wake is None else wake - self._clock()
                if delay is None or delay > 0:
                    self._changed.wait(delay)
                    continue
            self.poke()


class Limiter(Protocol):
    """What the retrying model asks of a limiter: `LocalLimiter`, or `limiter_service.RemoteLimiter` in a worker."""

    async def acquire(self, key: str) -> Slot:
        """Wait until a request to provider `key` may go."""
        ...

    def release(self, slot: Slot, *, tokens: int | None = None, pause_s: float | None = None) -> None:
        """The request of `slot` is over (see `LimiterCore.release`)."""
        ...

    async def take_retry(self) -> bool:
        """Spend one retry of the run's budget; False when it is spent."""
        ...

    async def reserve_spend(self) -> bool:
        """Admit one request under the run's `--max-cost` (`SpendGate.reserve`); False: do not send it."""
        ...

    def settle_spend(self, usd: float) -> None:
        """An admitted request is over, and cost `usd` (`SpendGate.settle`)."""
        ...


class LocalLimiter:
    """A `LimiterCore` of this process, awaited from any event loop (scenario lanes each have their own)."""

    def __init__(self, core: LimiterCore) -> None:
        self.core = core

    async def acquire(self, key: str) -> Slot:
        loop = asyncio.get_running_loop()
        granted: asyncio.Future[int] = loop.create_future()

        def on_grant(ticket: int) -> None:
            loop.call_soon_threadsafe(_resolve, granted, ticket)  # RuntimeError once the loop is closed: cancelled

        ticket = self.core.request(key, on_grant)
        try:
            await granted
        except BaseException:  # cancelled while waiting, or just after the grant: the slot goes back
            self.core.cancel(ticket)
            raise
        return Slot(ticket, key)

    def release(self, slot: Slot, *, tokens: int | None = None, pause_s: float | None = None) -> None:
        self.core.release(slot.ticket, tokens=tokens, pause_s=pause_s)

    async def take_retry(self) -> bool:
        return self.core.take_retry()

    async def reserve_spend(self) -> bool:
        return self.core.spend.reserve()

    def settle_spend(self, usd: float) -> None:
        self.core.spend.settle(usd)


def _resolve(future: asyncio.Future[int], ticket: int) -> None:
    if not future.done():
        future.set_result(ticket)
