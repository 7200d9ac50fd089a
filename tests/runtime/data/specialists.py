"""A router agent whose tools delegate to sub-agents the usual ways, for tests that copy it under a fresh module name.

The specialists share one model string, a tool picks one from a dict into a local variable (so pydantic-ai names
the run after that variable, which is no attribute of this module), another streams its sub-agent, and one builds
its sub-agent inside the tool (no module attribute holds it at all).
"""

from __future__ import annotations

from pydantic_ai import Agent

billing_specialist = Agent("openai:gpt-4o", instructions="You answer billing questions.")
shipping_specialist = Agent("openai:gpt-4o", instructions="You answer shipping questions.")
SPECIALISTS = {"billing": billing_specialist, "shipping": shipping_specialist}

router = Agent("openai:gpt-4o", instructions="Route each question to a specialist.")


@router.tool_plain
async def consult(topic: str, question: str) -> str:
    """Ask the specialist for `topic` (billing or shipping)."""
    specialist_agent = SPECIALISTS[topic]
    result = await specialist_agent.run(question)
    return result.output


@router.tool_plain
async def consult_streamed(topic: str, question: str) -> str:
    """Ask the specialist for `topic`, streaming its answer."""
    specialist_agent = SPECIALISTS[topic]
    async with specialist_agent.run_stream(question) as stream:
        return await stream.get_output()


@router.tool_plain
async def consult_fresh(question: str) -> str:
    """Ask a specialist built for this one question."""
    one_off_agent = Agent("openai:gpt-4o", instructions="You answer one question.")
    result = await one_off_agent.run(question)
    return result.output
