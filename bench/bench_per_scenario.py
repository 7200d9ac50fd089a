"""What one scripted scenario costs under `agentrig run -j 1`, against a bare `Agent.run` loop doing the same turns.

    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_per_scenario.py [--scenarios N] [--rounds R]
    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_per_scenario.py --profile [--top K]

N generated scenarios (default 100) of a typical suite's shape: three turns, the first calling the scenario's own
tool, every turn's output and the tool call checked, usage checked. Both sides run in this one process:

- agentrig: `agentrig.cli.main(["run", DIR, "-j", "1", "-q", "--out", OUT])`, the console entry's own function
  (argument parsing, `run_suite`, the run folder with report.html, report.json, junit.xml, summary.md and every
  scenario's folder, exactly as the command writes them), into a new `--out` each round;
- bare: for each scenario, an `Agent` with the same instructions and tool, a `FunctionModel` answering the same
  script, the three turns run with `Agent.run` carrying `message_history`, all in one event loop (as `-j 1` runs
  its scenarios), the outputs asserted. The floor: what a hand-written test of the same script costs.

The two alternate (bare, agentrig, bare, agentrig, ...) after a warm-up round of each, so both see the same load
on a shared machine; each figure is the median of the per-round ratios, with their range, of wall time and of this
process's CPU time (the steadier one on a loaded machine; it leaves out waits, such as an fsync's), and the ratio of
each side's fastest round (another process's load only ever adds time, even CPU time through shared caches and
clock speed, so the fastest round is the one least disturbed). `--profile`
runs both sides under cProfile (CPU time, every thread) and shares the time out by responsibility: engine,
canonical conversion, checks, scenario loading, the scenario folder's files, reports and HTML, fsync, and
pydantic-ai's own (`bench_runner.ratio` is reused; no timings are asserted anywhere).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import itertools
import os
import pstats
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")  # before pydantic-ai is imported

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_runner import ratio
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

import agentrig.cli

SCENARIO = """name: per-scenario-{index}
tags: [bench]
system_prompt: You are a terse file assistant.
tools:
  list_files_{index}:
    description: List the files of a folder.
    parameters: {{type: object, properties: {{folder: {{type: string}}}}, required: [folder]}}
    results:
      - return: "a.txt b.txt"
turns:
  - user: Which files are in docs ({index})?
    model:
      - tool_calls: [{{id: call_1, name: list_files_{index}, args: {{folder: docs}}}}]
        usage: {{input_tokens: 120, output_tokens: 14}}
      - text: a.txt and b.txt.
        usage: {{input_tokens: 160, output_tokens: 6}}
    expect:
      output: {{equals: a.txt and b.txt.}}
      tool_calls: {{sequence: [{{name: list_files_{index}, args: {{folder: docs}}}}]}}
  - user: How many is that?
    model:
      - text: Two.
        usage: {{input_tokens: 180, output_tokens: 2}}
    expect:
      output: {{contains: Two}}
  - user: Thanks.
    model:
      - text: You are welcome.
        usage: {{input_tokens: 190, output_tokens: 4}}
    expect:
      output: {{equals: You are welcome.}}
expect:
  usage: {{requests: 4, input_tokens: 650}}
"""

USERS = ("Which files are in docs ({index})?", "How many is that?", "Thanks.")


def write_scenarios(directory: Path, count: int) -> None:
    for index in range(count):
        (directory / f"scenario_{index:04d}.yaml").write_text(SCENARIO.format(index=index), encoding="utf-8")


def _script(index: int) -> FunctionModel:
    """The scenario's script as a FunctionModel: each call answers the next step, as agentrig's scripted model does."""
    call = ToolCallPart(f"list_files_{index}", {"folder": "docs"}, tool_call_id="call_1")
    steps = [
        ModelResponse(parts=[call], usage=RequestUsage(input_tokens=120, output_tokens=14)),
        ModelResponse(parts=[TextPart("a.txt and b.txt.")], usage=RequestUsage(input_tokens=160, output_tokens=6)),
        ModelResponse(parts=[TextPart("Two.")], usage=RequestUsage(input_tokens=180, output_tokens=2)),
        ModelResponse(parts=[TextPart("You are welcome.")], usage=RequestUsage(input_tokens=190, output_tokens=4)),
    ]
    answers = iter(steps)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return next(answers)

    return FunctionModel(answer, model_name="bench-script")


def _agent(index: int) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(None, instructions="You are a terse file assistant.")

    def list_files(folder: str) -> str:
        """List the files of a folder."""
        return "a.txt b.txt"

    agent.tool_plain(name=f"list_files_{index}")(list_files)
    return agent


async def _bare_suite(count: int) -> None:
    for index in range(count):
        agent, model = _agent(index), _script(index)
        history: list[ModelMessage] = []
        outputs: list[str] = []
        for user in USERS:
            result = await agent.run(user.format(index=index), message_history=history, model=model)
            history = result.all_messages()
            outputs.append(result.output)
        assert outputs == ["a.txt and b.txt.", "Two.", "You are welcome."], outputs


def bare_loop(count: int) -> None:
    asyncio.run(_bare_suite(count))


def agentrig_run(scenarios: Path, out: Path) -> Callable[[], None]:
    """`agentrig run SCENARIOS -j 1 -q --out OUT/runN` in this process, into a new folder each call (as a CI job);
    the folders are left for the temporary directory's cleanup, so no deletion is timed."""
    runs = itertools.count()

    def run() -> None:
        target = out / f"run{next(runs)}"
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            try:
                agentrig.cli.main(["run", str(scenarios), "-j", "1", "-q", "--out", str(target)])
            except SystemExit as exit_:
                raise AssertionError(f"agentrig run exited {exit_.code}: {printed.getvalue()}") from None
        assert (target / "report.html").is_file()

    return run


GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("fsync", ("{built-in method posix.fsync}", "{built-in method posix.fdatasync}")),
    ("reports (report.json, junit, summary, HTML)", ("agentrig/runtime/reports/", "suite/outputs/reports.py")),
    ("scenario folder files", ("suite/outputs/scenario_files.py", "agentrig/runtime/runfolder/")),
    ("checks", ("agentrig/runtime/checks/",)),
    ("canonical conversion", ("runtime/models/conversion.py", "agentrig/runtime/history/", "session_conversion.py")),
    ("scenario loading (YAML)", ("agentrig/scenarios/", "agentrig/input_files.py")),
    ("agent building (YAML agent, tools)", ("agent_loading.py", "yaml_tools.py", "agent_facts.py")),
    ("pydantic-ai (Agent.iter, graph, tools)", ("pydantic_ai/", "pydantic_graph/")),
    ("engine (agentrig's loop around it)", ("agentrig/runtime/engine/", "agentrig/runtime/models/")),
    ("suite runner", ("agentrig/runtime/suite/", "agentrig/cli/")),
    ("event loop (asyncio)", ("asyncio/",)),
    ("garbage collection", ("{built-in method gc.collect}",)),
)
"""Responsibilities, first match wins. A function of none of them (the standard library, pydantic's validators,
json, a builtin) counts for whoever called it: its own time is shared among its callers in proportion to the time
each call took, up the call graph to the first caller that has a responsibility."""


def _group(key: Key) -> str | None:
    file, _line, name = key
    label = f"{file}:{name}" if file != "~" else name
    return next((group for group, needles in GROUPS if any(needle in label for needle in needles)), None)


Key = tuple[str, int, str]
"""A profiled function: file, line, name."""


def _raw(stats: pstats.Stats) -> dict[Key, tuple[int, int, float, float, dict[Key, tuple[int, int, float, float]]]]:
    """pstats' table: calls, primitive calls, own time, cumulative time, and the same per caller."""
    return cast(Any, stats).stats


def _by_responsibility(stats: pstats.Stats) -> dict[str, float]:
    raw = _raw(stats)
    shares: dict[Key, dict[str, float]] = {}

    def share(key: Key, visiting: frozenset[Key]) -> dict[str, float]:
        if key in shares:
            return shares[key]
        group = _group(key)
        result: dict[str, float] = {}
        callers = raw[key][4] if key in raw else {}
        weights = {caller: edge[3] for caller, edge in callers.items() if caller not in visiting and edge[3] > 0}
        if group is not None:
            result = {group: 1.0}
        elif not weights:
            result = {"other (unattributed)": 1.0}
        else:
            total = sum(weights.values())
            for caller, weight in weights.items():
                for upper, fraction in share(caller, visiting | {key}).items():
                    result[upper] = result.get(upper, 0.0) + fraction * weight / total
        if not visiting:  # memoised only when no cycle was cut on the way
            shares[key] = result
        return result

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    totals: dict[str, float] = {}
    for key, entry in raw.items():
        for group, fraction in share(key, frozenset()).items():
            totals[group] = totals.get(group, 0.0) + entry[2] * fraction
    return totals


def _profiled(action: Callable[[], object]) -> pstats.Stats:
    """`action` under cProfile, in every thread it starts too: `-j 1` runs its scenarios on a lane thread
    (suite/sequential.py) and a profiler sees one thread, so each new thread gets its own, merged here. Each
    counts its thread's CPU time: a thread waiting (the main one while the lane runs, the machine's other load)
    counts nothing."""
    profilers = [cProfile.Profile(time.thread_time)]
    original = threading.Thread.run

    def profiled(self: threading.Thread) -> None:
        own = cProfile.Profile(time.thread_time)
        profilers.append(own)
        own.runcall(original, self)

    threading.Thread.run = profiled
    try:
        profilers[0].runcall(action)
    finally:
        threading.Thread.run = original
    return pstats.Stats(*profilers)


def profile(scenarios: Path, out: Path, count: int, top: int) -> None:
    run = agentrig_run(scenarios, out)
    run()  # warm: imports and first-call caches belong to no scenario
    bare_loop(count)
    harness, bare = _profiled(run), _profiled(lambda: bare_loop(count))
    ours, floor = _by_responsibility(harness), _by_responsibility(bare)
    total, floor_total = sum(ours.values()), sum(floor.values())
    print(f"cProfile of {count} scenarios, CPU ms per scenario (its overhead inflates every figure, calls most):")
    print(f"  {'responsibility':<46} {'agentrig':>9} {'bare':>9} {'share':>6}")
    for group in sorted(ours.keys() | floor.keys(), key=lambda name: -ours.get(name, 0.0)):
        mine, theirs = ours.get(group, 0.0), floor.get(group, 0.0)
        print(f"  {group:<46} {mine / count * 1000:9.3f} {theirs / count * 1000:9.3f} {mine / total:6.1%}")
    print(f"  {'total':<46} {total / count * 1000:9.3f} {floor_total / count * 1000:9.3f}")
    print(f"\ntop {top} agentrig functions by cumulative time (a coroutine's counts each resumption), ms per scenario:")
    raw = _raw(harness)
    ours_only = [key for key in raw if "agentrig" in key[0]]
    for key in sorted(ours_only, key=lambda name: -raw[name][3])[:top]:
        calls, cumtime = raw[key][0], raw[key][3]
        short = key[0].split("src/agentrig/")[-1]
        print(f"  {cumtime / count * 1000:8.3f} {calls / count:6.1f} calls  {short}:{key[1]} {key[2]}  [{_group(key)}]")


def alternating(
    actions: dict[str, Callable[[], object]], rounds: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and CPU seconds (this process's, every thread) of `rounds` rounds, each running every action once in
    order, after a warm-up round. On a shared machine the wall time also holds other processes' load; the CPU time
    holds only what the action costs, but not its waits (an fsync's, for one)."""
    for action in actions.values():
        action()
    wall: dict[str, list[float]] = {label: [] for label in actions}
    cpu: dict[str, list[float]] = {label: [] for label in actions}
    for _ in range(rounds):
        for label, action in actions.items():
            started, started_cpu = time.perf_counter(), time.process_time()
            action()
            wall[label].append(time.perf_counter() - started)
            cpu[label].append(time.process_time() - started_cpu)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description="Per-scenario cost of agentrig run -j 1 against a bare loop.")
    parser.add_argument("--scenarios", type=int, default=100, help="generated scenarios per run")
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds after the warm-up")
    parser.add_argument("--profile", action="store_true", help="profile the agentrig side instead of timing it")
    parser.add_argument("--top", type=int, default=30, help="with --profile: how many cumulative entries")
    arguments = parser.parse_args()
    count = arguments.scenarios
    with tempfile.TemporaryDirectory() as temp:
        scenarios, out = Path(temp) / "scenarios", Path(temp) / "out"
        scenarios.mkdir()
        write_scenarios(scenarios, count)
        if arguments.profile:
            profile(scenarios, out, count, arguments.top)
            return
        wall, cpu = alternating(
            {"bare": lambda: bare_loop(count), "agentrig": agentrig_run(scenarios, out)}, arguments.rounds
        )
    print(f"{count} scenarios (3 turns, 4 requests, a tool call), {arguments.rounds} alternating rounds, medians:")
    for label, samples in (("wall", wall), ("CPU", cpu)):
        bare, harness = samples["bare"], samples["agentrig"]
        floor, ours = statistics.median(bare) / count * 1000, statistics.median(harness) / count * 1000
        print(f"  {label:>4}: bare Agent.run loop {floor:7.2f} ms/scenario, agentrig run -j 1 (HTML on) {ours:7.2f}")
        fastest = min(harness) / min(bare)
        print(f"        ratio agentrig / bare {ratio(harness, bare)}; of each side's fastest round {fastest:.2f}x")
    print("  (target <= 1.5x)")
    if hasattr(os, "getloadavg"):
        print(f"  load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
