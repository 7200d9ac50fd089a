"""The conversation behind the stored-history fixtures: four runs of one agent on a scripted `FunctionModel`.

Pure pydantic-ai (no agentrig import), so `data/generate.py` records what each pinned pydantic-ai version
itself writes. The runs cover every part shape that differs between versions or that a runtime must keep:
thinking, text before tool calls, dict / JSON-string / malformed / empty tool arguments, a tool retry
(`ModelRetry`), a validation retry, an output-validator retry, a cancelled run whose unfinished call is closed
as interrupted, and a host (deferred) call resumed with `DeferredToolResults`. Run ids are fixed so the
canonical forms of the dumps can be compared exactly; every response carries explicit usage.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic_ai import (
    Agent,
    CancellationToken,
    DeferredToolRequests,
    DeferredToolResults,
    ExternalToolset,
    ModelRetry,
    RunCancelled,
    RunContext,
    ToolDefinition,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

CONVERSATION_ID = "fixture-conversation"

SCRIPT: Sequence[Sequence[ModelResponsePart]] = [
    # turn-1: tools, retries and an output retry
    [
        ThinkingPart("check the weather first", signature="sig-1"),
        TextPart("Let me check."),
        ToolCallPart("weather", {"city": "Paris"}, tool_call_id="weather_1"),  # dict arguments
        ToolCallPart("flaky", '{"x": 1}', tool_call_id="flaky_1"),  # JSON string; raises ModelRetry once
        ToolCallPart("weather", '{"city": ', tool_call_id="weather_2"),  # malformed JSON: a validation retry
        ToolCallPart("noop", None, tool_call_id="noop_1"),  # no arguments
    ],
    [ToolCallPart("flaky", {"x": 2}, tool_call_id="flaky_2")],
    [TextPart("bad answer")],  # the output validator asks for a retry
    [TextPart("Paris is sunny.")],
    # turn-2: cancelled while hotel_b runs
    [ToolCallPart("hotel_a", {}, tool_call_id="hotel_1"), ToolCallPart("hotel_b", {}, tool_call_id="hotel_2")],
    # turn-3: a new prompt closes hotel_2 as interrupted; the model asks the host to book
    [ToolCallPart("book", {"hotel": "A"}, tool_call_id="book_1")],
    # turn-4: resumed with the host's result
    [TextPart("Booked hotel A.")],
]


def build_agent(
    script: Sequence[Sequence[ModelResponsePart]] = SCRIPT,
) -> tuple[Agent[None, str | DeferredToolRequests], CancellationToken]:
    """The fixture agent and the token its `hotel_b` tool cancels."""
    token = CancellationToken()
    requests = 0

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal requests
        step = requests
        requests += 1
        assert step < len(script), f"the model was asked {step + 1} times; the script has {len(script)}"
        return ModelResponse(
            parts=list(script[step]), usage=RequestUsage(input_tokens=100 + step, output_tokens=10 + step)
        )

    host_tools = ExternalToolset(
        [
            ToolDefinition(
                name="book", parameters_json_schema={"type": "object", "properties": {"hotel": {"type": "string"}}}
            )
        ]
    )
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(respond), output_type=[str, DeferredToolRequests], toolsets=[host_tools], instructions="Be terse."
    )
    hotel_a_done = asyncio.Event()

    @agent.tool_plain
    def weather(city: str) -> str:
        return f"sunny in {city}"

    @agent.tool(retries=2)
    def flaky(ctx: RunContext[object], x: int) -> str:
        if ctx.retry == 0:
            raise ModelRetry("try again with x=2")
        return f"ok {x}"

    @agent.tool_plain
    def noop() -> str:
        return "nothing to do"

    @agent.tool_plain
    async def hotel_a() -> str:
        hotel_a_done.set()
        return "hotel A: free"

    @agent.tool_plain
    async def hotel_b() -> str:
        await hotel_a_done.wait()
        for _ in range(3):  # let hotel_a's result be recorded first
            await asyncio.sleep(0)
        token.cancel()
        await asyncio.Event().wait()  # only cancellation ends this tool
        return "never"

    @agent.output_validator
    def not_bad(output: str | DeferredToolRequests) -> str | DeferredToolRequests:
        if output == "bad answer":
            raise ModelRetry("not good enough")
        return output

    return agent, token


async def run_conversation() -> list[ModelMessage]:
    """Run the four turns and return the final history."""
    agent, token = build_agent()
    first = await agent.run("Weather in Paris?", run_id="turn-1", conversation_id=CONVERSATION_ID)
    assert first.output == "Paris is sunny."
    try:
        await agent.run(
            "Check both hotels.",
            message_history=first.all_messages(),
            cancellation_token=token,
            run_id="turn-2",
            conversation_id=CONVERSATION_ID,
        )
    except RunCancelled as cancelled:
        snapshot = cancelled.all_messages()
    else:
        raise AssertionError("turn-2 should have been cancelled")
    third = await agent.run(
        "Just book hotel A.", message_history=snapshot, run_id="turn-3", conversation_id=CONVERSATION_ID
    )
    assert isinstance(third.output, DeferredToolRequests)
    assert [call.tool_call_id for call in third.output.calls] == ["book_1"]
    fourth = await agent.run(
        message_history=third.all_messages(),
        deferred_tool_results=DeferredToolResults(calls={"book_1": "booked A"}),
        run_id="turn-4",
        conversation_id=CONVERSATION_ID,
    )
    assert fourth.output == "Booked hotel A."
    return fourth.all_messages()
