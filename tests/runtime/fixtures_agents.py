"""Example user agents, written the way an application would write them, for the engine tests.

Scenarios name them as `agent: tests.runtime.fixtures_agents:<name>`; agentrig replaces the model with the
scripted one and runs the real tools below.
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, RunContext

NOT_AN_AGENT = 42
"""For the error test: an attribute that is neither an Agent nor a factory."""

ORDERS: dict[str, str] = {"A-1": "shipped", "A-2": "processing"}


class OrderReply(BaseModel):
    status: str


def _build_support_agent() -> Agent[None, str]:
    agent: Agent[None, str] = Agent(
        "test",  # replaced per run by agentrig; a real app would name a provider model here
        deps_type=type(None),
        instructions="You are the support assistant of an online shop. Be brief.",
        retries=2,
    )

    @agent.instructions
    def todays_date() -> str:  # pyright: ignore[reportUnusedFunction]
        return f"Today is {date(2026, 1, 15).isoformat()}."

    @agent.tool
    def order_status(ctx: RunContext[None], order_id: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Look up the shipping status of an order."""
        if order_id not in ORDERS:
            # A realistic retry: the model is told what valid ids look like and tries again.
            raise ModelRetry(f"unknown order {order_id!r} (attempt {ctx.retry + 1}); ids look like A-1")
        return ORDERS[order_id]

    @agent.tool_plain
    def refund_policy() -> str:  # pyright: ignore[reportUnusedFunction]
        """The shop's refund policy."""
        return "Refunds within 30 days of delivery."

    return agent


support_agent = _build_support_agent()
"""A module-level agent (`agent: tests.runtime.fixtures_agents:support_agent`)."""


def build_support_agent() -> Agent[None, str]:
    """A zero-argument factory (`agent: tests.runtime.fixtures_agents:build_support_agent`)."""
    return _build_support_agent()


def needs_arguments(name: str) -> Agent[None, str]:
    """For the error test: a factory that cannot be called without arguments."""
    return Agent("test", name=name)


def build_structured_agent() -> Agent[None, OrderReply]:
    """An agent with structured output: pydantic-ai offers the model an output tool (`final_result`) next to
    its function tool."""
    agent: Agent[None, OrderReply] = Agent("test", output_type=OrderReply)

    @agent.tool_plain
    def order_status(order_id: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Look up the shipping status of an order."""
        return ORDERS.get(order_id, "unknown")

    return agent
