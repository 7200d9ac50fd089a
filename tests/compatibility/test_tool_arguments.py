"""Tool-call arguments: the five serialization cases, through `ToolCallPart.args_as_dict()`, real execution,
and agentrig's canonical mapping.

A provider may stream arguments as a JSON string; the runtime reads them with `args_as_dict()`. Invalid JSON
keeps pydantic-ai's `INVALID_JSON` marker rather than silently becoming an empty object, and the canonical
form keeps the raw string so the meaning survives storage on every version.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ExternalToolset, ToolDefinition
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import DeltaToolCall

from agentrig.runtime.history import canonical
from agentrig.runtime.history.wire import dumps_history, loads_history
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.models.conversion import to_canonical, to_pydantic_ai
from tests.compatibility.support import RecordedScript


@dataclass(frozen=True, slots=True, kw_only=True)
class ArgumentCase:
    """One way a model can write tool arguments."""

    args: dict[str, object] | str | None
    """`ToolCallPart.args` as the model wrote it."""
    as_dict: dict[str, object]
    """What `args_as_dict()` returns (the same on every pinned version)."""
    canonical: dict[str, object] | str
    """The canonical `ToolCallPart.args`: a dict for an object, the raw string otherwise."""
    tool_receives: int | None
    """The `a` the tool is called with, or None when the call becomes a validation retry."""


CASES: dict[str, ArgumentCase] = {
    "dict": ArgumentCase(args={"a": 1}, as_dict={"a": 1}, canonical={"a": 1}, tool_receives=1),
    "json-object-string": ArgumentCase(args='{"a": 1}', as_dict={"a": 1}, canonical={"a": 1}, tool_receives=1),
    "malformed-json": ArgumentCase(
        args='{"a": 1', as_dict={"INVALID_JSON": '{"a": 1'}, canonical='{"a": 1', tool_receives=None
    ),
    "non-object-json": ArgumentCase(
        args="[1, 2]", as_dict={"INVALID_JSON": "[1, 2]"}, canonical="[1, 2]", tool_receives=None
    ),
    "none": ArgumentCase(args=None, as_dict={}, canonical={}, tool_receives=0),
    "empty-string": ArgumentCase(args="", as_dict={}, canonical={}, tool_receives=0),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_args_as_dict(case: ArgumentCase) -> None:
    assert ToolCallPart("echo", case.args, tool_call_id="call_1").args_as_dict() == case.as_dict


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_canonical_mapping_keeps_argument_meaning(case: ArgumentCase) -> None:
    original = ModelResponse(parts=[ToolCallPart("echo", case.args, tool_call_id="call_1")])

    (message,) = to_canonical([original])
    (part,) = message.parts
    assert isinstance(part, canonical.ToolCallPart)
    assert part.args == case.canonical

    # Through the canonical JSON file and back to the installed version's objects.
    (restored,) = to_pydantic_ai(loads_history(dumps_history([message])))
    assert isinstance(restored, ModelResponse)
    (restored_part,) = restored.parts
    assert isinstance(restored_part, ToolCallPart)
    assert restored_part.tool_call_id == "call_1"
    assert restored_part.args_as_dict() == case.as_dict


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_agent_executes_or_retries_each_argument_form(case: ArgumentCase) -> None:
    scripted = RecordedScript(
        script=[[ToolCallPart("echo", case.args, tool_call_id="call_1")], [TextPart("done")]],
    )
    agent = Agent(scripted.model())
    calls: list[int] = []

    @agent.tool_plain
    def echo(a: int = 0) -> str:
        calls.append(a)
        return f"echo {a}"

    result = asyncio.run(agent.run("go"))
    assert result.output == "done"

    answer = result.all_messages()[2]
    assert isinstance(answer, ModelRequest)
    (answer_part,) = answer.parts
    (answer_canonical,) = to_canonical([answer])[0].parts
    if case.tool_receives is None:
        # Invalid arguments never reach the tool: a validation retry, in the installed version's shape
        # (RetryPromptPart before 2.60, ToolReturnPart(outcome='retried') from 2.60), one canonical part.
        assert calls == []
        assert pydantic_ai_compat.is_tool_retry(answer_part)
        assert answer_part.part_kind == (
            "retry-prompt" if pydantic_ai_compat.RETRY_SHAPE == "retry-prompt" else "tool-return"
        )
        assert isinstance(answer_canonical, canonical.RetryPromptPart)
        assert answer_canonical.tool_call_id == "call_1"
        assert isinstance(answer_canonical.content, list)
        assert answer_canonical.content[0]["type"] == ("json_invalid" if case.args == '{"a": 1' else "dict_type")
    else:
        assert calls == [case.tool_receives]
        assert isinstance(answer_canonical, canonical.ToolReturnPart)
        assert (answer_canonical.tool_call_id, answer_canonical.outcome) == ("call_1", "success")
        assert answer_canonical.content == f"echo {case.tool_receives}"


def test_streamed_json_string_arguments_reach_a_host_continuation_intact() -> None:
    # A real streamed call to a host (external) tool whose arguments exist only as JSON text, in chunks:
    # the pending call the runtime hands to the host must carry the complete arguments.
    scripted = RecordedScript(
        stream_script=[
            [
                {0: DeltaToolCall(name="pick_file", json_args='{"path": "/tmp/', tool_call_id="host_1")},
                {0: DeltaToolCall(json_args='a.txt", "mode": "r"}')},
            ],
            ["picked"],
        ]
    )
    host_tools = ExternalToolset(
        [ToolDefinition(name="pick_file", parameters_json_schema={"type": "object", "properties": {}})]
    )
    agent = Agent(scripted.model(), output_type=[str, DeferredToolRequests], toolsets=[host_tools])

    async def run_twice() -> tuple[DeferredToolRequests | str, str | DeferredToolRequests, list[ModelMessage]]:
        async with agent.run_stream_events("pick a file") as first:
            async for _ in first:
                pass
        assert first.result is not None
        history = first.result.all_messages()
        results = DeferredToolResults(calls={"host_1": "opened"})
        async with agent.run_stream_events(message_history=history, deferred_tool_results=results) as second:
            async for _ in second:
                pass
        assert second.result is not None
        return first.result.output, second.result.output, history

    pending, final, history = asyncio.run(run_twice())

    assert isinstance(pending, DeferredToolRequests)
    (call,) = pending.calls
    assert call.tool_call_id == "host_1"
    assert call.args_as_dict() == {"path": "/tmp/a.txt", "mode": "r"}
    # The stored call keeps the same meaning in canonical form.
    (stored_call,) = [p for p in to_canonical(history)[-1].parts if isinstance(p, canonical.ToolCallPart)]
    assert stored_call.args == {"path": "/tmp/a.txt", "mode": "r"}
    # The host result reached the model as the call's return.
    assert final == "picked"
    returns = [p for p in scripted.received_canonical()[-1].parts if isinstance(p, canonical.ToolReturnPart)]
    assert [(p.tool_call_id, p.content, p.outcome) for p in returns] == [("host_1", "opened", "success")]
