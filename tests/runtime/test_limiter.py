"""The run-wide limiter (`models.limiter`, `models.limiter_service`): bound, --rpm and --tpm schedules, the pause a
429 asks for, the adaptive bound, the retry budget, and the same behaviour served to another process.

The schedule is checked on a clock the test moves (`_Clock`), so nothing here depends on how fast the machine is."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections.abc import Iterator
from multiprocessing.synchronize import Event as ProcessEvent

import pytest

from agentrig.runtime.models.limiter import RATE_MARGIN, LimiterCore, LocalLimiter
from agentrig.runtime.models.limiter_service import LimiterAddress, LimiterService, RemoteLimiter
from agentrig.runtime.models.provider_options import ProviderOptions

KEY = "openai@http://127.0.0.1:9/v1"


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _Grants:
    """Records the tickets granted, in order."""

    def __init__(self) -> None:
        self.tickets: list[int] = []

    def __call__(self, ticket: int) -> None:
        self.tickets.append(ticket)


@pytest.fixture
def clock() -> _Clock:
    return _Clock()


@pytest.fixture
def cores() -> Iterator[list[LimiterCore]]:
    made: list[LimiterCore] = []
    yield made
    for core in made:
        core.close()


def _core(cores: list[LimiterCore], clock: _Clock, **options: object) -> LimiterCore:
    core = LimiterCore(ProviderOptions(**options), clock=clock)  # pyright: ignore[reportArgumentType]
    cores.append(core)
    return core


def test_no_more_than_the_bound_in_flight_and_waiters_go_in_order(cores: list[LimiterCore], clock: _Clock) -> None:
    core = _core(cores, clock, max_concurrency=2)
    grants = _Grants()
    tickets = [core.request(KEY, grants) for _ in range(5)]
    assert grants.tickets == tickets[:2]
    core.release(tickets[1], tokens=10)
    assert grants.tickets == [tickets[0], tickets[1], tickets[2]]
    core.release(tickets[0])
    assert grants.tickets == tickets[:4]
    core.release(tickets[2])
    assert grants.tickets == tickets


def test_each_provider_has_its_own_bound(cores: list[LimiterCore], clock: _Clock) -> None:
    core = _core(cores, clock, max_concurrency=1)
    grants = _Grants()
    first = core.request(KEY, grants)
    other = core.request("anthropic@", grants)
    blocked = core.request(KEY, grants)
    assert grants.tickets == [first, other]
    core.release(first)
    assert grants.tickets == [first, other, blocked]


def test_rpm_spaces_requests_evenly(cores: list[LimiterCore], clock: _Clock) -> None:
    core = _core(cores, clock, max_concurrency=100, rpm=120)  # one every 0.5 s (plus the margin)
    grants = _Grants()
    tickets = [core.request(KEY, grants) for _ in range(3)]
    assert grants.tickets == tickets[:1]  # no burst: a minute's requests may not go in its first second
    spacing = 0.5 * (1 + RATE_MARGIN)
    clock.now += spacing - 0.01
    core.poke()
    assert grants.tickets == tickets[:1]
    clock.now += 0.01
    core.poke()
    assert grants.tickets == tickets[:2]
    clock.now += spacing
    core.poke()
    assert grants.tickets == tickets


def test_tpm_goes_one_at_a_time_until_an_answer_tells_the_size_then_schedules_tokens(
    cores: list[LimiterCore], clock: _Clock
) -> None:
    core = _core(cores, clock, max_concurrency=100, tpm=600)  # 10 tokens a second
    grants = _Grants()
    first, second, third = (core.request(KEY, grants) for _ in range(3))
    assert grants.tickets == [first]  # the size of a request is not known yet
    core.release(first, tokens=20)  # 20 tokens: 2 s of the schedule
    assert grants.tickets == [first]
    clock.now += 2 * (1 + RATE_MARGIN) + 0.001
    core.poke()
    assert grants.tickets == [first, second]  # reserves the mean so far (20): the third waits another 2 s
    clock.now += 1.1
    core.poke()
    assert grants.tickets == [first, second]
    core.release(second, tokens=10)  # used less than it reserved: the schedule moves back by 1 s
    core.poke()
    assert grants.tickets == [first, second, third]


def test_tpm_charges_a_request_granted_before_any_size_was_known_from_its_answer(
    cores: list[LimiterCore], clock: _Clock
) -> None:
    # The first request reserves nothing (no answer has told the size yet), and it is the one that pays for the
    # client's start (connection, TLS): it may reach the provider well after its grant. The provider counts its
    # tokens from then, so the schedule counts them from its answer, not from its grant: charged from the grant,
    # a first request that took 3 s would let the next go at once, into the same provider window (seen as a 429 in
    # tests/providers/test_concurrency.py on a loaded machine).
    core = _core(cores, clock, max_concurrency=100, tpm=600)  # 10 tokens a second
    grants = _Grants()
    first, second = (core.request(KEY, grants) for _ in range(2))
    clock.now += 3.0  # the first request's answer comes 3 s after its grant
    core.release(first, tokens=20)  # 20 tokens: 2 s of the schedule, from now
    assert grants.tickets == [first]
    clock.now += 2 * (1 + RATE_MARGIN) + 0.001
    core.poke()
    assert grants.tickets == [first, second]


def test_a_429_pauses_every_request_to_that_provider(cores: list[LimiterCore], clock: _Clock) -> None:
    core = _core(cores, clock, max_concurrency=4)
    grants = _Grants()
    first = core.request(KEY, grants)
    core.release(first, pause_s=3.0)
    later = core.request(KEY, grants)
    other = core.request("anthropic@", grants)
    assert grants.tickets == [first, other]
    clock.now += 3.0
    core.poke()
    assert grants.tickets == [first, other, later]


def test_adaptive_bound_grows_while_the_provider_keeps_up_and_halves_on_a_429(
    cores: list[LimiterCore], clock: _Clock
) -> None:
    core = _core(cores, clock, max_concurrency=2, adaptive_max=4)
    grants = _Grants()
    assert core.bound(KEY) == 2
    for _ in range(2):  # a bound's worth of clean answers: one more
        core.release(core.request(KEY, grants), tokens=5)
    assert core.bound(KEY) == 3
    for _ in range(3):
        core.release(core.request(KEY, grants), tokens=5)
    assert core.bound(KEY) == 4
    for _ in range(8):
        core.release(core.request(KEY, grants), tokens=5)
    assert core.bound(KEY) == 4  # never past the ceiling
    core.release(core.request(KEY, grants), pause_s=0.0)
    assert core.bound(KEY) == 2
    core.release(core.request(KEY, grants), pause_s=0.0)
    core.release(core.request(KEY, grants), pause_s=0.0)
    assert core.bound(KEY) == 1  # never below one


def test_the_fixed_bound_does_not_move(cores: list[LimiterCore], clock: _Clock) -> None:
    core = _core(cores, clock, max_concurrency=2)
    grants = _Grants()
    for _ in range(5):
        core.release(core.request(KEY, grants), tokens=5)
    core.release(core.request(KEY, grants), pause_s=0.0)
    assert core.bound(KEY) == 2


def test_the_retry_budget_is_spent_once(cores: list[LimiterCore], clock: _Clock) -> None:
    core = _core(cores, clock, retry_budget=2)
    assert [core.take_retry() for _ in range(3)] == [True, True, False]
    assert all(_core(cores, clock).take_retry() for _ in range(50))  # no budget: no limit


def test_cancel_takes_a_waiter_out_and_gives_a_granted_slot_back(cores: list[LimiterCore], clock: _Clock) -> None:
    core = _core(cores, clock, max_concurrency=1)
    grants = _Grants()
    held = core.request(KEY, grants)
    waiting = core.request(KEY, grants)
    last = core.request(KEY, grants)
    core.cancel(waiting)
    core.cancel(held)
    assert grants.tickets == [held, last]


def test_a_grant_nobody_takes_passes_to_the_next(cores: list[LimiterCore], clock: _Clock) -> None:
    core = _core(cores, clock, max_concurrency=1)
    grants = _Grants()

    def gone(ticket: int) -> None:
        raise RuntimeError("Event loop is closed")

    held = core.request(KEY, grants)
    core.request(KEY, gone)
    after = core.request(KEY, grants)
    core.release(held)
    assert grants.tickets == [held, after]


def test_local_limiter_gives_the_slot_back_when_the_waiting_task_is_cancelled() -> None:
    core = LimiterCore(ProviderOptions(max_concurrency=1))
    limiter = LocalLimiter(core)

    async def scenario() -> None:
        held = await limiter.acquire(KEY)
        waiting = asyncio.create_task(limiter.acquire(KEY))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        limiter.release(held)
        again = await asyncio.wait_for(limiter.acquire(KEY), timeout=30)
        limiter.release(again)

    try:
        asyncio.run(scenario())
    finally:
        core.close()


def test_local_limiter_waits_out_a_time_based_wait_on_its_timer() -> None:
    core = LimiterCore(ProviderOptions(max_concurrency=4, rpm=6000))  # 10 ms apart

    async def scenario() -> int:
        slots = [await asyncio.wait_for(limiter.acquire(KEY), timeout=30) for _ in range(3)]
        for slot in slots:
            limiter.release(slot)
        return len(slots)

    limiter = LocalLimiter(core)
    try:
        assert asyncio.run(scenario()) == 3
    finally:
        core.close()


def _hold_slots(address: LimiterAddress, count: int, held: ProcessEvent) -> None:
    """In another process: take `count` slots, say so, and keep them until the process ends."""

    async def take() -> None:
        limiter = RemoteLimiter(address)
        for _ in range(count):
            await limiter.acquire(KEY)
        held.set()
        await asyncio.sleep(3600)

    asyncio.run(take())


def test_the_service_bounds_another_process_and_frees_what_a_dead_one_held() -> None:
    core = LimiterCore(ProviderOptions(max_concurrency=2))
    service = LimiterService(core)
    context = multiprocessing.get_context("spawn")
    held = context.Event()
    other = context.Process(target=_hold_slots, args=(service.address, 2, held), daemon=True)
    other.start()
    try:
        assert held.wait(60), "the other process did not get its slots"
        grants = _Grants()
        mine = core.request(KEY, grants)
        assert grants.tickets == []  # both slots are the other process's
        other.kill()
        other.join(30)
        for _ in range(600):  # the service notices the closed connection and gives its slots back
            if grants.tickets:
                break
            time.sleep(0.05)
        assert grants.tickets == [mine]
    finally:
        if other.is_alive():
            other.kill()
        service.close()


def test_a_remote_limiter_that_cannot_reach_the_run_says_so() -> None:
    limiter = RemoteLimiter(LimiterAddress("/nonexistent/agentrig-limiter.sock", b"k" * 32))

    async def acquire() -> None:
        await limiter.acquire(KEY)

    with pytest.raises(Exception, match="cannot reach the run's request limiter"):
        asyncio.run(acquire())
