"""Cancellation through the public `CancellationToken`: `RunCancelled` keeps the messages and usage so far,
and the next run closes the unfinished call with `outcome='interrupted'`.

pydantic-ai closes the unfinished calls of a cancelled snapshot only when the snapshot's trailing message still
says `state='interrupted'` (`UserPromptNode`, every pinned version), so the canonical form must carry that
state: a snapshot saved as canonical JSON resumes exactly like the live one. Closing the calls first with
`pydantic_ai_compat.repair_messages` also works and is tested too.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Literal

import pytest
from pydantic_ai import Agent, CancellationToken, RunCancelled
from pydantic_ai.messages import ModelMessage, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from agentrig.runtime.history import canonical
from agentrig.runtime.history.wire import dumps_history, loads_history
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.models.conversion import to_canonical, to_pydantic_ai, usage_from_run
from tests.compatibility.support import RecordedScript, flat_parts

INTERRUPTED = "The tool call was interrupted before a result was produced."

Snapshot = Literal["during-tool", "during-stream"]


def through_canonical_json(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Saved as a runtime saves a snapshot, then loaded for the installed version."""
    return to_pydantic_ai(loads_history(dumps_history(to_canonical(messages))))


def cancelled_during_tool(token: CancellationToken) -> tuple[Agent[None, str], RecordedScript, RunCancelled]:
    """A run whose `slow` tool cancels the token once `fast` has finished, then waits forever.

    Deterministic: no timer decides when the cancellation lands.
    """
    scripted = RecordedScript(
        script=[
            [ToolCallPart("fast", {}, tool_call_id="fast_1"), ToolCallPart("slow", {}, tool_call_id="slow_1")],
            [TextPart("resumed ok")],
        ]
    )
    agent = Agent(scripted.model())
    fast_done = asyncio.Event()

    @agent.tool_plain
    async def fast() -> str:
        fast_done.set()
        return "fast done"

    @agent.tool_plain
    async def slow() -> str:
        await fast_done.wait()
        for _ in range(3):  # let the finished fast call be recorded first
            await asyncio.sleep(0)
        token.cancel()
        await asyncio.Event().wait()  # never set: only cancellation ends this tool
        return "never"

    async def go() -> RunCancelled:
        with pytest.raises(RunCancelled) as caught:
            await agent.run("go", cancellation_token=token)
        return caught.value

    return agent, scripted, asyncio.run(go())


def cancelled_during_stream(token: CancellationToken) -> tuple[Agent[None, str], list[int], RunCancelled]:
    """A streamed response cancelled after its text and a complete tool call, before it ends."""
    requests: list[int] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
        requests.append(len(messages))
        if len(requests) == 1:
            yield "Let me look. "
            yield {1: DeltaToolCall(name="lookup", json_args='{"key": "a"}', tool_call_id="lookup_1")}
            token.cancel()
            await asyncio.Event().wait()
        yield "fine"

    agent = Agent(FunctionModel(stream_function=stream))

    @agent.tool_plain
    def lookup(key: str) -> str:
        return f"value of {key}"

    async def drain() -> None:
        async with agent.run_stream_events("go", cancellation_token=token) as events:
            async for _ in events:
                pass

    async def go() -> RunCancelled:
        with pytest.raises(RunCancelled) as caught:
            await drain()
        return caught.value

    return agent, requests, asyncio.run(go())


async def run_streamed(agent: Agent[None, str], prompt: str, history: list[ModelMessage]) -> list[ModelMessage]:
    async with agent.run_stream_events(prompt, message_history=history) as events:
        async for _ in events:
            pass
    assert events.result is not None
    return events.result.all_messages()


def test_cancelled_run_keeps_messages_and_usage() -> None:
    token = CancellationToken()
    _, scripted, cancelled = cancelled_during_tool(token)

    assert token.cancelled
    assert len(scripted.received) == 1
    history = to_canonical(cancelled.all_messages())
    assert [(kind, part.part_kind) for kind, part in flat_parts(history)] == [
        ("request", "text"),
        ("response", "tool-call"),
        ("response", "tool-call"),
        ("request", "tool-return"),
    ]
    # The finished call is kept, the in-flight one is dropped (it stays open until the next run).
    assert canonical.tool_return_ids(history) == ["fast_1"]
    assert len(cancelled.new_messages()) == 3
    usage = usage_from_run(cancelled)
    assert (usage.requests, usage.input_tokens, usage.output_tokens, usage.tool_calls) == (1, 100, 10, 1)
    assert pydantic_ai_compat.run_usage(cancelled).requests == 1


def test_resume_after_cancellation_interrupts_the_unfinished_call() -> None:
    agent, scripted, cancelled = cancelled_during_tool(CancellationToken())

    result = asyncio.run(agent.run("continue", message_history=cancelled.all_messages()))

    assert result.output == "resumed ok"
    returns = [p for _, p in flat_parts(scripted.received_canonical()) if isinstance(p, canonical.ToolReturnPart)]
    assert [(p.tool_call_id, p.outcome) for p in returns] == [("fast_1", "success"), ("slow_1", "interrupted")]
    assert returns[1].content == INTERRUPTED
    # The synthesized return is stored with the run, before the new prompt.
    stored = to_canonical(result.all_messages())
    stored_returns = [p for _, p in flat_parts(stored) if isinstance(p, canonical.ToolReturnPart)]
    assert [(p.tool_call_id, p.outcome) for p in stored_returns] == [("fast_1", "success"), ("slow_1", "interrupted")]
    assert stored[-2].parts[-1] == canonical.TextPart(content="continue")
    usage = usage_from_run(result)
    assert (usage.requests, usage.input_tokens) == (1, 101)  # only the resumed run's request


def test_cancelled_stream_keeps_partial_response_and_resumes_with_a_new_prompt() -> None:
    agent, requests, cancelled = cancelled_during_stream(CancellationToken())

    snapshot = to_canonical(cancelled.all_messages())
    assert [(kind, part.part_kind) for kind, part in flat_parts(snapshot)] == [
        ("request", "text"),
        ("response", "text"),
        ("response", "tool-call"),
    ]
    assert snapshot[-1].text == "Let me look. "

    stored = to_canonical(asyncio.run(run_streamed(agent, "again", cancelled.all_messages())))

    assert len(requests) == 2
    returns = [p for _, p in flat_parts(stored) if isinstance(p, canonical.ToolReturnPart)]
    assert [(p.tool_call_id, p.outcome) for p in returns] == [("lookup_1", "interrupted")]
    assert stored[-1].text == "fine"


def cancel(snapshot: Snapshot) -> tuple[Agent[None, str], RunCancelled]:
    """A cancelled run of the given kind and its agent."""
    if snapshot == "during-tool":
        agent, _, cancelled = cancelled_during_tool(CancellationToken())
    else:
        agent, _, cancelled = cancelled_during_stream(CancellationToken())
    return agent, cancelled


def continue_after(snapshot: Snapshot, agent: Agent[None, str], history: list[ModelMessage]) -> list[canonical.Message]:
    """The stored history after one more turn (the streamed agent only has a stream function)."""
    if snapshot == "during-stream":
        return to_canonical(asyncio.run(run_streamed(agent, "continue", history)))
    return to_canonical(asyncio.run(agent.run("continue", message_history=history)).all_messages())


@pytest.mark.parametrize("snapshot", ["during-tool", "during-stream"])
def test_repaired_snapshot_resumes_from_canonical_json(snapshot: Snapshot) -> None:
    # The other way to save a snapshot: close its unfinished calls first with the agent's own repair
    # (public from 2.46, private on 2.38; pydantic_ai_compat hides which), then save it canonically.
    agent, cancelled = cancel(snapshot)
    saved = through_canonical_json(pydantic_ai_compat.repair_messages(cancelled.all_messages()))

    stored = continue_after(snapshot, agent, saved)

    interrupted = [
        p.tool_call_id
        for _, p in flat_parts(stored)
        if isinstance(p, canonical.ToolReturnPart) and p.outcome == "interrupted"
    ]
    assert interrupted == (["slow_1"] if snapshot == "during-tool" else ["lookup_1"])
    assert sorted(canonical.tool_call_ids(stored)) == sorted(canonical.tool_return_ids(stored))


@pytest.mark.parametrize("snapshot", ["during-tool", "during-stream"])
def test_raw_snapshot_resumes_from_canonical_json(snapshot: Snapshot) -> None:
    # Without a repair, the canonical form must keep the trailing message's state='interrupted'. Were it lost,
    # 'during-tool' would leave slow_1 open in the stored history (the model still gets a repaired copy) and
    # 'during-stream' would fail with UserError 'Cannot provide a new user prompt when the message history
    # contains unprocessed tool calls' (seen on 2.38 and 2.68 before the canonical form carried the state).
    agent, cancelled = cancel(snapshot)
    saved = through_canonical_json(cancelled.all_messages())
    assert [m.state for m in saved] == [m.state for m in cancelled.all_messages()]
    assert saved[-1].state == "interrupted"

    stored = continue_after(snapshot, agent, saved)

    interrupted = [
        p.tool_call_id
        for _, p in flat_parts(stored)
        if isinstance(p, canonical.ToolReturnPart) and p.outcome == "interrupted"
    ]
    assert interrupted == (["slow_1"] if snapshot == "during-tool" else ["lookup_1"])
    assert sorted(canonical.tool_call_ids(stored)) == sorted(canonical.tool_return_ids(stored))
