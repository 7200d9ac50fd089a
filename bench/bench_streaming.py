"""Benchmark (not a test): what streaming and the event log cost.

    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_streaming.py

Runs the scenarios of scenarios/ (but those that sleep on purpose: delays, timeouts) in one event loop (no
`asyncio.run` start-up inside any timing), alternating plain and streamed rounds so both see the same machine
load, and prints the median milliseconds per round and the ratios:

1. streamed / plain: the whole suite through `PydanticAIStreamedEngine` vs `PydanticAIEngine` (target <= 1.3);
2. events.jsonl / plain: writing every scenario's event log (serialize, redact, write) vs running the suite plain.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")

from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import ScenarioExecution, execute_scenario
from agentrig.runtime.history.events import EVENTS_FILE, dumps_events
from agentrig.scenarios.loader import LoadedScenario, load_paths

ROUNDS = 7
"""Each figure is the median of this many rounds."""
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


async def suite(scenarios: list[LoadedScenario], cache: AgentCache) -> tuple[float, list[ScenarioExecution]]:
    started = time.perf_counter()
    executions = [await execute_scenario(loaded, cache=cache) for loaded in scenarios]
    return time.perf_counter() - started, executions


def write_logs(executions: list[ScenarioExecution], root: Path) -> float:
    started = time.perf_counter()
    for index, execution in enumerate(executions):
        # As the run's folder writes it (API keys redacted), without the manifest: this times the events alone.
        folder = root / str(index)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / EVENTS_FILE).write_bytes(dumps_events(execution.events, redacted=True))
    return time.perf_counter() - started


def waits(loaded: LoadedScenario) -> bool:
    """The scenario sleeps on purpose (a step or tool `delay`, a timeout): its time is not the engine's."""
    scenario = loaded.scenario
    steps = [step for turn in scenario.turns for step in turn.model]
    results = [result for tool in scenario.tools.values() for result in tool.results]
    return scenario.settings.timeout is not None or any(s.delay for s in steps) or any(r.delay for r in results)


async def main() -> None:
    loaded = [s for s in load_paths([SCENARIOS]) if not waits(s)]
    plain_scenarios = [replace(s, scenario=s.scenario.model_copy(update={"stream": False})) for s in loaded]
    streamed_scenarios = [replace(s, scenario=s.scenario.model_copy(update={"stream": True})) for s in loaded]
    cache = AgentCache()
    await suite(plain_scenarios, cache)  # warm up: imports, agents, pydantic schemas
    await suite(streamed_scenarios, cache)
    plain: list[float] = []
    streamed: list[float] = []
    writing: list[float] = []
    events = 0
    with tempfile.TemporaryDirectory() as directory:
        for round_ in range(ROUNDS):
            seconds, executions = await suite(plain_scenarios, cache)
            plain.append(seconds)
            seconds, streamed_executions = await suite(streamed_scenarios, cache)
            streamed.append(seconds)
            writing.append(write_logs(streamed_executions, Path(directory) / str(round_)))
            events = sum(len(e.events) for e in streamed_executions)
            del executions
    plain_ms, streamed_ms, writing_ms = (statistics.median(v) * 1000 for v in (plain, streamed, writing))
    print(f"{len(loaded)} scenarios (those that sleep on purpose left out), median of {ROUNDS} rounds")
    print(f"plain suite        {plain_ms:8.1f} ms")
    print(f"streamed suite     {streamed_ms:8.1f} ms   streamed/plain = {streamed_ms / plain_ms:.2f} (target <= 1.3)")
    print(f"write events.jsonl {writing_ms:8.1f} ms   ({events} events)   events/plain = {writing_ms / plain_ms:.3f}")


if __name__ == "__main__":
    asyncio.run(main())
