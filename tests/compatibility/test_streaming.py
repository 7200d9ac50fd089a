"""Streamed graph traversal through the public `Agent.run_stream_events()`.

The event order, complete tool arguments when the tool runs, and exactly one final result: what a runtime
that turns native events into its own stream relies on.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    AgentStreamEvent,
    FinalResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.models.function import DeltaThinkingPart, DeltaToolCall
from pydantic_ai.run import AgentRunResultEvent

from tests.compatibility.support import RecordedScript

# The arguments arrive in three chunks; none is valid JSON on its own.
ARGUMENT_CHUNKS = ('{"city": "Pa', 'ris", "days"', ": 3}")


def streamed_weather_model() -> RecordedScript:
    return RecordedScript(
        stream_script=[
            [
                {0: DeltaThinkingPart(content="look it up")},
                {1: DeltaToolCall(name="forecast", json_args=ARGUMENT_CHUNKS[0], tool_call_id="call_1")},
                {1: DeltaToolCall(json_args=ARGUMENT_CHUNKS[1])},
                {1: DeltaToolCall(json_args=ARGUMENT_CHUNKS[2])},
            ],
            ["Sunny ", "for 3 days."],
        ]
    )


def describe(event: AgentStreamEvent | AgentRunResultEvent[Any]) -> str:
    """A short, version-independent name for an event: its class, and the part kind for part events."""
    if isinstance(event, PartStartEvent | PartEndEvent):
        return f"{type(event).__name__}:{event.index}:{event.part.part_kind}"
    if isinstance(event, PartDeltaEvent):
        return f"PartDeltaEvent:{event.index}:{event.delta.part_delta_kind}"
    return type(event).__name__


async def collect_events(agent: Agent[None, str]) -> tuple[list[AgentStreamEvent | AgentRunResultEvent[Any]], Any]:
    events: list[AgentStreamEvent | AgentRunResultEvent[Any]] = []
    async with agent.run_stream_events("Weather in Paris?") as stream:
        async for event in stream:
            events.append(event)
    return events, stream.result


def test_stream_order_and_complete_tool_arguments() -> None:
    scripted = streamed_weather_model()
    agent = Agent(scripted.model())
    arguments_seen_by_tool: list[dict[str, object]] = []

    @agent.tool_plain
    def forecast(city: str, days: int) -> str:
        arguments_seen_by_tool.append({"city": city, "days": days})
        return f"sunny in {city} for {days} days"

    events, result = asyncio.run(collect_events(agent))

    # The same order on every pinned version; deltas of one chunk may merge, so compare the
    # sequence with consecutive duplicates collapsed.
    names = [describe(event) for event in events]
    collapsed = [name for index, name in enumerate(names) if index == 0 or names[index - 1] != name]
    assert collapsed == [
        "PartStartEvent:0:thinking",
        "PartEndEvent:0:thinking",
        "PartStartEvent:1:tool-call",
        "PartDeltaEvent:1:tool_call",
        "PartEndEvent:1:tool-call",
        "FunctionToolCallEvent",
        "FunctionToolResultEvent",
        "PartStartEvent:0:text",
        "FinalResultEvent",
        "PartDeltaEvent:0:text",
        "PartEndEvent:0:text",
        "AgentRunResultEvent",
    ]

    # The tool ran once, with the complete arguments, and the call event already carried them whole.
    assert arguments_seen_by_tool == [{"city": "Paris", "days": 3}]
    (call_event,) = [event for event in events if isinstance(event, FunctionToolCallEvent)]
    assert call_event.part.tool_call_id == "call_1"
    assert call_event.part.args_as_dict() == {"city": "Paris", "days": 3}
    (ended_call,) = [e.part for e in events if isinstance(e, PartEndEvent) and isinstance(e.part, ToolCallPart)]
    assert ended_call.args_as_dict() == {"city": "Paris", "days": 3}
    (result_event,) = [event for event in events if isinstance(event, FunctionToolResultEvent)]
    assert result_event.part.tool_call_id == "call_1"
    assert result_event.part.content == "sunny in Paris for 3 days"

    # Exactly one final result, at the very end, and one FinalResultEvent for the text output.
    final_events = [event for event in events if isinstance(event, AgentRunResultEvent)]
    assert len(final_events) == 1
    assert events[-1] is final_events[0]
    assert [e.tool_name for e in events if isinstance(e, FinalResultEvent)] == [None]
    assert final_events[0].result.output == "Sunny for 3 days." == result.output

    # The stored response keeps the thought and the reassembled arguments.
    first_response = result.all_messages()[1]
    assert isinstance(first_response.parts[0], ThinkingPart)
    assert first_response.parts[0].content == "look it up"
    assert isinstance(first_response.parts[1], ToolCallPart)
    assert first_response.parts[1].args_as_dict() == {"city": "Paris", "days": 3}
    assert isinstance(result.all_messages()[-1].parts[0], TextPart)


def test_text_before_a_tool_call_does_not_end_a_streamed_event_run() -> None:
    # run_stream() would end the run at the first text; run_stream_events() must not.
    scripted = RecordedScript(
        stream_script=[
            ["Let me look. ", {1: DeltaToolCall(name="lookup", json_args='{"key": "a"}', tool_call_id="call_1")}],
            ["found it"],
        ]
    )
    agent = Agent(scripted.model())

    @agent.tool_plain
    def lookup(key: str) -> str:
        return f"value of {key}"

    events, result = asyncio.run(collect_events(agent))

    assert result.output == "found it"
    assert len(scripted.received) == 2
    assert sum(isinstance(event, AgentRunResultEvent) for event in events) == 1
    assert [type(e).__name__ for e in events if isinstance(e, FunctionToolCallEvent | FunctionToolResultEvent)] == [
        "FunctionToolCallEvent",
        "FunctionToolResultEvent",
    ]
