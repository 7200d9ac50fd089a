"""Deps for the held-out suite's agents (`deps: heldout_deps:<name>`), as a test of each application would build
them: in-memory databases, mock HTTP transports and fakes of the third-party clients the agents call. No
network, no API key; each builder is a zero-argument callable (or returns a context manager)."""

from __future__ import annotations

import datetime
import json
import sqlite3
from collections.abc import AsyncGenerator, Generator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import asyncpg.exceptions
import httpx
from pydantic_ai.ui import StateDeps
from pydantic_ai_examples import (
    bank_support,
    flight_booking,
    medical_agent_delegation,
    rag,
    roulette_wheel,
    sql_gen,
    twelvelabs_video_agent,
    weather_agent,
)
from pydantic_ai_examples.ag_ui.api import predictive_state_updates, shared_state
from pydantic_ai_examples.evals import agent as evals_agent

# --- bank_support ---


@contextmanager
def _bank(customer_id: int) -> Generator[bank_support.SupportDependencies]:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE customers(id, name, balance)")
    connection.executemany(
        "INSERT INTO customers VALUES (?, ?, ?)", [(123, "John", 123.45), (456, "Ada", 98210.0), (789, "Li", -42.5)]
    )
    vars(bank_support)["cur"] = connection.cursor()  # the example's DatabaseConn reads a module-level cursor
    try:
        yield bank_support.SupportDependencies(customer_id=customer_id, db=bank_support.DatabaseConn(connection))
    finally:
        del vars(bank_support)["cur"]
        connection.close()


def bank_john() -> AbstractContextManager[bank_support.SupportDependencies]:
    return _bank(123)


def bank_ada() -> AbstractContextManager[bank_support.SupportDependencies]:
    return _bank(456)


def bank_li() -> AbstractContextManager[bank_support.SupportDependencies]:
    return _bank(789)


def bank_stranger() -> AbstractContextManager[bank_support.SupportDependencies]:
    return _bank(999)


# --- weather_agent ---

_PLACES = {"London": (51.5, -0.12), "Wiltshire": (51.35, -1.99), "Paris": (48.86, 2.35), "Oslo": (59.91, 10.75)}


def _weather_service(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/latlng":
        lat, lng = _PLACES.get(request.url.params.get("location", ""), (0.0, 0.0))
        return httpx.Response(200, content=json.dumps({"lat": lat, "lng": lng}))
    if request.url.path == "/number":
        return httpx.Response(200, text="17")
    if request.url.path == "/weather":
        return httpx.Response(200, text="Drizzle" if float(request.url.params.get("lat", 0)) > 51 else "Sunny")
    return httpx.Response(404)


@asynccontextmanager
async def weather() -> AsyncGenerator[weather_agent.Deps]:
    async with httpx.AsyncClient(transport=httpx.MockTransport(_weather_service)) as client:
        yield weather_agent.Deps(client=client)


# --- flight_booking, roulette_wheel ---


def flights_to_anc() -> flight_booking.Deps:
    return flight_booking.Deps(
        web_page_text=flight_booking.flights_web_page,
        req_origin="SFO",
        req_destination="ANC",
        req_date=datetime.date(2025, 1, 10),
    )


def flights_to_mia() -> flight_booking.Deps:
    return flight_booking.Deps(
        web_page_text=flight_booking.flights_web_page,
        req_origin="ORD",
        req_destination="MIA",
        req_date=datetime.date(2025, 1, 12),
    )


def roulette_18() -> roulette_wheel.Deps:
    return roulette_wheel.Deps(winning_number=18)


def roulette_7() -> roulette_wheel.Deps:
    return roulette_wheel.Deps(winning_number=7)


# --- evals time range ---


def time_range_deps() -> evals_agent.TimeRangeDeps:
    zone = datetime.timezone(datetime.timedelta(hours=-8), "PST")
    return evals_agent.TimeRangeDeps(now=datetime.datetime(2024, 11, 22, 23, 15, 14, tzinfo=zone))


# --- medical_agent_delegation ---


def patient_p001() -> medical_agent_delegation.PatientInfo:
    return medical_agent_delegation.PatientInfo(patient_id="P001", age=64, known_conditions=["hypertension"])


def patient_p002() -> medical_agent_delegation.PatientInfo:
    return medical_agent_delegation.PatientInfo(patient_id="P002", age=34, known_conditions=[])


def patient_p003() -> medical_agent_delegation.PatientInfo:
    return medical_agent_delegation.PatientInfo(
        patient_id="P003", age=71, known_conditions=["Type 2 Diabetes", "Chronic Migraines"]
    )


# --- sql_gen: a connection whose EXPLAIN knows the records table ---


@dataclass
class _ExplainOnly:
    """A stand-in for the asyncpg connection: EXPLAIN of a query over unknown columns fails as Postgres would."""

    columns: frozenset[str] = frozenset({"level", "start_timestamp", "attributes", "tags", "message", "span_name"})
    explained: list[str] = field(default_factory=list[str])

    async def execute(self, query: str) -> str:
        self.explained.append(query)
        if "service" in query and "service_name" not in query:
            raise asyncpg.exceptions.UndefinedColumnError('column "service" does not exist')
        return "EXPLAIN"


def sql_connection() -> sql_gen.Deps:
    return sql_gen.Deps(conn=_ExplainOnly())  # pyright: ignore[reportArgumentType]


# --- rag: embeddings and a vector search answered locally ---


class _Embeddings:
    async def create(self, *, input: str, model: str) -> Any:
        return SimpleNamespace(data=[SimpleNamespace(embedding=[0.25, 0.5, 0.25])])


class _Pool:
    async def fetch(self, query: str, embedding: str) -> list[dict[str, str]]:
        return [
            {
                "url": "https://logfire.pydantic.dev/docs/integrations/fastapi/",
                "title": "FastAPI",
                "content": "Call logfire.instrument_fastapi(app) after logfire.configure().",
            }
        ]


def rag_search() -> rag.Deps:
    return rag.Deps(openai=SimpleNamespace(embeddings=_Embeddings()), pool=_Pool())  # pyright: ignore[reportArgumentType]


# --- twelvelabs_video_agent ---


class _Pegasus:
    async def analyze(self, *, model_name: str, video: Any, prompt: str, max_tokens: int) -> Any:
        if "color" in prompt:
            return SimpleNamespace(data="Mostly grey and orange tones.")
        return SimpleNamespace(data="Two characters explore a vast surreal machine world.")


def video() -> twelvelabs_video_agent.Deps:
    return twelvelabs_video_agent.Deps(twelvelabs=_Pegasus(), video_url="https://example.com/elephants.mp4")  # pyright: ignore[reportArgumentType]


# --- ag_ui state ---


def draft_document() -> StateDeps[predictive_state_updates.DocumentState]:
    return StateDeps(predictive_state_updates.DocumentState(document="Dear team,\nThe launch moved to Friday."))


def empty_recipe() -> StateDeps[shared_state.RecipeSnapshot]:
    return StateDeps(shared_state.RecipeSnapshot())
