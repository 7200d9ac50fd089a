"""Benchmark: `agentrig scaffold` on a 10,000-message session, and the offline replay of the scenario it writes.

The session is bench_history's coding-agent history (a prompt, a thought with two tool calls, their results and
a final answer, repeated: 2,500 turns and 5,000 tool calls), written as a pydantic-ai dump with per-response
usage, as a real application stores it. The promise (issue 23): the scenario is written in seconds.

Run:

    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_scaffold.py [--messages 10000] [--repeat 3] [--run]
        [--last-turns N]

Prints the median wall and CPU time of scaffolding (reading the source, planning, writing YAML and the golden),
the files' sizes and, with --run, the time `agentrig run` takes to replay the scenario offline. A script, not
a test: timings never gate the test suite. Replaying every turn of a long session is slow (each scripted request
makes pydantic-ai walk the whole history: 500 messages took 19 s, 1,000 took 139 s on the shared 2-core machine);
`--last-turns N` scripts only the last N turns and resumes from the rest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_history import generate_history

from agentrig.runtime.models.conversion import dump_pydantic_ai_json
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.scaffold import ScaffoldOptions, ScaffoldResult, scaffold


def write_source(directory: Path, message_count: int) -> Path:
    """The generated history as a pydantic-ai dump, each response with its usage."""
    messages: list[dict[str, Any]] = jsonio.loads(dump_pydantic_ai_json(generate_history(message_count)))
    for number, message in enumerate(m for m in messages if m["kind"] == "response"):
        message["usage"] = {"input_tokens": 1000 + number, "output_tokens": 50}
    path = directory / "session.json"
    jsonio.write_atomic(path, jsonio.dumps(messages))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark agentrig scaffold on a long session.")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--run", action="store_true", help="also replay the scenario with the real runner")
    parser.add_argument("--last-turns", type=int, default=None, help="script only the last N turns")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        source = write_source(directory, args.messages)
        walls: list[float] = []
        cpus: list[float] = []
        output = directory / "suite" / "replay.yaml"
        options = ScaffoldOptions(source=source, output=output, force=True, last_turns=args.last_turns)
        results: list[ScaffoldResult] = []
        for _ in range(max(1, args.repeat)):
            wall, cpu = time.perf_counter(), time.process_time()
            results.append(scaffold(options))
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        result = results[-1]
        golden = result.golden_path
        assert golden is not None
        print(f"source: {args.messages} messages, {source.stat().st_size / 1e6:.1f} MB (pydantic-ai dump)")
        print(f"scenario: {result.turns} turns, {result.steps} steps, {output.stat().st_size / 1e6:.1f} MB YAML,")
        print(f"          golden {golden.stat().st_size / 1e6:.1f} MB")
        print(f"scaffold: median wall {statistics.median(walls):.2f} s, CPU {statistics.median(cpus):.2f} s")
        print(f"          (all walls: {', '.join(f'{w:.2f}' for w in walls)} s)")
        if args.run:
            from agentrig.runtime.suite.options import RunOptions
            from agentrig.runtime.suite.runner import run_suite

            wall = time.perf_counter()
            (scenario,) = run_suite(RunOptions(paths=(output,), out_dir=directory / "out")).results
            print(f"replay: {scenario.status} in {time.perf_counter() - wall:.2f} s wall ({result.steps} model steps)")


if __name__ == "__main__":
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    main()
