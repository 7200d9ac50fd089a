"""agentrig against its peers: the same generated cases run as whole processes, interleaved, medians.

    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_peers.py [--cases 500] [--rounds 5]

Each case is a tool round trip (a tool call, its return, a final text; two model requests with usage), checked
for its output, its tool call and its usage. It is written three ways:

- agentrig: one YAML scenario file per case, `agentrig run DIR --out OUT` (output files written, as always), once
  into the output of its previous round (a developer running the suite again) and once into a new directory
  (a CI job);
- pytest: one test module, one parametrized test per case, `Agent.run_sync` with a `FunctionModel` per case;
- pydantic-evals: a `Dataset` of `Case`s with `EqualsExpected`, evaluated on the same agent, only when
  pydantic-evals is installed at the same version as pydantic-ai (otherwise the column says why it is missing).

Every round runs each command once, in the same order (A, B, C, A, B, C, ...), so a busy machine slows all of
them alike; ratios are computed per round and reported as median (min-max). Timings include interpreter start,
imports and collection: what a user waits for. CPU time (user + system of the process and its workers) is
printed too: on a machine shared with other jobs it is the steadier figure. A script, not a test.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SCENARIO = """name: case-{index}
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
      - tool_calls: [{{id: tc_1, name: bash, args: {{command: ls {index}}}}}]
        usage: {{input_tokens: 120, output_tokens: 14}}
      - text: One file ({index}).
        usage: {{input_tokens: 160, output_tokens: 5}}
    expect:
      output: {{equals: One file ({index}).}}
      tool_calls: {{sequence: [{{name: bash, args: {{command: ls {index}}}}}]}}
expect:
  usage: {{requests: 2, input_tokens: 280}}
"""

AGENT_MODULE = '''"""The agent and scripted model the pytest and pydantic-evals cases share."""

import inspect

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

agent = Agent(None, instructions="You are terse.")


@agent.tool_plain
def bash(command: str) -> str:
    """Run a shell command."""
    return "a.txt"


def scripted(index: int) -> FunctionModel:
    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if sum(m.kind == "response" for m in messages) == 0:
            call = ToolCallPart("bash", {"command": f"ls {index}"}, tool_call_id="tc_1")
            return ModelResponse(parts=[call], usage=RequestUsage(input_tokens=120, output_tokens=14))
        text = TextPart(f"One file ({index}).")
        return ModelResponse(parts=[text], usage=RequestUsage(input_tokens=160, output_tokens=5))

    return FunctionModel(script)


def run_usage(result):
    """The run's usage as a user of the installed version reads it: a property since pydantic-ai 2.6x (calling it
    warns, and a warning per test would slow pytest down), a method before."""
    if isinstance(inspect.getattr_static(type(result), "usage"), property):
        return result.usage
    return result.usage()


def tool_calls(messages: list[ModelMessage]) -> list[tuple[str, object]]:
    responses = [m for m in messages if m.kind == "response"]
    return [(p.tool_name, p.args) for m in responses for p in m.parts if p.part_kind == "tool-call"]
'''

PYTEST_MODULE = """import pytest

from peer_agent import agent, run_usage, scripted, tool_calls


@pytest.mark.parametrize("index", range({cases}))
def test_case(index: int) -> None:
    result = agent.run_sync(f"List the files ({{index}}).", model=scripted(index))
    assert result.output == f"One file ({{index}})."
    assert tool_calls(result.all_messages()) == [("bash", {{"command": f"ls {{index}}"}})]
    usage = run_usage(result)
    assert usage.requests == 2
    assert usage.input_tokens == 280
"""

EVALS_SCRIPT = """import sys

from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EqualsExpected

from peer_agent import agent, scripted

CASES = {cases}


async def task(index: int) -> str:
    result = await agent.run(f"List the files ({{index}}).", model=scripted(index))
    return result.output


dataset = Dataset(
    name="peers",
    cases=[Case(name=f"case-{{i}}", inputs=i, expected_output=f"One file ({{i}}).") for i in range(CASES)],
    evaluators=[EqualsExpected()],
)
report = dataset.evaluate_sync(task, max_concurrency=1, progress=False)
failed = [case.name for case in report.cases if not all(result.value for result in case.assertions.values())]
sys.exit(1 if failed or report.failures else 0)
"""


UNCOUNTED_CPU = frozenset({"agentrig run -j 2"})
"""Commands whose CPU time misses work: `-j` workers are children of a forkserver nobody waits for."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Command:
    label: str
    argv: Sequence[str]
    cwd: Path
    fresh: Path | None = None
    """Each run gets `--out` a new directory under this one, as a CI job's checkout has no earlier output. New
    rather than deleted before the run: deleting thousands of files right before would bill the file system's
    clean-up (ext4 discards freed blocks) to the run that follows."""


def write_cases(root: Path, cases: int) -> None:
    scenarios = root / "scenarios"
    scenarios.mkdir()
    for index in range(cases):
        (scenarios / f"case_{index:04d}.yaml").write_text(SCENARIO.format(index=index), encoding="utf-8")
    peers = root / "peers"
    peers.mkdir()
    (peers / "peer_agent.py").write_text(AGENT_MODULE, encoding="utf-8")
    (peers / "test_peers.py").write_text(PYTEST_MODULE.format(cases=cases), encoding="utf-8")
    (peers / "evals_peers.py").write_text(EVALS_SCRIPT.format(cases=cases), encoding="utf-8")
    # An ini file of its own: the bench must not pick up the project's pytest configuration.
    (peers / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")


def evals_unavailable() -> str | None:
    """Why the pydantic-evals column is missing, or None when it can run."""
    try:
        evals = importlib.metadata.version("pydantic-evals")
    except importlib.metadata.PackageNotFoundError:
        return "pydantic-evals is not installed"
    agent = importlib.metadata.version("pydantic-ai-slim")
    if evals != agent:
        return f"pydantic-evals {evals} is not at pydantic-ai's version {agent}"
    return None


def run_once(command: Command, environment: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system, the process and every descendant it waited for) of one run."""
    argv = list(command.argv)
    if command.fresh is not None:
        command.fresh.mkdir(exist_ok=True)
        argv += ["--out", str(command.fresh / f"run-{len(list(command.fresh.iterdir()))}")]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(argv, cwd=command.cwd, env=environment, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        output = (completed.stdout + completed.stderr).decode(errors="replace")[-2000:]
        raise SystemExit(f"{command.label} failed with exit code {completed.returncode}:\n{output}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def ratio_text(numerators: Sequence[float], denominators: Sequence[float]) -> str:
    ratios = [a / b for a, b in zip(numerators, denominators, strict=True)]
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-parallel", action="store_true", help="skip the -j 2 / pytest -n 2 comparison")
    options = parser.parse_args()

    python = sys.executable
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        write_cases(root, options.cases)
        peers = root / "peers"
        # Bytecode cached in a private directory, as an installed package has it (no per-process compile).
        environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "PYTHONPYCACHEPREFIX": str(root / "pycache")}
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
        agentrig = [python, "-m", "agentrig", "run", str(root / "scenarios"), "-q"]
        pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_peers.py"]
        commands = [
            Command(label="agentrig run", argv=[*agentrig, "--out", str(root / "out-1")], cwd=root),
            Command(label="agentrig run, new --out", argv=agentrig, cwd=root, fresh=root / "out-new"),
            Command(label="pytest", argv=pytest, cwd=peers),
        ]
        skipped_evals = evals_unavailable()
        if skipped_evals is None:
            commands.append(Command(label="pydantic-evals", argv=[python, "evals_peers.py"], cwd=peers))
        parallel = not options.no_parallel
        try:
            importlib.metadata.version("pytest-xdist")
        except importlib.metadata.PackageNotFoundError:
            parallel = False
            print("no pytest-xdist: the -j 2 / pytest -n 2 comparison is skipped")
        if parallel:
            commands.append(
                Command(label="agentrig run -j 2", argv=[*agentrig, "-j", "2", "--out", str(root / "out-2")], cwd=root)
            )
            commands.append(Command(label="pytest -n 2", argv=[*pytest, "-n", "2"], cwd=peers))

        for command in commands:  # warm-up: bytecode caches, page cache
            run_once(command, environment)
        samples: dict[str, list[float]] = {command.label: [] for command in commands}
        cpu: dict[str, list[float]] = {command.label: [] for command in commands}
        for _ in range(options.rounds):
            for command in commands:
                wall, used = run_once(command, environment)
                samples[command.label].append(wall)
                cpu[command.label].append(used)

    n = options.cases
    print(f"{n} cases, {options.rounds} interleaved rounds, {os.cpu_count()} CPUs, whole processes")
    print(f"{'command':<26}{'median s':>10}{'min-max s':>16}{'ms/case':>10}{'CPU s':>8}{'CPU ms/case':>13}")
    for label, times in samples.items():
        median, used = statistics.median(times), statistics.median(cpu[label])
        spread = f"{min(times):.2f}-{max(times):.2f}"
        print(f"{label:<26}{median:>10.2f}{spread:>16}{median / n * 1000:>10.1f}{used:>8.2f}{used / n * 1000:>13.1f}")
    print("ratios, median of per-round ratios (min-max); target <= 1.00x:")
    pairs = [
        ("agentrig run / pytest", "agentrig run", "pytest"),
        ("agentrig run, new --out / pytest", "agentrig run, new --out", "pytest"),
    ]
    if skipped_evals is None:
        pairs.append(("agentrig run / pydantic-evals", "agentrig run", "pydantic-evals"))
    if parallel:
        pairs.append(("agentrig run -j 2 / pytest -n 2", "agentrig run -j 2", "pytest -n 2"))
    for title, ours, theirs in pairs:
        wall_ratio, cpu_ratio = ratio_text(samples[ours], samples[theirs]), ratio_text(cpu[ours], cpu[theirs])
        if ours in UNCOUNTED_CPU:
            cpu_ratio = "n/a (its forkserver's workers are not counted)"
        print(f"  {title:<40} wall {wall_ratio}   CPU {cpu_ratio}")
    if skipped_evals is not None:
        print(f"  agentrig run / pydantic-evals            skipped: {skipped_evals}")
    if hasattr(os, "getloadavg"):
        print(f"load average at the end: {os.getloadavg()[0]:.1f} (other processes slow every column alike)")


if __name__ == "__main__":
    main()
