"""An agent written the usual way, for tests that copy it under a fresh module name (so each test imports it anew).

Its model is named at import (no key is set in the tests), its deps are a dataclass around a SQLite
connection, its output is a pydantic model (or deferred calls), its instructions depend on the deps, a tool
delegates to a sub-agent, one tool needs approval, one tool raises, and an output validator retries.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, ModelRetry, RunContext

EVENTS: list[str] = []
"""What happened outside the model: deps opened and closed, cards blocked, factories called."""


@dataclass
class Database:
    connection: sqlite3.Connection

    def customer_name(self, customer_id: int) -> str:
        row = self.connection.execute("SELECT name FROM customers WHERE id=?", (customer_id,)).fetchone()
        return str(row[0])

    def balance(self, customer_id: int) -> float:
        row = self.connection.execute("SELECT balance FROM customers WHERE id=?", (customer_id,)).fetchone()
        return float(row[0])


@dataclass
class SupportDeps:
    customer_id: int
    db: Database


class SupportOutput(BaseModel):
    advice: str
    block_card: bool
    risk: int


support_agent = Agent(
    "openai:gpt-4o-mini",
    deps_type=SupportDeps,
    output_type=[SupportOutput, DeferredToolRequests],
    instructions="You are a bank's support agent.",
)


@support_agent.instructions
def add_customer_name(ctx: RunContext[SupportDeps]) -> str:
    return f"The customer's name is {ctx.deps.db.customer_name(ctx.deps.customer_id)!r}"


@support_agent.tool
def customer_balance(ctx: RunContext[SupportDeps]) -> str:
    """The customer's balance."""
    return f"${ctx.deps.db.balance(ctx.deps.customer_id):.2f}"


@support_agent.tool_plain
def local_time(zone: str) -> str:
    """The local time in a time zone."""
    raise LookupError(f"No time zone found with key {zone}")


@support_agent.tool_plain(requires_approval=True)
def block_card(reason: str) -> str:
    """Block the customer's card."""
    EVENTS.append(f"blocked: {reason}")
    return "the card is blocked"


extractor = Agent("openai:gpt-4o-mini", output_type=list[int], instructions="Extract every amount.")


@support_agent.tool
async def extract_amounts(ctx: RunContext[SupportDeps], text: str) -> list[int]:
    """Amounts mentioned in a text."""
    result = await extractor.run(text, usage=ctx.usage)
    return result.output


@support_agent.output_validator
def risk_in_range(output: SupportOutput | DeferredToolRequests) -> SupportOutput | DeferredToolRequests:
    if isinstance(output, SupportOutput) and not 0 <= output.risk <= 10:
        raise ModelRetry("risk is a number from 0 to 10")
    return output


def _database() -> Database:
    connection = sqlite3.connect(":memory:", check_same_thread=False)  # sync tools run in threads
    connection.execute("CREATE TABLE customers(id, name, balance)")
    connection.execute("INSERT INTO customers VALUES (123, 'John', 123.45)")
    return Database(connection)


@asynccontextmanager
async def bank_deps() -> AsyncGenerator[SupportDeps]:
    """Deps as an async context manager: the connection closes when the scenario ends."""
    database = _database()
    EVENTS.append("opened")
    try:
        yield SupportDeps(customer_id=123, db=database)
    finally:
        database.connection.close()
        EVENTS.append("closed")


def plain_deps() -> SupportDeps:
    """Deps from a plain function."""
    return SupportDeps(customer_id=123, db=_database())


async def async_deps() -> SupportDeps:
    """Deps from a coroutine function."""
    return SupportDeps(customer_id=123, db=_database())


def build_agent() -> Agent[None, str]:
    """A factory: each scenario must get its own agent."""
    EVENTS.append("built")
    return Agent(None, instructions="A fresh agent.")


flaky_calls: list[int] = []


@support_agent.tool_plain
def flaky_lookup(account: str) -> str:
    """Looks an account up; the first two attempts fail."""
    flaky_calls.append(1)
    if len(flaky_calls) <= 2:
        raise ModelRetry(f"lookup of {account} timed out, try again")
    return f"{account}: open"
