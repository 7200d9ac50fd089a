"""Agents whose runs send the model retries of each kind, for tests/scaffold/test_retry_contents.py: a bare
structured output type (pydantic-ai's default mode: an output tool, and a text answer read as the output's JSON, so
a text answer is sent its validation errors), a tool whose arguments fail validation, a tool that raises
`ModelRetry`, and an output validator that asks again."""

from __future__ import annotations

from pydantic import BaseModel, Field
from pydantic_ai import Agent, ModelRetry


class Point(BaseModel):
    x: int
    y: int = Field(le=10)


def bare_output_agent() -> Agent[None, Point]:
    """`output_type=Point`, not wrapped in `ToolOutput`: a text answer is validated as the output's JSON."""
    return Agent(None, output_type=Point)


def tools_agent() -> Agent[None, Point]:
    """A tool with typed arguments, one that raises `ModelRetry`, and an output validator that asks again."""
    agent = Agent(None, output_type=Point, retries=3)

    @agent.tool_plain
    def add(a: int, b: int) -> int:  # pyright: ignore[reportUnusedFunction]
        return a + b

    @agent.tool_plain
    def lookup(key: str) -> str:  # pyright: ignore[reportUnusedFunction]
        if key != "good":
            raise ModelRetry(f"no key {key!r}; try 'good'")
        return "value"

    @agent.output_validator
    def positive(point: Point) -> Point:  # pyright: ignore[reportUnusedFunction]
        if point.x < 0:
            raise ModelRetry("x must be >= 0")
        return point

    return agent


class Query(BaseModel):
    sql_query: str


def cleaning_agent() -> Agent[None, Query]:
    """An output validator that changes the output (as pydantic-ai-examples' SQL agent strips the backslashes a
    model adds): the run's output is not what the output tool's arguments say."""
    agent = Agent(None, output_type=Query)

    @agent.output_validator
    def strip_backslashes(query: Query) -> Query:  # pyright: ignore[reportUnusedFunction]
        return Query(sql_query=query.sql_query.replace("\\", ""))

    return agent
