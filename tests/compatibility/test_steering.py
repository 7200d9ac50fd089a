"""Steering: content a tool enqueues with `RunContext.enqueue` reaches the model exactly once.

Message boundaries differ between versions: the enqueued text is a separate request after the
tool-return request on 2.38 (and up to 2.59 at least), and part of the tool-return request on 2.68. These
cases compare per-part sequences, which are the same everywhere.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai import Agent, EnqueuedMessagesEvent, RunContext
from pydantic_ai.messages import ModelMessage, TextPart, ToolCallPart
from pydantic_ai.models.function import DeltaToolCall

from agentrig.runtime.history import canonical
from agentrig.runtime.models.conversion import to_canonical
from tests.compatibility.support import RecordedScript, flat_parts

STEER = "STEER: also check the logs"

PART_SEQUENCE = [
    ("request", canonical.TextPart(content="go")),
    ("response", canonical.ToolCallPart(tool_call_id="notify_1", tool_name="notify", args={})),
    ("request", canonical.ToolReturnPart(tool_call_id="notify_1", tool_name="notify", content="notified")),
    ("request", canonical.TextPart(content=STEER)),
    ("response", canonical.ToolCallPart(tool_call_id="other_1", tool_name="other", args={})),
    ("request", canonical.ToolReturnPart(tool_call_id="other_1", tool_name="other", content="other done")),
    ("response", canonical.TextPart(content="done")),
]


def steering_agent(scripted: RecordedScript) -> Agent[None, str]:
    agent = Agent(scripted.model())

    @agent.tool
    def notify(ctx: RunContext[object]) -> str:
        ctx.enqueue(STEER)  # priority='asap': delivered with the next model request
        return "notified"

    @agent.tool_plain
    def other() -> str:
        return "other done"

    return agent


def count_steering(history: list[canonical.Message]) -> int:
    return sum(part == canonical.TextPart(content=STEER) for _, part in flat_parts(history))


def assert_delivered_once(scripted: RecordedScript, stored: list[ModelMessage]) -> None:
    # Not in the first request, exactly once in every later one (the history grows, the steering is not repeated).
    assert [count_steering(scripted.received_canonical(i)) for i in range(len(scripted.received))] == [0, 1, 1]
    # The model gets it right after the tool result that enqueued it, in the same request: the
    # agent merges the requests before sending on every version.
    second_request = scripted.received_canonical(1)[-1]
    assert [p.part_kind for p in second_request.parts] == ["tool-return", "text"]
    # Stored once, with the same per-part sequence on every version.
    assert flat_parts(to_canonical(stored)) == PART_SEQUENCE  # flat_parts ignores run ids


def test_steering_from_a_tool_reaches_the_model_once() -> None:
    scripted = RecordedScript(
        script=[
            [ToolCallPart("notify", {}, tool_call_id="notify_1")],
            [ToolCallPart("other", {}, tool_call_id="other_1")],
            [TextPart("done")],
        ]
    )
    result = asyncio.run(steering_agent(scripted).run("go"))

    assert result.output == "done"
    assert_delivered_once(scripted, result.all_messages())


def test_streamed_steering_emits_one_enqueued_event() -> None:
    scripted = RecordedScript(
        stream_script=[
            [{0: DeltaToolCall(name="notify", json_args="{}", tool_call_id="notify_1")}],
            [{0: DeltaToolCall(name="other", json_args="{}", tool_call_id="other_1")}],
            ["done"],
        ]
    )
    agent = steering_agent(scripted)

    async def run() -> tuple[list[EnqueuedMessagesEvent], Any]:
        delivered: list[EnqueuedMessagesEvent] = []
        async with agent.run_stream_events("go") as events:
            async for event in events:
                if isinstance(event, EnqueuedMessagesEvent):
                    delivered.append(event)
        return delivered, events.result

    delivered, result = asyncio.run(run())

    assert len(delivered) == 1
    assert [(p.part_kind, getattr(p, "content", None)) for m in delivered[0].messages for p in m.parts] == [
        ("user-prompt", STEER)
    ]
    assert_delivered_once(scripted, result.all_messages())


@pytest.mark.parametrize("priority", ["asap", "when_idle"])
def test_steering_enqueued_on_the_run_is_delivered_once(priority: str) -> None:
    # Steering from outside a tool (AgentRun.enqueue). 'when_idle' forces one more request when the run
    # would otherwise end; 'asap' rides along with the first request.
    scripted = RecordedScript(script=[[TextPart("first")], [TextPart("second")]])
    agent = Agent(scripted.model())

    async def run() -> Any:
        async with agent.iter("go") as agent_run:
            agent_run.enqueue(STEER, priority="asap" if priority == "asap" else "when_idle")
            async for _ in agent_run:
                pass
        return agent_run.result

    result = asyncio.run(run())

    counts = [count_steering(scripted.received_canonical(i)) for i in range(len(scripted.received))]
    if priority == "asap":
        assert (result.output, counts) == ("first", [1])
    else:
        assert (result.output, counts) == ("second", [0, 1])
    assert count_steering(to_canonical(result.all_messages())) == 1
