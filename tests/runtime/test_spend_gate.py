"""`--max-cost` request by request (`models.spend_gate`): a request is admitted while the spend, plus the dearest
price so far for each request in flight, stays under the budget; what is settled counts, every process's."""

from __future__ import annotations

import asyncio
import threading
from multiprocessing.connection import Client

from agentrig.runtime.models.limiter import LimiterCore
from agentrig.runtime.models.limiter_service import LimiterService, RemoteLimiter
from agentrig.runtime.models.provider_options import ProviderOptions
from agentrig.runtime.models.spend_gate import SpendGate


def test_requests_are_admitted_until_the_budget_is_known_to_be_spent() -> None:
    gate = SpendGate(3.5)
    assert gate.reserve()
    gate.settle(1.0)
    # 1.0 spent + 0, 1, 2 in flight x 1.0 stay under 3.5; with 3 in flight, 4.0 would not
    assert [gate.reserve() for _ in range(4)] == [True, True, True, False]
    for _ in range(3):
        gate.settle(1.0)
    assert not gate.reserve()  # 4.0 spent: over by less than one request's price
    assert gate.spent_usd == 4.0
    assert gate.refused == 2


def test_a_request_that_failed_unanswered_gives_its_admission_back() -> None:
    gate = SpendGate(1.5)
    assert gate.reserve()
    gate.settle(1.0)
    assert gate.reserve()
    gate.settle(0.0)
    assert gate.in_flight == 0
    assert gate.reserve()


def test_without_a_budget_every_request_is_admitted() -> None:
    gate = SpendGate(None)
    assert all(gate.reserve() for _ in range(100))


class _ObservedGate(SpendGate):
    def __init__(self, max_cost_usd: float) -> None:
        super().__init__(max_cost_usd)
        self.settled = threading.Event()

    def settle(self, usd: float) -> None:
        super().settle(usd)
        self.settled.set()


def test_a_worker_reserves_and_settles_through_the_service() -> None:
    core = LimiterCore(ProviderOptions(), max_cost_usd=1.0)
    service = LimiterService(core)

    async def spend() -> list[bool]:
        limiter = RemoteLimiter(service.address)
        admitted = [await limiter.reserve_spend()]
        limiter.settle_spend(0.75)
        admitted.append(await limiter.reserve_spend())  # 0.75 spent, none in flight: under 1.0
        admitted.append(await limiter.reserve_spend())  # 0.75 + 1 in flight x 0.75: refused
        return admitted

    try:
        assert asyncio.run(spend()) == [True, True, False]
        assert core.spend.spent_usd == 0.75
        assert core.spend.in_flight == 1
    finally:
        service.close()


def test_a_dead_workers_reservations_are_settled_at_nothing() -> None:
    core = LimiterCore(ProviderOptions(), max_cost_usd=1.0)
    core.spend = gate = _ObservedGate(1.0)
    service = LimiterService(core)
    try:
        worker = Client(service.address.address, authkey=service.address.authkey)
        worker.send(("reserve", 1))
        assert worker.recv() == ("reserved", 1, True)
        assert gate.in_flight == 1
        worker.close()  # the worker died with its request in flight
        assert gate.settled.wait(10)
        assert gate.in_flight == 0
        assert gate.spent_usd == 0.0
    finally:
        service.close()
