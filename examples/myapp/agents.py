"""The example application's agent: a support bot with one real tool and an output rule.

agentrig imports `build_agent` (scenario field `agent: myapp.agents:build_agent`), replaces the
model with the scenario's script, and runs the real tool and the real output validator below.
"""

from __future__ import annotations

from pydantic_ai import Agent, ModelRetry

ORDERS = {42: "shipped on 2026-11-30", 7: "waiting for payment"}


def build_agent() -> Agent[None, str]:
    """A new support agent. No model here: the application passes one at run time (agentrig passes the script)."""
    agent = Agent(
        None,
        instructions="You answer questions about orders. Always name the order number in the answer.",
        retries={"tools": 1, "output": 1},
    )

    @agent.tool_plain
    def order_status(order_id: int) -> str:  # pyright: ignore[reportUnusedFunction]
        """Look up the status of an order by its number."""
        status = ORDERS.get(order_id)
        if status is None:
            raise ModelRetry(f"there is no order {order_id}; ask the user for the right number")
        return status

    @agent.output_validator
    def names_the_order(output: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """The application's rule: an answer must name the order it is about."""
        if "order" not in output.lower():
            raise ModelRetry("name the order number in your answer")
        return output

    return agent
