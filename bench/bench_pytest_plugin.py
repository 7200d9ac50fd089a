"""Benchmark (not a test): the pytest plugin against `agentrig run` on the same generated scenarios.

    python bench/bench_pytest_plugin.py [--scenarios N] [--rounds R]

1. `pytest scenarios/` against `agentrig run scenarios/` (one process each, both writing the same output folders
   and report files with --agentrig-out / --out). Target: at most 1.15x.
2. `pytest -n 2` against `agentrig run -j 2`. Target: at most 1.15x. Needs two idle cores.

Wall time of whole processes (start-up included: that is what a user waits for), interleaved A, B, A, B; each figure
is the median (min-max) of the per-round ratios. The scenarios are bench/bench_runner.py's (one tool call, checks).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_runner import write_scenarios  # noqa: E402  # pyright: ignore[reportMissingImports, reportUnknownVariableType]

TARGET = 1.15


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {completed.returncode}:\n{completed.stdout}\n{completed.stderr}")
    return elapsed


def compare(label: str, plugin: list[str], cli: list[str], cwd: Path, rounds: int) -> float:
    ratios: list[float] = []
    plugin_times: list[float] = []
    cli_times: list[float] = []
    for _ in range(rounds):
        plugin_times.append(timed(plugin, cwd))
        cli_times.append(timed(cli, cwd))
        ratios.append(plugin_times[-1] / cli_times[-1])
    median = statistics.median(ratios)
    verdict = "ok" if median <= TARGET else f"over the {TARGET}x target"
    print(
        f"{label}: {median:.2f}x ({min(ratios):.2f}-{max(ratios):.2f}); pytest {statistics.median(plugin_times):.2f} s, "
        f"agentrig run {statistics.median(cli_times):.2f} s  [{verdict}]"
    )
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    python = sys.executable
    with tempfile.TemporaryDirectory() as temporary:
        project = Path(temporary)
        (project / "scenarios").mkdir()
        write_scenarios(project / "scenarios", args.scenarios)
        # A project of its own: no ini of this repository (its addopts, its testpaths) in the way.
        (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        pytest_run = [python, "-m", "pytest", "scenarios", "-q", "-p", "no:cacheprovider", "--agentrig-out"]
        agentrig_run = [python, "-m", "agentrig", "run", "scenarios", "-q", "--out"]
        print(f"{args.scenarios} scripted scenarios, {args.rounds} interleaved rounds, {os.cpu_count()} CPUs")
        compare("pytest scenarios/ vs agentrig run", [*pytest_run, "out-p"], [*agentrig_run, "out-r"], project, args.rounds)
        compare(
            "pytest -n 2 vs agentrig run -j 2",
            [*pytest_run, "out-p2", "-n", "2"],
            [*agentrig_run, "out-r2", "-j", "2"],
            project,
            args.rounds,
        )


if __name__ == "__main__":
    main()
