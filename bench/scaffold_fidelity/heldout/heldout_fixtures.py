"""Deps for the held-out scenarios over the `pydantic-ai-examples` agents (`deps: heldout_fixtures:<name>`).

Written as a test of each application would build them, from the examples' own source and docs/tutorial-own-agent.md:
SQLite for the bank, `httpx.MockTransport` for the HTTP services (weather, OpenAI embeddings), small fakes for
what has no local stand-in (an asyncpg connection and pool, the TwelveLabs client). The example modules are
imported inside each builder: the modules build their provider clients at import, and agentrig gives that import
placeholder keys (docs/tutorial-own-agent.md, "Models named at import"); whether a deps module imported on its own
gets them too the docs do not say, so this one does not rely on it.
"""

from __future__ import annotations

import datetime
import json
import sqlite3
from collections.abc import AsyncGenerator, Generator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

import httpx

# --- bank_support: an in-memory SQLite database, closed when the scenario ends ---------------------------------


@contextmanager
def _bank(customer_id: int) -> Generator[Any]:
    from pydantic_ai_examples import bank_support

    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE customers(id, name, balance)")
    connection.executemany("INSERT INTO customers VALUES (?, ?, ?)", [(123, "John", 123.45), (456, "Jane", 5021.7)])
    # DatabaseConn queries the module-level cursor `cur` that only the example's `__main__` block creates.
    vars(bank_support)["cur"] = connection.cursor()
    try:
        yield bank_support.SupportDependencies(
            customer_id=customer_id, db=bank_support.DatabaseConn(sqlite_conn=connection)
        )
    finally:
        vars(bank_support).pop("cur", None)
        connection.close()


def bank_john() -> Any:
    return _bank(123)


def bank_jane() -> Any:
    return _bank(456)


def bank_nobody() -> Any:
    """A customer id the database does not hold: customer_balance raises ValueError."""
    return _bank(999)


# --- weather_agent: the demo endpoints answered locally --------------------------------------------------------

_PLACES = {"London": (51.51, -0.13), "Wiltshire": (51.35, -1.99), "Paris": (48.86, 2.35)}
_SKIES = {"51.51": "Sunny", "51.35": "Light rain", "48.86": "Overcast"}


def _weather_service(weather_status: int) -> Any:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/latlng":
            lat, lng = _PLACES.get(request.url.params.get("location", ""), (0.0, 0.0))
            return httpx.Response(200, content=json.dumps({"lat": lat, "lng": lng}))
        if request.url.path == "/number":
            return httpx.Response(200, text="21")
        if request.url.path == "/weather":
            if weather_status != 200:
                return httpx.Response(weather_status, text="upstream unavailable")
            return httpx.Response(200, text=_SKIES.get(request.url.params.get("lat", ""), "Clear"))
        return httpx.Response(404)

    return handle


@asynccontextmanager
async def _weather(weather_status: int) -> AsyncGenerator[Any]:
    from pydantic_ai_examples import weather_agent

    async with httpx.AsyncClient(transport=httpx.MockTransport(_weather_service(weather_status))) as client:
        yield weather_agent.Deps(client=client)


def weather() -> Any:
    return _weather(200)


def weather_down() -> Any:
    """The weather endpoint answers 503: get_weather's raise_for_status raises."""
    return _weather(503)


# --- flight_booking ----------------------------------------------------------------------------------------------


def flights() -> Any:
    """The search of the example's main(): SFO to ANC on 2025-01-10, over its sample page."""
    from pydantic_ai_examples import flight_booking

    return flight_booking.Deps(
        web_page_text=flight_booking.flights_web_page,
        req_origin="SFO",
        req_destination="ANC",
        req_date=datetime.date(2025, 1, 10),
    )


def roulette() -> Any:
    from pydantic_ai_examples import roulette_wheel

    return roulette_wheel.Deps(winning_number=18)


# --- sql_gen: an asyncpg connection stand-in whose EXPLAIN knows the records table ------------------------------

_COLUMNS = {
    "created_at", "start_timestamp", "end_timestamp", "trace_id", "span_id", "parent_span_id", "level",
    "span_name", "message", "attributes_json_schema", "attributes", "tags", "is_exception",
    "otel_status_message", "service_name",
}  # fmt: skip


@dataclass
class FakeConnection:
    """What the validator uses of asyncpg.Connection: `execute`, raising asyncpg's errors as Postgres would."""

    statements: list[str] = field(default_factory=list[str])

    async def execute(self, query: str) -> str:
        import asyncpg.exceptions

        self.statements.append(query)
        for word in query.replace(",", " ").replace("(", " ").split():
            if word.startswith("attr_") or word == "severity":
                raise asyncpg.exceptions.UndefinedColumnError(f'column "{word}" does not exist')
        return "EXPLAIN"


def sql_connection() -> Any:
    from pydantic_ai_examples import sql_gen

    return sql_gen.Deps(conn=FakeConnection())  # type: ignore[arg-type]


# --- rag: OpenAI embeddings on a mock transport, an asyncpg pool stand-in --------------------------------------

_SECTIONS = [
    {"url": "https://logfire.pydantic.dev/docs/integrations/fastapi/", "title": "FastAPI",
     "content": "Call logfire.instrument_fastapi(app) after logfire.configure()."},
    {"url": "https://logfire.pydantic.dev/docs/integrations/asyncpg/", "title": "asyncpg",
     "content": "Call logfire.instrument_asyncpg() once at startup."},
]  # fmt: skip


@dataclass
class FakePool:
    """What the retrieve tool uses of asyncpg.Pool: `fetch`, answering the nearest sections."""

    async def fetch(self, query: str, *args: object) -> list[dict[str, str]]:
        return list(_SECTIONS)


def _embeddings(status: int) -> Any:
    def handle(request: httpx.Request) -> httpx.Response:
        if status != 200:
            error = {"message": "The server had an error", "type": "server_error"}
            return httpx.Response(status, json={"error": error})
        body = {
            "object": "list",
            "data": [{"object": "embedding", "index": 0, "embedding": [0.01, 0.02, 0.03]}],
            "model": "text-embedding-3-small",
            "usage": {"prompt_tokens": 5, "total_tokens": 5},
        }
        return httpx.Response(200, json=body)

    return handle


@asynccontextmanager
async def _rag(status: int) -> AsyncGenerator[Any]:
    from openai import AsyncOpenAI
    from pydantic_ai_examples import rag

    async with httpx.AsyncClient(transport=httpx.MockTransport(_embeddings(status))) as client:
        openai = AsyncOpenAI(api_key="sk-test", base_url="http://openai.test/v1", http_client=client, max_retries=0)
        yield rag.Deps(openai=openai, pool=FakePool())  # type: ignore[arg-type]


def rag_docs() -> Any:
    return _rag(200)


def rag_embeddings_down() -> Any:
    return _rag(500)


# --- twelvelabs_video_agent: the client's analyze() answered locally ------------------------------------------


@dataclass
class _Analysis:
    data: str


@dataclass
class FakeTwelveLabs:
    async def analyze(self, *, model_name: str, video: object, prompt: str, max_tokens: int) -> _Analysis:
        if "colour" in prompt or "color" in prompt:
            return _Analysis("The dominant colours are grey and orange.")
        return _Analysis("Two men explore a vast surreal machine world.")


def video() -> Any:
    from pydantic_ai_examples import twelvelabs_video_agent

    return twelvelabs_video_agent.Deps(twelvelabs=FakeTwelveLabs(), video_url="https://example.com/video.mp4")  # type: ignore[arg-type]


# --- evals: the time-range agent with a fixed "now", as its deps' docstring recommends --------------------------


def time_range_now() -> Any:
    from pydantic_ai_examples.evals.agent import TimeRangeDeps

    return TimeRangeDeps(now=datetime.datetime(2024, 11, 22, 23, 15, 14, tzinfo=ZoneInfo("America/Los_Angeles")))


# --- medical_agent_delegation ----------------------------------------------------------------------------------


def patient_p001() -> Any:
    from pydantic_ai_examples.medical_agent_delegation import PatientInfo

    return PatientInfo(patient_id="P001", age=64, known_conditions=["hypertension"])


def patient_p003() -> Any:
    from pydantic_ai_examples.medical_agent_delegation import PatientInfo

    return PatientInfo(patient_id="P003", age=71, known_conditions=["Type 2 Diabetes", "Chronic Migraines"])


# --- ag_ui: StateDeps, as dispatch_request would hand each request its own copy ---------------------------------


def document_state() -> Any:
    from pydantic_ai.ui import StateDeps
    from pydantic_ai_examples.ag_ui.api.predictive_state_updates import DocumentState

    return StateDeps(DocumentState(document="Once upon a time there was a dragon."))


def recipe_state() -> Any:
    from pydantic_ai.ui import StateDeps
    from pydantic_ai_examples.ag_ui.api.shared_state import Ingredient, Recipe, RecipeSnapshot

    return StateDeps(RecipeSnapshot(recipe=Recipe(ingredients=[Ingredient(icon="🥕", name="Carrot", amount="2")])))


# --- data_analyst: a frame already loaded as Out[1] (load_dataset needs the Hugging Face hub) ------------------


def analyst_reviews() -> Any:
    import pandas as pd
    from pydantic_ai_examples.data_analyst import AnalystAgentDeps

    deps = AnalystAgentDeps()
    deps.store(
        pd.DataFrame({"text": ["a gripping film", "dull and long", "a waste of time", "lovely"], "label": [1, 0, 0, 1]})
    )
    return deps
