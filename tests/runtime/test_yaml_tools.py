"""YAML tools: canned outcomes matched by args and call number, run by a real agent."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentrig.runtime.engine.pydantic_ai_engine.yaml_tools import (
    ToolCallCounts,
    build_tools,
    can_defer,
    matching_result,
)
from agentrig.runtime.models.stops import ScriptedToolFailure, ScriptMismatch
from agentrig.scenarios.model import ToolSpec


def _spec(data: dict[str, Any]) -> ToolSpec:
    return ToolSpec.model_validate(data)


def _calls_then_text(*calls: ToolCallPart) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if sum(m.kind == "response" for m in messages) == 0:
            return ModelResponse(parts=list(calls))
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(answer)


def _run(tools: dict[str, ToolSpec], *calls: ToolCallPart, deps: ToolCallCounts | None = None) -> Any:
    output: Any = [str, DeferredToolRequests] if can_defer(tools) else str
    agent: Agent[ToolCallCounts, Any] = Agent(
        _calls_then_text(*calls), tools=build_tools(tools), deps_type=ToolCallCounts, output_type=output
    )
    return asyncio.run(agent.run("go", deps=deps or ToolCallCounts()))


def _returns(result: Any) -> dict[str, Any]:
    return {
        p.tool_call_id: p.content
        for m in result.all_messages()
        for p in m.parts
        if p.part_kind in ("tool-return", "retry-prompt")
    }


def test_rules_match_by_args_subset_then_call_number() -> None:
    spec = _spec(
        {
            "results": [
                {"when": {"path": "a"}, "return": "A"},
                {"call": 3, "return": "third call"},
                {"return": "default"},
            ]
        }
    )
    assert matching_result(spec, {"path": "a", "extra": 1}, 1) is spec.results[0]
    assert matching_result(spec, {"path": "b"}, 3) is spec.results[1]
    assert matching_result(spec, {"path": "b"}, 2) is spec.results[2]
    assert matching_result(_spec({"results": [{"when": {"x": 1}, "return": 1}]}), {"x": 2}, 1) is None


def test_schema_and_description_are_what_the_model_sees() -> None:
    seen: list[Any] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(info.function_tools)
        return ModelResponse(parts=[TextPart("ok")])

    parameters = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
    tools = {"bash": _spec({"description": "Run a command.", "parameters": parameters, "results": [{"return": 1}]})}
    agent = Agent(FunctionModel(answer), tools=build_tools(tools), deps_type=ToolCallCounts)
    asyncio.run(agent.run("go", deps=ToolCallCounts()))
    (tool,) = seen
    assert (tool.name, tool.description, tool.parameters_json_schema) == ("bash", "Run a command.", parameters)


def test_outcomes_return_values_and_count_calls_across_runs() -> None:
    tools = {"get": _spec({"results": [{"call": 1, "return": {"n": 1}}, {"return": [2]}]})}
    counts = ToolCallCounts()
    first = _run(tools, ToolCallPart("get", {}, tool_call_id="g1"), deps=counts)
    second = _run(tools, ToolCallPart("get", {}, tool_call_id="g2"), deps=counts)
    assert _returns(first) == {"g1": {"n": 1}}
    assert _returns(second) == {"g2": [2]}
    assert counts.counts["get"] == 2


def test_retry_asks_the_model_again_and_exhaustion_is_unexpected_behaviour() -> None:
    tools = {"flaky": _spec({"retries": 0, "results": [{"retry": "try later"}]})}
    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries count of 0"):
        _run(tools, ToolCallPart("flaky", {}, tool_call_id="f1"))


def test_fail_raises_a_non_retryable_error_naming_the_call() -> None:
    tools = {"rm": _spec({"results": [{"fail": "denied"}]})}
    with pytest.raises(ScriptedToolFailure) as raised:
        _run(tools, ToolCallPart("rm", {"path": "/"}, tool_call_id="r1"))
    assert raised.value.message == "tool 'rm' call #1 failed: denied"
    assert raised.value.tool_call_id == "r1"


def test_defer_ends_the_run_with_pending_calls() -> None:
    tools = {"job": _spec({"results": [{"defer": True}]})}
    result = _run(tools, ToolCallPart("job", {}, tool_call_id="j1"))
    assert isinstance(result.output, DeferredToolRequests)
    assert [c.tool_call_id for c in result.output.calls] == ["j1"]


def test_unmatched_call_names_tool_number_and_args() -> None:
    tools = {"bash": _spec({"results": [{"when": {"command": "ls"}, "return": "a"}]})}
    with pytest.raises(
        ScriptMismatch, match=r"""tool 'bash' call #1 with args \{"command": "rm"\}: no result rule matches"""
    ):
        _run(tools, ToolCallPart("bash", {"command": "rm"}, tool_call_id="b1"))


def test_delay_and_sequential_tools_still_return_in_call_order() -> None:
    tools = {
        "slow": _spec({"sequential": True, "results": [{"return": "slow", "delay": 0.01}]}),
        "fast": _spec({"results": [{"return": "fast"}]}),
    }
    result = _run(tools, ToolCallPart("slow", {}, tool_call_id="s1"), ToolCallPart("fast", {}, tool_call_id="f1"))
    assert list(_returns(result).items()) == [("s1", "slow"), ("f1", "fast")]


def test_per_tool_retries_override_the_agent_default() -> None:
    built = {tool.name: tool for tool in build_tools({"a": _spec({"retries": 4}), "b": _spec({})})}
    assert built["a"].max_retries == 4
    assert built["b"].max_retries is None
