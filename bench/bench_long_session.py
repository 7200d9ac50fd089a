"""One turn on a long session: `RequestOrchestrator.run` against a bare `Agent.run` with the same history.

    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_long_session.py [--messages 10000] [--rounds 7]

Both sides get the same history (a generated coding-agent session, as in bench_history.py) and answer one new
prompt with a FunctionModel: bare pydantic-ai is handed its messages; the orchestrator holds the session in
canonical form, prepares it (cleanup, pruning), converts what the turn adds, runs the agent and takes back the
authoritative history. "next turn" is a turn of a running session (both sides' sessions grow by each turn);
"first turn" a fresh orchestrator on the loaded session (it converts the whole history once). Interleaved
rounds, CPU time, median (min-max) of per-round ratios. Target: next turn / bare <= 1.2x. A script, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_history import generate_history
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentrig.runtime.engine.orchestrator import RequestOrchestrator
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache, AgentHandle
from agentrig.runtime.engine.pydantic_ai_engine.plain import PydanticAIEngine
from agentrig.runtime.history.sessions import new_session
from agentrig.runtime.models.conversion import to_pydantic_ai


def _answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("done")])


def _agent() -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(_answer, model_name="bench"))

    @agent.tool_plain
    def bash(command: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return "ok"

    @agent.tool_plain
    def read_file(path: str, start: int, end: int) -> str:  # pyright: ignore[reportUnusedFunction]
        return "ok"

    return agent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()

    history = generate_history(options.messages)
    agent = _agent()
    handle = AgentHandle(key="bench", build=lambda: agent, label="bench", cache=AgentCache())
    # One orchestrator for the whole bench: after its first turn it is a session that has been running.
    session = RequestOrchestrator(PydanticAIEngine(handle), new_session(messages=list(history)))
    asyncio.run(session.run("first step"))
    native: list[ModelMessage] = to_pydantic_ai(session.session.messages)

    def bare() -> None:
        nonlocal native
        native = asyncio.run(agent.run("next step", message_history=native)).all_messages()

    def next_turn() -> None:
        asyncio.run(session.run("next step"))

    def first_turn() -> None:
        orchestrator = RequestOrchestrator(PydanticAIEngine(handle), new_session(messages=list(history)))
        asyncio.run(orchestrator.run("first step"))

    actions: dict[str, Callable[[], None]] = {"bare": bare, "next turn": next_turn, "first turn": first_turn}
    samples: dict[str, list[float]] = {label: [] for label in actions}
    for _ in range(options.rounds):
        for label, action in actions.items():
            started = time.process_time()
            action()
            samples[label].append(time.process_time() - started)
    print(f"{options.messages} messages, one turn each, median CPU time of {options.rounds} interleaved rounds")
    for label, times in samples.items():
        print(f"  {label:<12}{statistics.median(times) * 1000:9.1f} ms")
    for label in ("next turn", "first turn"):
        ratios = [o / b for o, b in zip(samples[label], samples["bare"], strict=True)]
        median = statistics.median(ratios)
        print(f"  ratio {label} / bare Agent.run: {median:.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")
    print("  (target <= 1.2x for a running session; a first turn also converts the loaded session once)")


if __name__ == "__main__":
    main()
