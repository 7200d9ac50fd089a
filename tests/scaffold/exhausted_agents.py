"""An agent whose runs can run out of output retries, for tests/scaffold/test_exhausted_retries.py: one retry
(`retries=1`, which its output shares), so a second output tool call that fails validation ends the run with
pydantic-ai's `UnexpectedModelBehavior: Exceeded maximum output retries (1)`."""

from __future__ import annotations

from pydantic import BaseModel, Field
from pydantic_ai import Agent


class Point(BaseModel):
    x: int
    y: int


def one_retry_agent() -> Agent[None, Point]:
    return Agent(None, output_type=Point, retries=1)


class Percent(BaseModel):
    """A value a validator checks against a range: schema inference, which sees only accepted values' types, cannot
    tell the rejected arguments from the accepted ones."""

    value: int = Field(ge=0, le=100)


def percent_agent() -> Agent[None, Percent]:
    return Agent(None, output_type=Percent, retries=1)
