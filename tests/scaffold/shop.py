"""A small application agent for the scaffold tests: a currency converter whose rates a test can change.

The tool reads `RATES` at call time, so a test changes the agent's behaviour with `monkeypatch.setitem`
(the day a fix, or a regression, lands). No model here: agentrig passes the script or the real model.
"""

from __future__ import annotations

from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry

RATES: dict[str, float] = {"USD": 1.0, "GBP": 0.85}
"""Euro exchange rates. USD is wrong on purpose (the bug a conversation exposes): it should be 1.08."""


def build_agent() -> Agent[None, str]:
    """The converter: instructions and one tool."""
    agent = Agent(None, instructions="Convert euro amounts with the convert tool; give the result.")

    @agent.tool_plain
    def convert(amount: float, currency: str) -> float:  # pyright: ignore[reportUnusedFunction]
        """Convert an amount in euro to another currency."""
        rate = RATES.get(currency)
        if rate is None:
            raise ModelRetry(f"unknown currency {currency!r}; use one of {sorted(RATES)}")
        return round(amount * rate, 2)

    return agent


class Quote(BaseModel):
    """A structured answer: the converted amount."""

    amount: float
    currency: str


def build_quote_agent() -> Agent[None, Quote]:
    """The converter answering with a `Quote` (pydantic-ai's output tool, `final_result`)."""
    agent = Agent(None, output_type=Quote, instructions="Quote the converted amount.")

    @agent.tool_plain
    def convert(amount: float, currency: str) -> float:  # pyright: ignore[reportUnusedFunction]
        """Convert an amount in euro to another currency."""
        return round(amount * RATES[currency], 2)

    return agent
