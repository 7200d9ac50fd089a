"""`agentrig run --max-cost USD`: no scenario starts once the run has spent its budget; the running ones finish.

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

__all__ = ["RunBudget"]

_T = TypeVar("_T")


class RunBudget:
    """The money a run may spend, and what it has spent so far."""

    def __init__(self, max_cost_usd: float | None) -> None:
        self.max_cost_usd = max_cost_usd
        self.spent_usd = 0.0
        self.exhausted = False
        """True once `spent_usd` reached the budget: no scenario starts after that."""

    def add(self, result: ScenarioResult) -> None:
        """A finished scenario's spending."""
        if result.cost is not None and result.cost.spent_usd is not None:
            self.spent_usd += result.cost.spent_usd
        if self.max_cost_usd is not None and self.spent_usd >= self.max_cost_usd:
            self.exhausted = True

    def allows_start(self) -> bool:
        """Whether another scenario may start."""
        return not self.exhausted

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
