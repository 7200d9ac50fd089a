"""A batch of parallel tool calls that fail gives one history, whatever the timing: the first failing call in call
order fails the turn, the calls before it keep their results, the calls after it are interrupted
(`pydantic_ai_engine.held_failures`, `cleanup.drop_answers_from_failed_call`). Runs on every pinned version: the
outcome is the same on all of them, so a golden on it holds."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest
from pydantic_ai import Agent

from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import ScenarioExecution, execute_scenario
from agentrig.runtime.history.canonical import ToolReturnPart
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.history.wire import dumps_history
from tests.runtime.engine_helpers import assert_invariants, load_yaml

_jitter = random.Random()  # unseeded on purpose: the tools finish in a different order on every run


def _racing_agent() -> Agent[None, str]:
    agent: Agent[None, str] = Agent(None)

    @agent.tool_plain
    def first() -> str:  # pyright: ignore[reportUnusedFunction]
        """Returns after a moment."""
        time.sleep(_jitter.random() * 0.01)
        return "first done"

    @agent.tool_plain
    def second() -> str:  # pyright: ignore[reportUnusedFunction]
        """Fails after a random moment."""
        time.sleep(_jitter.random() * 0.02)
        raise RuntimeError("second broke")

    @agent.tool_plain
    def third() -> str:  # pyright: ignore[reportUnusedFunction]
        """Fails after a random moment too."""
        time.sleep(_jitter.random() * 0.02)
        raise RuntimeError("third broke")

    @agent.tool_plain
    async def fourth() -> str:  # pyright: ignore[reportUnusedFunction]
        """Returns at once."""
        return "fourth done"

    return agent


RACING_AGENT = _racing_agent()

PARALLEL_FAILURES = """
name: parallel-failures
stream: STREAM
turns:
  - user: Do all four.
    model:
      - tool_calls:
          - {id: c1, name: first}
          - {id: c2, name: second}
          - {id: c3, name: third}
          - {id: c4, name: fourth}
    expect:
      error: {kind: tool_failed}
"""


def _run(tmp_path: Path, stream: bool) -> ScenarioExecution:
    loaded = load_yaml(tmp_path, PARALLEL_FAILURES.replace("STREAM", str(stream).lower()))
    return asyncio.run(execute_scenario(loaded, cache=AgentCache(), agent=RACING_AGENT))


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_a_failing_parallel_batch_gives_the_same_history_on_every_run(tmp_path: Path, stream: bool) -> None:
    histories: set[bytes] = set()
    outcomes: set[tuple[tuple[str, str], ...]] = set()
    for _ in range(30):
        execution = _run(tmp_path, stream)
        assert_invariants(execution)
        histories.add(dumps_history(without_per_run_values(execution.session.messages)))
        outcomes.add(
            tuple(
                (event.data["tool_call_id"], event.data["outcome"])
                for event in execution.events
                if event.type == "tool_execution_end"
            )
        )
    assert len(histories) == 1
    assert len(outcomes) == 1, outcomes

    execution = _run(tmp_path, stream)
    (turn,) = execution.turns
    assert turn.error is not None
    assert turn.error.message == "tool 'second' (call c2) raised RuntimeError: second broke"
    assert turn.usage.tool_calls == 1  # as the history says: one call returned
    returns = [
        (part.tool_call_id, part.outcome)
        for message in execution.session.messages
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    # Call order: the one before the first failure kept its result; the failure; everything after it interrupted
    # (the fourth call returned at once, yet a version keeping it and one dropping it must write the same history).
    assert returns == [("c1", "success"), ("c2", "failed"), ("c3", "interrupted"), ("c4", "interrupted")]
    assert [(s.tool_call_id, s.status) for s in turn.tool_statuses] == [
        ("c1", "completed"),
        ("c2", "failed"),
        ("c3", "cancelled"),
        ("c4", "cancelled"),
    ]
