"""An application history policy that clears old tool results in the MODEL'S INPUT ONLY.

`ProcessHistory` (and any `before_model_request` hook) cannot do it: core assigns the processed list back
to the run's history (`ctx.state.message_history[:] = messages` in `ModelRequestNode`), so its output is
persisted. The public way that works on every pinned version is a `wrap_model_request` hook,
`capabilities.Hooks(model_request=...)`: it calls the handler with a copy of the request context whose
messages are rewritten, while the run's history keeps the originals. (2.68 adds `prepare_model_request`
with the same per-attempt semantics; 2.38 does not have it, so the runtime uses the wrap hook.)
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, ProcessHistory
from pydantic_ai.messages import ModelMessage, TextPart, ToolCallPart
from pydantic_ai.models.function import DeltaToolCall

from agentrig.runtime.history import canonical
from agentrig.runtime.models.conversion import to_canonical
from tests.compatibility.support import RecordedScript, flat_parts

POLICIES = Path(__file__).resolve().parents[2] / "scenarios" / "compatibility" / "compat_policies.py"


def _shipped_policies() -> ModuleType:
    """The policy module the history-policy scenarios attach (`compat_policies:...`), tested here directly."""
    spec = importlib.util.spec_from_file_location("agentrig_test_compat_policies", POLICIES)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


policies = _shipped_policies()
CLEARED: str = policies.CLEARED


def two_turns(capability: AbstractCapability[Any], *, streamed: bool) -> tuple[RecordedScript, list[ModelMessage]]:
    """Turn 1 calls a tool; turn 2 calls it again. Returns the model and the stored history after turn 2."""
    calls = [
        [ToolCallPart("read", {"name": "a"}, tool_call_id="read_1")],
        [TextPart("a read")],
        [ToolCallPart("read", {"name": "b"}, tool_call_id="read_2")],
        [TextPart("b read")],
    ]
    scripted = RecordedScript(
        script=calls if not streamed else (),
        stream_script=[
            [{0: DeltaToolCall(name="read", json_args='{"name": "a"}', tool_call_id="read_1")}],
            ["a read"],
            [{0: DeltaToolCall(name="read", json_args='{"name": "b"}', tool_call_id="read_2")}],
            ["b read"],
        ]
        if streamed
        else (),
    )
    agent = Agent(scripted.model(), capabilities=[capability])

    @agent.tool_plain
    def read(name: str) -> str:
        return f"contents of {name}"

    async def run(prompt: str, history: list[ModelMessage]) -> list[ModelMessage]:
        if not streamed:
            return (await agent.run(prompt, message_history=history)).all_messages()
        async with agent.run_stream_events(prompt, message_history=history) as events:
            async for _ in events:
                pass
        assert events.result is not None
        return events.result.all_messages()

    first = asyncio.run(run("read a", []))
    second = asyncio.run(run("read b", first))
    return scripted, second


def tool_returns(history: list[canonical.Message]) -> list[tuple[str, object]]:
    return [(p.tool_call_id, p.content) for _, p in flat_parts(history) if isinstance(p, canonical.ToolReturnPart)]


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream_events"])
def test_runtime_clears_old_tool_results_in_model_input_only(streamed: bool) -> None:
    scripted, stored = two_turns(policies.clear_old_tool_results(), streamed=streamed)

    assert len(scripted.received) == 4
    # Turn 2: the model gets turn 1's result cleared, and this turn's result intact.
    assert tool_returns(scripted.received_canonical(2)) == [("read_1", CLEARED)]
    assert tool_returns(scripted.received_canonical(3)) == [("read_1", CLEARED), ("read_2", "contents of b")]
    # Turn 1 was not touched while it ran.
    assert tool_returns(scripted.received_canonical(1)) == [("read_1", "contents of a")]
    # The stored history keeps every original result.
    assert tool_returns(to_canonical(stored)) == [("read_1", "contents of a"), ("read_2", "contents of b")]


def test_process_history_output_is_persisted() -> None:
    # The contrast, asserted so a change upstream is noticed: the same clearing as a ProcessHistory
    # capability changes the stored history as well (every pinned version).
    def clear(ctx: RunContext[Any], messages: list[ModelMessage]) -> list[ModelMessage]:
        return policies.cleared_earlier_runs(messages, ctx.run_id)

    scripted, stored = two_turns(ProcessHistory(clear), streamed=False)

    assert tool_returns(scripted.received_canonical(3)) == [("read_1", CLEARED), ("read_2", "contents of b")]
    assert tool_returns(to_canonical(stored)) == [("read_1", CLEARED), ("read_2", "contents of b")]
