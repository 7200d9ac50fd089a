"""Benchmarks of the suite runner; prints ratios (run: `python bench/bench_runner.py [--scenarios N]`).

1. Harness overhead: the in-process runner (`run_suite`, jobs=1: load, orchestrate, check) against a
   bare `Agent.run` loop on `FunctionModel` with the same scripts. Target: <= 1.25x.
   Measured twice: without output files (the harness itself) and with them (what `agentrig run` does).
2. Parallel speed-up: N generated scenarios (default 200) with `-j 2` against `-j 1`, wall time.
   Target: <= 0.65x. Needs two idle cores; on a busy machine the ratio says more about the load.

Each scenario is a tool round trip (two model requests) with explicit usage, like the suite's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")  # before pydantic-ai is imported

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from agentrig.runtime.suite.runner import RunOptions, run_suite
from agentrig.scenarios.loader import load_paths

SCENARIO = """name: bench-{index}
tags: [bench]
system_prompt: You are terse.
tools:
  bash:
    description: Run a shell command.
    parameters: {{type: object, properties: {{command: {{type: string}}}}, required: [command]}}
    results:
      - return: "a.txt"
turns:
  - user: List the files ({index}).
    model:
      - tool_calls: [{{id: tc_1, name: bash, args: {{command: ls}}}}]
        usage: {{input_tokens: 120, output_tokens: 14}}
      - text: One file.
        usage: {{input_tokens: 160, output_tokens: 5}}
    expect:
      output: {{equals: One file.}}
      tool_calls: {{sequence: [{{name: bash, args: {{command: ls}}}}]}}
expect:
  usage: {{requests: 2, input_tokens: 280}}
"""


def write_scenarios(directory: Path, count: int) -> None:
    for index in range(count):
        (directory / f"bench_{index:04d}.yaml").write_text(SCENARIO.format(index=index), encoding="utf-8")


def bare_loop(count: int) -> None:
    """The same scripts through pydantic-ai directly: one agent, a fresh scripted FunctionModel per run."""
    agent = Agent(None, instructions="You are terse.")

    @agent.tool_plain
    def bash(command: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Run a shell command."""
        return "a.txt"

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if sum(m.kind == "response" for m in messages) == 0:
            call = ToolCallPart("bash", {"command": "ls"}, tool_call_id="tc_1")
            return ModelResponse(parts=[call], usage=RequestUsage(input_tokens=120, output_tokens=14))
        return ModelResponse(parts=[TextPart("One file.")], usage=RequestUsage(input_tokens=160, output_tokens=5))

    async def run_all() -> None:
        for index in range(count):
            result = await agent.run(f"List the files ({index}).", model=FunctionModel(script))
            assert result.output == "One file."

    asyncio.run(run_all())


def timed(action: Callable[[], object], repeats: int) -> float:
    """The median wall time of `repeats` runs, after one warm-up run."""
    action()
    samples: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmarks of the suite runner.")
    parser.add_argument("--scenarios", type=int, default=200, help="generated scenarios for the -j comparison")
    parser.add_argument("--overhead-scenarios", type=int, default=40, help="scenarios per overhead measurement")
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        small, large = root / "small", root / "large"
        small.mkdir()
        large.mkdir()
        write_scenarios(small, arguments.overhead_scenarios)
        write_scenarios(large, arguments.scenarios)
        small_loaded = load_paths([small])

        def harness(out: Path | None) -> Callable[[], object]:
            def run() -> object:
                suite = run_suite(RunOptions(paths=(small,), out_dir=out), loaded=small_loaded)
                assert suite.exit_code == 0, suite.counts
                return suite

            return run

        def engine_only() -> None:
            from agentrig.runtime.engine.scenario_execution import execute_scenario

            for item in small_loaded:
                asyncio.run(execute_scenario(item))

        bare = timed(lambda: bare_loop(arguments.overhead_scenarios), arguments.repeats)
        engine = timed(engine_only, arguments.repeats)
        without_outputs = timed(harness(None), arguments.repeats)
        with_outputs = timed(harness(root / "out-small"), arguments.repeats)
        n = arguments.overhead_scenarios
        print(f"1. harness overhead ({n} scenarios, median of {arguments.repeats}):")
        print(f"   bare Agent.run loop          {bare:7.3f} s  ({bare / n * 1000:.1f} ms/scenario)")
        print(
            f"   engine only (execute_scenario) {engine:5.3f} s  ratio {engine / bare:.2f}x (the orchestrator's share)"
        )
        ratio = without_outputs / bare
        print(f"   run_suite, no output files   {without_outputs:7.3f} s  ratio {ratio:.2f}x (target <= 1.25x)")
        print(f"   run_suite, with output files {with_outputs:7.3f} s  ratio {with_outputs / bare:.2f}x")

        # Bytecode cached in a private directory, as an installed package has it: with PYTHONDONTWRITEBYTECODE
        # and no .pyc in the venv, every process (the -j 2 forkserver too) would compile pydantic-ai from source.
        environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "PYTHONPYCACHEPREFIX": str(root / "pycache")}
        environment.pop("PYTHONDONTWRITEBYTECODE", None)

        def parallel(jobs: int) -> Callable[[], object]:
            # What a user waits for: a fresh `agentrig run` process, pydantic-ai import and worker start included.
            command = [sys.executable, "-m", "agentrig", "run", str(large), "-j", str(jobs), "-q"]
            command += ["--out", str(root / f"out-j{jobs}")]

            def run() -> object:
                return subprocess.run(command, check=True, capture_output=True, env=environment)

            return run

        one = timed(parallel(1), 3)
        two = timed(parallel(2), 3)
        print(
            f"2. parallel workers, `agentrig run` wall time ({arguments.scenarios} scenarios, {os.cpu_count()} CPUs):"
        )
        print(f"   -j 1 {one:7.3f} s")
        print(f"   -j 2 {two:7.3f} s  ratio {two / one:.2f}x (target <= 0.65x)")
        if hasattr(os, "getloadavg"):
            print(f"   load average during the run: {os.getloadavg()[0]:.1f} (the ratio needs idle cores)")


if __name__ == "__main__":
    main()
