"""Benchmarks of the suite runner; prints ratios (run: `python bench/bench_runner.py [--scenarios N]`).

1. Harness overhead: what `agentrig run` does in process (`run_suite`, jobs=1: read and validate the YAML files,
   build each scenario's agent, orchestrate, check, write the output files) against a bare `Agent.run` loop on
   `FunctionModel` with the same scripts, each scenario with its own tool (so no agent is shared), interleaved.
   Measured twice: without output files (the harness itself) and with them (what `agentrig run` does).
2. Parallel speed-up: N generated scenarios (default 200) with `-j 2` against `-j 1`, wall time of whole
   `agentrig run` processes, interleaved; once as N files, once as one file holding N scenarios (which must be
   parsed once per run, not once per scenario). Target: <= 0.7x. Needs two idle cores.

Every figure is a ratio of interleaved runs (A, B, A, B, ...): median (min-max) of the per-round ratios.
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
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")  # before pydantic-ai is imported

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from agentrig.runtime.suite.runner import RunOptions, run_suite

SCENARIO = """name: bench-{index}
tags: [bench]
system_prompt: You are terse.
tools:
  bash_{index}:
    description: Run a shell command.
    parameters: {{type: object, properties: {{command: {{type: string}}}}, required: [command]}}
    results:
      - return: "a.txt"
turns:
  - user: List the files ({index}).
    model:
      - tool_calls: [{{id: tc_1, name: bash_{index}, args: {{command: ls}}}}]
        usage: {{input_tokens: 120, output_tokens: 14}}
      - text: One file.
        usage: {{input_tokens: 160, output_tokens: 5}}
    expect:
      output: {{equals: One file.}}
      tool_calls: {{sequence: [{{name: bash_{index}, args: {{command: ls}}}}]}}
expect:
  usage: {{requests: 2, input_tokens: 280}}
"""


def write_scenarios(directory: Path, count: int) -> None:
    for index in range(count):
        (directory / f"bench_{index:04d}.yaml").write_text(SCENARIO.format(index=index), encoding="utf-8")


def write_one_file(path: Path, count: int) -> None:
    """`count` scenarios as one YAML list in one file."""
    items = ["- " + SCENARIO.format(index=index).replace("\n", "\n  ").rstrip() for index in range(count)]
    path.write_text("\n".join(items) + "\n", encoding="utf-8")


def bare_loop(count: int) -> None:
    """The same scripts through pydantic-ai directly: an agent per scenario (each has its own tool), a fresh
    scripted FunctionModel per run."""

    def scenario_agent(index: int) -> Agent[None, str]:
        agent = Agent(None, instructions="You are terse.")

        def bash(command: str) -> str:
            """Run a shell command."""
            return "a.txt"

        agent.tool_plain(name=f"bash_{index}")(bash)
        return agent

    def scripted(index: int) -> FunctionModel:
        def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            if sum(m.kind == "response" for m in messages) == 0:
                call = ToolCallPart(f"bash_{index}", {"command": "ls"}, tool_call_id="tc_1")
                return ModelResponse(parts=[call], usage=RequestUsage(input_tokens=120, output_tokens=14))
            return ModelResponse(parts=[TextPart("One file.")], usage=RequestUsage(input_tokens=160, output_tokens=5))

        return FunctionModel(script)

    for index in range(count):
        result = asyncio.run(scenario_agent(index).run(f"List the files ({index}).", model=scripted(index)))
        assert result.output == "One file."


def interleaved(actions: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Wall times of `rounds` rounds, each running every action once in order, after one warm-up round."""
    for action in actions.values():
        action()
    samples: dict[str, list[float]] = {label: [] for label in actions}
    for _ in range(rounds):
        for label, action in actions.items():
            started = time.perf_counter()
            action()
            samples[label].append(time.perf_counter() - started)
    return samples


def ratio(numerators: Sequence[float], denominators: Sequence[float]) -> str:
    ratios = [a / b for a, b in zip(numerators, denominators, strict=True)]
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmarks of the suite runner.")
    parser.add_argument("--scenarios", type=int, default=200, help="generated scenarios for the -j comparison")
    parser.add_argument("--overhead-scenarios", type=int, default=40, help="scenarios per overhead measurement")
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        small, large, single = root / "small", root / "large", root / "single"
        for directory in (small, large, single):
            directory.mkdir()
        write_scenarios(small, arguments.overhead_scenarios)
        write_scenarios(large, arguments.scenarios)
        write_one_file(single / "all.yaml", arguments.scenarios)

        def harness(out: Path | None) -> Callable[[], object]:
            def run() -> object:
                suite = run_suite(RunOptions(paths=(small,), out_dir=out))
                assert suite.exit_code == 0, suite.counts
                return suite

            return run

        n = arguments.overhead_scenarios
        samples = interleaved(
            {
                "bare": lambda: bare_loop(n),
                "no outputs": harness(None),
                "outputs": harness(root / "out-small"),
            },
            arguments.rounds,
        )
        bare = samples["bare"]
        print(f"1. harness overhead ({n} scenarios, {arguments.rounds} interleaved rounds):")
        print(f"   bare Agent.run loop           {statistics.median(bare) / n * 1000:6.1f} ms/scenario")
        print(f"   run_suite, no output files    ratio {ratio(samples['no outputs'], bare)}")
        print(f"   run_suite, with output files  ratio {ratio(samples['outputs'], bare)}")

        # Bytecode cached in a private directory, as an installed package has it: with PYTHONDONTWRITEBYTECODE
        # and no .pyc in the venv, every process (the -j 2 forkserver too) would compile pydantic-ai from source.
        environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "PYTHONPYCACHEPREFIX": str(root / "pycache")}
        environment.pop("PYTHONDONTWRITEBYTECODE", None)

        def agentrig_run(path: Path, jobs: int) -> Callable[[], object]:
            # What a user waits for: a fresh `agentrig run` process, pydantic-ai import and worker start included.
            command = [sys.executable, "-m", "agentrig", "run", str(path), "-j", str(jobs), "-q"]
            command += ["--out", str(root / f"out-{path.name}-j{jobs}")]

            def run() -> object:
                return subprocess.run(command, check=True, capture_output=True, env=environment)

            return run

        processes = interleaved(
            {
                "files -j 1": agentrig_run(large, 1),
                "files -j 2": agentrig_run(large, 2),
                "one file -j 1": agentrig_run(single, 1),
                "one file -j 2": agentrig_run(single, 2),
            },
            arguments.rounds,
        )
        count = arguments.scenarios
        print(f"2. parallel workers, `agentrig run` wall time ({count} scenarios, {os.cpu_count()} CPUs):")
        for label, times in processes.items():
            print(f"   {label:<14} {statistics.median(times):7.3f} s")
        print(f"   {count} files:       -j 2 / -j 1 {ratio(processes['files -j 2'], processes['files -j 1'])}")
        print(f"   one file:        -j 2 / -j 1 {ratio(processes['one file -j 2'], processes['one file -j 1'])}")
        print("   (target <= 0.7x)")
        if hasattr(os, "getloadavg"):
            print(f"   load average at the end: {os.getloadavg()[0]:.1f} (the ratio needs idle cores)")


if __name__ == "__main__":
    main()
