"""A held-out support agent for the evaluation gate (tests/providers/test_support_gate.py): a pydantic-ai Agent that
answers refund questions under the shop's policy, with a tool that looks the order up. No model here: agentrig
passes the run's (`--model`), which the test points at a loopback server playing a good and a weaker model."""

from __future__ import annotations

from pydantic_ai import Agent, ModelRetry

POLICY = "Refunds are paid back within 5 business days of the return arriving."
ORDERS = {"A-1001": {"status": "returned", "return_received": "2026-12-01", "total": "59.90 EUR"}}


def build_agent() -> Agent[None, str]:
    """A new support agent, its model given at run time."""
    agent = Agent(
        None,
        instructions=f"You are the support agent of a shop. {POLICY} Always name the order you are talking about.",
    )

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, str]:  # pyright: ignore[reportUnusedFunction]
        """The status of an order, by its number."""
        order = ORDERS.get(order_id)
        if order is None:
            raise ModelRetry(f"there is no order {order_id}")
        return {"order_id": order_id, **order}

    return agent
