"""A scenario's requests, counted and priced as they are answered: the money side of a run.

`chain.for_scenario` gives each scenario that talks to a real model (or replays one) a `ScenarioMeter`. The
`MeteredModel` wrapper, directly around the live model, adds the usage of every answered request to
`meter.live`; a `ReplayModel` adds each response it serves from a recording to `meter.replayed`. Each request is
priced on its own (`pricing.Pricer`), so `meter.cost()` is what the provider bills: `usd` for every request, live
or replayed (what the scenario costs on that model), `spent_usd` for the live ones only (what this run cost).

Under `--max-cost` the meter holds the run's limiter (`budget`): each live request is admitted by the run-wide
`SpendGate` before it is sent and settled at its price once answered. A request the gate refuses is not sent: the
turn ends with `BudgetSpent`, and the meter keeps why (`refused`), so the scenario is reported as stopped by the
budget, not as failing.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from agentrig.runtime.history.run_records import Cost
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models.conversion import response_usage
from agentrig.runtime.models.limiter import Limiter
from agentrig.runtime.models.pricing import pricer_for, to_usd
from agentrig.runtime.models.providers import close_model
from agentrig.runtime.models.stops import RunStopped

__all__ = ["BudgetSpent", "MeteredModel", "ScenarioMeter"]


class BudgetSpent(RunStopped):
    """The run's `--max-cost` budget is spent (or will be by the requests in flight): this request was not sent."""


class ScenarioMeter:
    """The requests one scenario made, live and replayed, and what they cost."""

    def __init__(self, model: str | None, *, prices: Path | None = None, budget: Limiter | None = None) -> None:
        self.model = model
        """The `provider:name` priced: the run's `--model`, or the model a replayed recording names."""
        self.prices = prices
        self.live: list[Usage] = []
        """The usage of each request the provider answered in this run."""
        self.replayed: list[Usage] = []
        """The usage recorded for each response served from a recording."""
        self.budget = budget
        """The run's limiter, whose `SpendGate` admits each live request under `--max-cost` (None: no budget)."""
        self.refused: str | None = None
        """Why a request of this scenario was not sent (the budget was spent), once one was refused."""

    def price_usd(self, usage: Usage) -> float:
        """What one request with `usage` cost (0.0 without a price: a budget needs one, `pricing.require_price`)."""
        if self.model is None:
            return 0.0
        return to_usd(pricer_for(self.model, self.prices).price(usage)) or 0.0

    async def admit(self) -> None:
        """Before a live request: raises `BudgetSpent` when the run's budget refuses it."""
        if self.budget is None or await self.budget.reserve_spend():
            return
        self.refused = "the --max-cost budget was spent before this request: not sent"
        raise BudgetSpent(self.refused)

    def answered(self, usage: Usage | None) -> None:
        """An admitted live request is over: counted (None: it failed unanswered) and settled at its price."""
        if usage is not None:
            self.live.append(usage)
        if self.budget is not None:
            self.budget.settle_spend(self.price_usd(usage) if usage is not None else 0.0)

    def cost(self) -> Cost:
        """What the scenario's requests cost (no price: `usd` None and a note, never 0)."""
        if self.model is None:
            return Cost(usd=None, spent_usd=None, model=None, note="no model named: no price")
        pricer = pricer_for(self.model, self.prices)
        if not pricer.has_price:
            return Cost(usd=None, spent_usd=None, model=self.model, note=pricer.note)
        spent = sum((pricer.price(usage) or Decimal(0) for usage in self.live), Decimal(0))
        replayed = sum((pricer.price(usage) or Decimal(0) for usage in self.replayed), Decimal(0))
        return Cost(usd=to_usd(spent + replayed), spent_usd=to_usd(spent), model=self.model, priced_by=pricer.priced_by)


class MeteredModel(WrapperModel):
    """Passes requests to the live model and adds each answered one's usage to the scenario's meter."""

    def __init__(self, wrapped: Model, meter: ScenarioMeter) -> None:
        super().__init__(wrapped)
        self.meter = meter

    async def aclose(self) -> None:
        """Close the wrapped model's connections, when it owns any (`providers.RetryingModel.aclose`)."""
        await close_model(self.wrapped)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        await self.meter.admit()
        try:
            response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        except BaseException:
            self.meter.answered(None)
            raise
        self.meter.answered(response_usage(response))
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse, None]:
        await self.meter.admit()
        opened = False
        try:
            async with self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream:
                opened = True
                try:
                    yield stream
                finally:  # a stream cut off mid-response was still billed for what it sent
                    self.meter.answered(response_usage(stream.get()))
        except BaseException:
            if not opened:  # never opened: nothing was billed, and the admission is given back
                self.meter.answered(None)
            raise
