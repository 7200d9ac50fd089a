"""Deps for the `pydantic-ai-examples` agents, as their scenarios name them (`deps: example_deps:<name>`).

The only Python these scenarios need: a scenario can say which deps to build, but not how to open a
database or fake an HTTP service. Each builder is what a test of the application would write.
"""

from __future__ import annotations

import datetime
import json
import sqlite3
from collections.abc import AsyncGenerator, Generator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager

import httpx
from pydantic_ai_examples import bank_support, flight_booking, roulette_wheel, weather_agent


@contextmanager
def _bank(customer_id: int) -> Generator[bank_support.SupportDependencies]:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE customers(id, name, balance)")
    connection.execute("INSERT INTO customers VALUES (123, 'John', 123.45)")
    # The example's DatabaseConn queries a module-level cursor `cur`, which only its `__main__` block
    # creates; a test has to provide it the same way.
    vars(bank_support)["cur"] = connection.cursor()
    try:
        yield bank_support.SupportDependencies(
            customer_id=customer_id, db=bank_support.DatabaseConn(sqlite_conn=connection)
        )
    finally:
        del vars(bank_support)["cur"]
        connection.close()


def bank_customer() -> AbstractContextManager[bank_support.SupportDependencies]:
    """John (id 123), with an in-memory database that is closed when the scenario ends."""
    return _bank(123)


def bank_unknown_customer() -> AbstractContextManager[bank_support.SupportDependencies]:
    """A customer id the database does not know (the balance tool raises)."""
    return _bank(999)


def _weather_service(request: httpx.Request) -> httpx.Response:
    """The demo endpoints the weather tools call, answered locally."""
    if request.url.path == "/latlng":
        return httpx.Response(200, content=json.dumps({"lat": 51.5, "lng": -0.12}))
    if request.url.path == "/number":
        return httpx.Response(200, text="21")
    if request.url.path == "/weather":
        return httpx.Response(200, text="Sunny")
    return httpx.Response(404)


@asynccontextmanager
async def weather_client() -> AsyncGenerator[weather_agent.Deps]:
    """An `httpx.AsyncClient` on a mock transport, closed when the scenario ends."""
    async with httpx.AsyncClient(transport=httpx.MockTransport(_weather_service)) as client:
        yield weather_agent.Deps(client=client)


def flight_search() -> flight_booking.Deps:
    """The search the example's `main()` runs: SFO to ANC on 2025-01-10, over its sample web page."""
    return flight_booking.Deps(
        web_page_text=flight_booking.flights_web_page,
        req_origin="SFO",
        req_destination="ANC",
        req_date=datetime.date(2025, 1, 10),
    )


def roulette() -> roulette_wheel.Deps:
    """The winning number of the example's `main()`."""
    return roulette_wheel.Deps(winning_number=18)
