"""An agent whose runs can run out of output retries, for tests/scaffold/test_exhausted_retries.py: one retry
(`retries=1`, which its output shares), so a second output tool call that fails validation ends the run with
pydantic-ai's `UnexpectedModelBehavior: Exceeded maximum output retries (1)`."""

from __future__ import annotations

from pydantic import BaseModel
from pydantic_ai import Agent


class Point(BaseModel):
    x: int
    y: int


def one_retry_agent() -> Agent[None, Point]:
    return Agent(None, output_type=Point, retries=1)
