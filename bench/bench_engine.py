"""What the orchestrator costs on top of a bare pydantic-ai run, per turn.

    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_engine.py

Runs the same two-request tool turn three ways and prints milliseconds per turn and ratios (no assertions:
timings belong here, not in tests):

- bare: `Agent.run` with a `FunctionModel` (the floor);
- orchestrated: `RequestOrchestrator.run` (history preparation, node-by-node registry, conversion to and
  from the canonical history, finalize) with the same agent and model, growing one session;
- scenario: `execute_scenario` of a 10-turn YAML scenario, per turn (adds the scripted model and YAML tools).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from agentrig.runtime.engine.orchestrator import RequestOrchestrator
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache, AgentHandle
from agentrig.runtime.engine.pydantic_ai_engine.plain import PydanticAIEngine
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import execute_scenario
from agentrig.runtime.history.sessions import new_session
from agentrig.scenarios.loader import load_scenario_file

TURNS = 10
REPEAT = 5


def _answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1]
    if any(p.part_kind == "user-prompt" for p in last.parts):
        return ModelResponse(parts=[ToolCallPart("lookup", {"key": "a"})], usage=RequestUsage(input_tokens=10))
    return ModelResponse(parts=[TextPart("found")], usage=RequestUsage(input_tokens=12))


def _agent() -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(_answer, model_name="bench"))

    @agent.tool_plain
    def lookup(key: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return f"value of {key}"

    return agent


async def _bare() -> None:
    agent = _agent()
    history: list[ModelMessage] = []
    for turn in range(TURNS):
        result = await agent.run(f"question {turn}", message_history=history)
        history = result.all_messages()


async def _orchestrated() -> None:
    agent = _agent()
    handle = AgentHandle(key="bench", build=lambda: agent, label="bench", cache=AgentCache())
    orchestrator = RequestOrchestrator(PydanticAIEngine(handle), new_session())
    for turn in range(TURNS):
        await orchestrator.run(f"question {turn}")


def _scenario_file(directory: Path) -> Path:
    turns = "".join(
        f"  - user: question {turn}\n"
        "    model:\n"
        f"      - tool_calls: [{{id: t{turn}, name: lookup, args: {{key: a}}}}]\n"
        "      - text: found\n"
        for turn in range(TURNS)
    )
    path = directory / "bench.yaml"
    path.write_text(
        f"name: bench\ntools:\n  lookup: {{results: [{{return: value}}]}}\nturns:\n{turns}", encoding="utf-8"
    )
    return path


def _ms_per_turn(run: Any) -> float:
    best = float("inf")
    for _ in range(REPEAT):
        started = time.perf_counter()
        asyncio.run(run())
        best = min(best, time.perf_counter() - started)
    return best / TURNS * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        (loaded,) = load_scenario_file(_scenario_file(Path(directory)))

        async def scenario() -> None:
            await execute_scenario(loaded, cache=AgentCache())

        bare = _ms_per_turn(_bare)
        orchestrated = _ms_per_turn(_orchestrated)
        scripted = _ms_per_turn(scenario)
    print(f"{bare:8.2f} ms/turn  bare Agent.run")
    print(f"{orchestrated:8.2f} ms/turn  RequestOrchestrator.run")
    print(f"{scripted:8.2f} ms/turn  execute_scenario (scripted model, YAML tools)")
    print(f"ratio orchestrated / bare: {orchestrated / bare:.2f}")
    print(f"ratio scenario / bare: {scripted / bare:.2f}")


if __name__ == "__main__":
    main()
