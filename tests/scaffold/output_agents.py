"""Agents whose runs end in each output shape and host decision scaffold must replay, for
tests/scaffold/test_output_shapes.py: an output tool with a custom name (`ToolOutput(..., name=...)`), a prompted
output (its instructions are the output's template, which no dump records), a union of two output types (two output
tools), and a tool that asks the host for approval beside one that runs at once."""

from __future__ import annotations

from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, PromptedOutput, ToolOutput


class Point(BaseModel):
    x: int
    y: int


class Refusal(BaseModel):
    reason: str


def named_output_agent() -> Agent[None, Point]:
    """The output tool is `answer`, not pydantic-ai's `final_result`."""
    return Agent(None, output_type=ToolOutput(Point, name="answer"))


def prompted_output_agent() -> Agent[None, Point]:
    """The model answers JSON text; pydantic-ai adds the output's template to the instructions the model reads."""
    return Agent(None, output_type=PromptedOutput(Point), instructions="Answer with a point.")


def union_output_agent() -> Agent[None, Point | Refusal | int]:
    """Three output tools: `final_result_Point`, `final_result_Refusal` (pydantic-ai's names) and `count` (a
    non-object member, wrapped as `{response: ...}`)."""
    return Agent(None, output_type=[Point, Refusal, ToolOutput(int, name="count")])


def approving_agent() -> Agent[None, str | DeferredToolRequests]:
    """`delete_file` asks the host for approval; `list_files` runs at once."""
    agent: Agent[None, str | DeferredToolRequests] = Agent(None, output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Delete a file."""
        return f"deleted {path}"

    @agent.tool_plain
    def list_files() -> list[str]:  # pyright: ignore[reportUnusedFunction]
        """The files there are."""
        return ["/tmp/a", "/tmp/b"]

    return agent
