"""`agentrig run --max-cost USD`: no scenario starts once the run has spent its budget; the running ones finish.

Scenarios that talk to a provider run side by side (`--max-concurrency`), so "starts" needs care: a scenario starts
only while what the run spent, plus what the scenarios already running are expected to spend (the mean of those
finished so far), stays under the budget; until one has finished, they start one at a time. Without that, a run of
width 8 would start 8 scenarios before the first cent was counted.

That is the scenario side. The request side is `models.spend_gate`: every live request, in every worker, is
admitted by the run's one gate before it is sent, so a scenario that started while the budget lasted stops at its
first request after the budget is spent (reported skipped, `scenario_run.BUDGET_CHECK`), and the run spends at most
the budget plus one request's price per request in flight (docs/security.md).

What counts is money actually sent to the provider in this run (`Cost.spent_usd`: a replayed request costs
nothing), priced request by request (`models.pricing`). A budget needs a price: a model without one is refused
before the run starts (`pricing.require_price`). The scenarios the budget stopped are reported as skipped, with
the reason (`RunBudget.reason`), and report.json's totals say how many (`not_run_for_budget`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from agentrig.runtime.history.run_records import ScenarioResult
from agentrig.runtime.reports.totals import format_usd

BUDGET_CHECK = "--max-cost"
"""The check of a scenario the run's budget stopped before one of its requests (`skipped_reason` says so)."""

__all__ = ["BUDGET_CHECK", "RunBudget"]

_T = TypeVar("_T")


class RunBudget:
    """The money a run may spend, and what it has spent so far."""

    def __init__(self, max_cost_usd: float | None) -> None:
        self.max_cost_usd = max_cost_usd
        self.spent_usd = 0.0
        self.exhausted = False
        """True once `spent_usd` reached the budget: no scenario starts after that."""
        self.finished = 0

    def add(self, result: ScenarioResult) -> None:
        """A finished scenario's spending."""
        self.finished += 1
        if result.cost is not None and result.cost.spent_usd is not None:
            self.spent_usd += result.cost.spent_usd
        if self.max_cost_usd is not None and self.spent_usd >= self.max_cost_usd:
            self.exhausted = True
        if any(check.name == BUDGET_CHECK for check in result.checks):  # the request gate refused one of its requests
            self.exhausted = True

    def allows_start(self, in_flight: int = 0) -> bool:
        """Whether another scenario may start now, with `in_flight` scenarios running that have not been added."""
        if self.exhausted:
            return False
        if self.max_cost_usd is None or in_flight == 0:
            return True
        if self.finished == 0:
            return False  # no scenario's cost is known yet: the first one finishes before another starts
        expected = self.spent_usd + in_flight * (self.spent_usd / self.finished)
        return expected < self.max_cost_usd

    def gate(self, scenarios: Iterable[_T]) -> Iterator[_T]:
        """`scenarios`, until the budget is spent (each is taken when the one before it may start)."""
        for scenario in scenarios:
            if self.exhausted:
                return
            yield scenario

    @property
    def reason(self) -> str:
        """Why a scenario was not run."""
        assert self.max_cost_usd is not None
        return (
            f"not run: the --max-cost budget of {format_usd(self.max_cost_usd)} was spent "
            f"({format_usd(self.spent_usd)} by the scenarios before it)"
        )
