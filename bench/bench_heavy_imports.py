"""`-j 2` and `-j 4` against `-j 1` on a suite whose agent imports a heavy library (pandas by default); prints ratios.

    python bench/bench_heavy_imports.py [--scenarios 68] [--rounds 3] [--module pandas]
    python bench/bench_heavy_imports.py --tool-ms 40   # each scenario's tool spends 40 ms of CPU
    python bench/bench_heavy_imports.py --suite bench/scaffold_fidelity/suite   # real agents, your own suite

Each scenario names the same user agent (`heavy_agent:agent`), a module that imports `--module` (install it into
the environment first: `uv pip install pandas`) and whose tool uses it. Whole `agentrig run` processes, interleaved
(-j 1, -j 2, -j 4, -j 1, ...): wall time includes start-up and every import, as a user waits for it. Before the
workers' forkserver imported the user's modules, each worker imported pandas again. Target: `-j 2` <= 0.7x of
`-j 1`. Needs two idle cores: figures from a busy machine are ratios of one run, not promises.

`--suite DIR` times a folder of scenarios of your own instead, copied into the scratch folder with the modules
beside them (e.g. `bench/scaffold_fidelity/suite`: 68 scenarios over 25 agents of pydantic-ai-examples, whose
modules import logfire, FastAPI, the AG-UI adapter and three providers' SDKs; `python -m nox -s scaffold_fidelity`
installs what they import). Every scenario must pass.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = """
import time

import {module}
from pydantic_ai import Agent

agent = Agent()


@agent.tool_plain
def describe(values: list[int]) -> str:
    until = time.thread_time() + {tool_ms} / 1000  # the work a real tool does, on the CPU
    while time.thread_time() < until:
        pass
    return str({use})
"""

USES = {
    "pandas": "pandas.Series(values).describe().to_dict()",
    "numpy": "numpy.asarray(values).mean()",
}

SCENARIO = """name: heavy-{index}
agent: heavy_agent:agent
turns:
  - user: Describe {index}.
    model:
      - tool_calls: [{{id: t1, name: describe, args: {{values: [1, 2, {index}]}}}}]
      - text: Described.
    expect:
      output: {{equals: Described.}}
"""


def write_suite(directory: Path, count: int, module: str, tool_ms: float = 0) -> None:
    directory.mkdir(parents=True)
    use = USES.get(module, f"{module}.__name__")
    agent = AGENT.format(module=module, use=use, tool_ms=tool_ms)
    (directory / "heavy_agent.py").write_text(agent, encoding="utf-8")
    for index in range(count):
        (directory / f"heavy_{index:03}.yaml").write_text(SCENARIO.format(index=index), encoding="utf-8")


def timed_run(suite: Path, out: Path, jobs: int) -> float:
    # Bytecode cached (in the scratch folder), as on a user's machine: an environment with PYTHONDONTWRITEBYTECODE
    # compiles every module in every process, the forkserver's included, and measures the compiler.
    env = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "PYTHONPYCACHEPREFIX": str(suite.parent / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [sys.executable, "-m", "agentrig", "run", str(suite), "--out", str(out), "-q", "-j", str(jobs)]
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=suite.parent, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"-j {jobs} failed ({completed.returncode}):\n{completed.stdout}\n{completed.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=68)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--module", default="pandas", help="the heavy module the agent imports")
    parser.add_argument("--suite", type=Path, help="time this folder of scenarios instead of the generated one")
    parser.add_argument(
        "--tool-ms", type=float, default=0, help="CPU time each scenario's tool spends, as a real tool's work would"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentrig-bench-heavy-") as scratch:
        suite = Path(scratch) / "suite"
        if args.suite is not None:
            shutil.copytree(args.suite, suite, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            write_suite(suite, args.scenarios, args.module, args.tool_ms)
        timed_run(suite, Path(scratch) / "warm", 1)  # files cached, bytecode compiled
        times: dict[int, list[float]] = {1: [], 2: [], 4: []}
        for _ in range(args.rounds):
            for jobs in times:
                times[jobs].append(timed_run(suite, Path(scratch) / f"out-{jobs}", jobs))
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    what = (
        f"the scenarios of {args.suite}"
        if args.suite is not None
        else f"{args.scenarios} scenarios, agent imports {args.module}, tool {args.tool_ms:g} ms of CPU"
    )
    print(
        f"{what}, {args.rounds} rounds (wall time, whole processes); {os.cpu_count()} CPUs, load average after: {load}"
    )
    for jobs, seconds in times.items():
        print(f"  -j {jobs}: median {statistics.median(seconds):.2f}s  ({', '.join(f'{s:.2f}' for s in seconds)})")
    for jobs in (2, 4):
        ratios = [parallel / single for parallel, single in zip(times[jobs], times[1], strict=True)]
        print(
            f"  -j {jobs} / -j 1: {statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
            + ("  (target <= 0.7x)" if jobs == 2 else "")
        )


if __name__ == "__main__":
    main()
