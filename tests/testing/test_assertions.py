"""`agentrig.testing`'s assertions over pydantic-ai runs that agentrig did not make: the user's own `agent.run`."""

from __future__ import annotations

import asyncio
import re

import pytest
from pydantic_ai import Agent
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentrig.testing import (
    assert_no_unknown_tools,
    assert_tool_called,
    assert_tool_calls_in_order,
    assert_tool_not_called,
    assert_usage,
    tool_calls,
)


def _agent() -> Agent[None, str]:
    agent: Agent[None, str] = Agent(None)

    @agent.tool_plain
    def lookup(city: str, units: str = "metric") -> str:
        return f"sunny in {city} ({units})"

    @agent.tool_plain
    def book(city: str) -> str:
        return f"booked {city}"

    return agent


def _script(*calls: list[tuple[str, dict[str, object]]]) -> FunctionModel:
    """A model that makes these calls, one response per list, then answers "done"."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        del info
        step = sum(isinstance(message, ModelResponse) for message in messages)
        if step < len(calls):
            return ModelResponse(
                parts=[
                    ToolCallPart(name, args, tool_call_id=f"c{step}_{i}") for i, (name, args) in enumerate(calls[step])
                ]
            )
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond)


def _run(*calls: list[tuple[str, dict[str, object]]]) -> AgentRunResult[str]:
    # asyncio.run, not run_sync: run_sync leaves its event loop open for the test session to find unclosed.
    return asyncio.run(_agent().run("weather?", model=_script(*calls)))


def test_a_tool_call_is_found_with_args_equal_or_a_subset() -> None:
    result = _run([("lookup", {"city": "Paris", "units": "metric"})], [("book", {"city": "Paris"})])

    call = assert_tool_called(result, "lookup", {"city": "Paris"})
    assert_tool_called(result, "lookup", {"city": "Paris", "units": "metric"}, exact=True)
    assert_tool_called(result.all_messages(), "book", times=1)  # the messages list works as well as the result
    assert_tool_not_called(result, "cancel")

    assert call.name == "lookup"
    assert [c.name for c in tool_calls(result)] == ["lookup", "book"]


def test_a_missing_call_fails_and_lists_the_calls_that_happened() -> None:
    result = _run([("lookup", {"city": "Paris"})])

    with pytest.raises(AssertionError) as missing:
        assert_tool_called(result, "book")
    with pytest.raises(AssertionError) as other_args:
        assert_tool_called(result, "lookup", {"city": "Rome"})
    with pytest.raises(AssertionError) as not_exact:
        assert_tool_called(result, "lookup", {"city": "Paris", "units": "imperial"}, exact=True)
    with pytest.raises(AssertionError) as called:
        assert_tool_not_called(result, "lookup")

    assert (
        str(missing.value)
        == 'expected a call to \'book\'\ntool calls made (1):\n  1. lookup({"city":"Paris"}) [id c0_0]'
    )
    assert 'expected a call to \'lookup\' with args including {"city":"Rome"}' in str(other_args.value)
    assert 'lookup({"city":"Paris"})' in str(other_args.value)
    assert "equal to" in str(not_exact.value)
    assert "expected no call to 'lookup'" in str(called.value)
    with pytest.raises(AssertionError, match=re.escape("expected 2 call(s) to 'lookup', got 1")):
        assert_tool_called(result, "lookup", times=2)


def test_calls_in_order_allow_calls_between_unless_exact() -> None:
    result = _run(
        [("lookup", {"city": "Paris"}), ("lookup", {"city": "Rome"})],
        [("book", {"city": "Rome"})],
    )

    assert_tool_calls_in_order(result, ("lookup", {"city": "Paris"}), ("book", {"city": "Rome"}))
    assert_tool_calls_in_order(result, "lookup", "lookup", "book", exact=True)
    with pytest.raises(AssertionError) as wrong_order:
        assert_tool_calls_in_order(result, "book", ("lookup", {"city": "Paris"}))
    with pytest.raises(AssertionError) as not_exact:
        assert_tool_calls_in_order(result, "lookup", "book", exact=True)

    assert 'no call to \'lookup\' with args including {"city":"Paris"} after book' in str(wrong_order.value)
    assert "tool calls made (3):" in str(wrong_order.value)
    assert "expected exactly these calls: 'lookup', 'book'" in str(not_exact.value)


def test_a_call_to_a_tool_the_agent_lacks_is_found() -> None:
    typo = _run([("lokup", {"city": "Paris"})])
    fine = _run([("lookup", {"city": "Paris"})])

    assert_no_unknown_tools(fine)
    assert_no_unknown_tools(fine, known=["lookup"])
    with pytest.raises(AssertionError) as unknown:
        assert_no_unknown_tools(typo)
    with pytest.raises(AssertionError) as not_listed:
        assert_no_unknown_tools(fine, known=["book"])

    assert "'lokup' (call c0_0): the model was told \"Unknown tool name: 'lokup'." in str(unknown.value)
    assert "1. lokup(" in str(unknown.value)
    assert "'lookup' (call c0_0) is not one of ['book']" in str(not_listed.value)


def test_usage_within_bounds() -> None:
    result = _run([("lookup", {"city": "Paris"})])

    usage = assert_usage(result, requests=2, tool_calls=(1, None), total_tokens=(1, 10_000))

    assert usage.requests == 2
    with pytest.raises(AssertionError) as too_many:
        assert_usage(result, requests=(None, 1))
    assert "requests: expected at most 1, got 2" in str(too_many.value)
    assert "usage: requests=2, tool_calls=1" in str(too_many.value)
    with pytest.raises(TypeError, match="unknown usage field"):
        assert_usage(result, request=1)
