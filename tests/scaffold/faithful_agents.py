"""Agents shaped like the pydantic-ai-examples ones the held-out bench measures (bench/scaffold_fidelity/): deps
read by dynamic instructions and tools, structured and non-object outputs, an output validator that retries, a
tool delegating to a sub-agent, a tool that asks for approval, a system prompt. Their prompts are read at
build time from module variables, so a test changes a prompt the way a code change would."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, ModelRetry, RunContext

INSTRUCTIONS = "You are a support agent; judge the risk of the query."
SYSTEM_PROMPT = "You answer in one short sentence."


@dataclass
class Customer:
    name: str
    balance: float


def customer() -> Customer:
    """The deps builder a scenario names (`deps: tests.scaffold.faithful_agents:customer`)."""
    return Customer(name="John", balance=123.45)


def not_callable_deps() -> None: ...


NOT_CALLABLE = 42


class SupportOutput(BaseModel):
    advice: str
    block_card: bool
    risk: int = 0


def support_agent() -> Agent[Customer, SupportOutput]:
    """Deps, dynamic instructions naming the customer, a tool reading the deps, a structured output."""
    agent = Agent(None, deps_type=Customer, output_type=SupportOutput, instructions=INSTRUCTIONS)

    @agent.instructions
    def name(ctx: RunContext[Customer]) -> str:  # pyright: ignore[reportUnusedFunction]
        return f"The customer's name is {ctx.deps.name!r}."

    @agent.tool
    def balance(ctx: RunContext[Customer]) -> str:  # pyright: ignore[reportUnusedFunction]
        """The customer's balance."""
        return f"${ctx.deps.balance:.2f}"

    return agent


def terse_agent() -> Agent[None, str]:
    """A `system_prompt=` agent with a text output."""
    return Agent(None, system_prompt=SYSTEM_PROMPT)


def roulette_agent() -> Agent[None, bool]:
    """A bool output: pydantic-ai wraps it as `{"response": ...}` in its output tool."""
    agent = Agent(None, output_type=bool)

    @agent.tool_plain
    def spin(square: int) -> str:  # pyright: ignore[reportUnusedFunction]
        """Whether the square wins."""
        return "winner" if square == 18 else "loser"

    return agent


def numbers_agent() -> Agent[None, list[int]]:
    """A list output."""
    return Agent(None, output_type=list[int])


class Flight(BaseModel):
    number: str
    destination: str


def extraction_agent_factory() -> Agent[None, list[Flight]]:
    return Agent(None, output_type=list[Flight], instructions="Extract the flights.")


extraction_agent = extraction_agent_factory()
"""The sub-agent the search agent's tool delegates to (an `Agent` at module level, as applications write it)."""


def search_agent() -> Agent[None, Flight]:
    """A tool delegating to `extraction_agent`, and an output validator that rejects the wrong destination."""
    agent = Agent(None, output_type=Flight, deps_type=type(None))

    @agent.tool
    async def extract(ctx: RunContext[None]) -> list[Flight]:  # pyright: ignore[reportUnusedFunction]
        """The flights on the page."""
        return (await extraction_agent.run("AK1 to ANC; AK2 to FAI", usage=ctx.usage)).output

    @agent.output_validator
    def to_anc(output: Flight) -> Flight:  # pyright: ignore[reportUnusedFunction]
        if output.destination != "ANC":
            raise ModelRetry(f"the flight must go to ANC, not {output.destination}")
        return output

    return agent


def approval_agent() -> Agent[None, str | DeferredToolRequests]:
    """A tool that asks the host for approval before it runs."""
    agent: Agent[None, str | DeferredToolRequests] = Agent(None, output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Delete a file."""
        return f"deleted {path}"

    return agent


SECRET_TOOL_KEY = "sk-faithful-tool-secret-0123456789abcdef"


def leaky_agent() -> Agent[None, str]:
    """A tool that returns an API key (a real tool reading a config file, say)."""
    agent = Agent(None)

    @agent.tool_plain
    def config() -> str:  # pyright: ignore[reportUnusedFunction]
        """The service configuration."""
        return f"api_key={SECRET_TOOL_KEY}; Authorization: Basic dXNlcjpwYXNzd29yZA=="

    return agent
