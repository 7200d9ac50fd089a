"""Model-input history cleanup by the public Agent run pipeline.

A runtime built on pydantic-ai no longer repairs dangling calls or orphaned results itself: the agent
cleans `message_history` before every model request. These cases prove it on the installed version by
looking at what the FunctionModel receives, and at what the run stores.
"""

from __future__ import annotations

import asyncio

import pytest
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ExternalToolset, ToolDefinition
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from agentrig.runtime.history import canonical
from tests.compatibility.support import RecordedScript, flat_parts, scripted_usage

INTERRUPTED = "The tool call was interrupted before a result was produced."


def response(*parts: ToolCallPart | TextPart) -> ModelResponse:
    return ModelResponse(parts=list(parts), usage=scripted_usage(0))


def history_with_dangling_call(args: str | dict[str, object]) -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart("look it up")]),
        response(ToolCallPart("lookup", args, tool_call_id="dangling_1")),
        ModelRequest(parts=[UserPromptPart("never mind, say hi")]),
        response(TextPart("hi")),
    ]


def run(agent: Agent[None, str], prompt: str, history: list[ModelMessage]) -> list[ModelMessage]:
    result = asyncio.run(agent.run(prompt, message_history=history))
    return result.all_messages()


@pytest.mark.parametrize("args", [{"key": "a"}, '{"key": "a"', "[1]"], ids=["dict", "malformed-json", "non-object"])
def test_public_history_closes_dangling_calls_including_malformed_args(args: str | dict[str, object]) -> None:
    scripted = RecordedScript(script=[[TextPart("ok")]])
    agent = Agent(scripted.model())

    stored = run(agent, "and now?", history_with_dangling_call(args))

    # The model gets an interrupted return for the dangling call, right before the user text that followed it.
    (received,) = scripted.received
    seen = flat_parts(scripted.received_canonical())
    assert [(kind, part.part_kind) for kind, part in seen] == [
        ("request", "text"),
        ("response", "tool-call"),
        ("request", "tool-return"),
        ("request", "text"),
        ("response", "text"),
        ("request", "text"),
    ]
    synthesized = seen[2][1]
    assert isinstance(synthesized, canonical.ToolReturnPart)
    assert (synthesized.tool_call_id, synthesized.tool_name, synthesized.outcome) == (
        "dangling_1",
        "lookup",
        "interrupted",
    )
    assert synthesized.content == INTERRUPTED
    (native,) = [p for m in received for p in m.parts if isinstance(p, ToolReturnPart)]
    assert native.metadata == {"pydantic_ai_synthesized_tool_return": True}

    # The repair is persisted in the run's history (the cleaned history replaces the input).
    stored_returns = [p for m in stored for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [(p.tool_call_id, p.outcome) for p in stored_returns] == [("dangling_1", "interrupted")]
    # The call keeps its arguments as written.
    (call,) = [p for m in stored for p in m.parts if isinstance(p, ToolCallPart)]
    assert call.args == args


def test_public_history_drops_orphaned_results_before_model_request() -> None:
    scripted = RecordedScript(script=[[TextPart("ok")]])
    agent = Agent(scripted.model())
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("hello")]),
        response(TextPart("hi")),
        # A result whose call never appeared, next to real user text, and one alone in its request.
        ModelRequest(parts=[ToolReturnPart("lookup", "stale", tool_call_id="ghost_1"), UserPromptPart("still there?")]),
        response(TextPart("yes")),
        ModelRequest(parts=[ToolReturnPart("lookup", "stale", tool_call_id="ghost_2")]),
    ]

    stored = run(agent, "bye", history)

    seen = scripted.received_canonical()
    assert canonical.tool_return_ids(seen) == []
    assert [(kind, part.part_kind) for kind, part in flat_parts(seen)] == [
        ("request", "text"),
        ("response", "text"),
        ("request", "text"),
        ("response", "text"),
        ("request", "text"),
    ]
    assert [m.kind for m in seen] == ["request", "response", "request", "response", "request"]
    # Gone from the stored history too.
    assert not [p for m in stored for p in m.parts if isinstance(p, ToolReturnPart)]


def test_public_continuation_closes_older_dangling_call_with_deferred_result() -> None:
    # An older dangling call and a newer pending host call: resuming with the host result closes the old
    # call as interrupted and answers the new one, in one request to the model.
    scripted = RecordedScript(script=[[TextPart("resumed")]])
    host_tools = ExternalToolset([ToolDefinition(name="confirm", parameters_json_schema={"type": "object"})])
    agent = Agent(scripted.model(), output_type=[str, DeferredToolRequests], toolsets=[host_tools])
    history = [
        *history_with_dangling_call({"key": "a"}),
        ModelRequest(parts=[UserPromptPart("confirm it")]),
        response(ToolCallPart("confirm", {}, tool_call_id="host_1")),
    ]

    result = asyncio.run(
        agent.run(message_history=history, deferred_tool_results=DeferredToolResults(calls={"host_1": "yes"}))
    )

    assert result.output == "resumed"
    returns = [p for _, p in flat_parts(scripted.received_canonical()) if isinstance(p, canonical.ToolReturnPart)]
    assert [(p.tool_call_id, p.outcome, p.content) for p in returns] == [
        ("dangling_1", "interrupted", INTERRUPTED),
        ("host_1", "success", "yes"),
    ]
