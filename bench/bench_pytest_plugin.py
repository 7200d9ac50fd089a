"""Benchmark (not a test): the pytest plugin against `agentrig run` on the same generated scenarios.

    python bench/bench_pytest_plugin.py [--scenarios N] [--rounds R]

1. `pytest scenarios/` against `agentrig run scenarios/` (one process each, both writing the same output folders
   and report files with --agentrig-out / --out). Target: at most 1.15x.
2. `pytest -n 2` against `agentrig run -j 2`. Target: at most 1.15x. Needs two idle cores.

`--heavy-module pandas` times bench_heavy_imports.py's suite instead (68 scenarios whose agent imports pandas).
`--suite DIR` times a folder of your own, copied with the modules beside it (e.g. `bench/scaffold_fidelity/suite`:
68 scenarios over 25 real agents of pydantic-ai-examples; `python -m nox -s scaffold_fidelity` installs what their
modules import). Every scenario must pass.

Whole processes, start-up included (that is what a user waits for), interleaved A, B, A, B; each figure is the
median (min-max) of the per-round ratios, of wall time and of CPU time (user + system of the process tree: steadier
on a shared machine). pytest runs with plugin autoloading off and only agentrig's plugin and pytest-xdist loaded:
the other plugins of an environment (hypothesis, logfire, anyio: 2-3 s of start-up here) are the project's own cost,
the same with or without scenarios. `--all-plugins` measures with everything the environment autoloads. The
scenarios are bench/bench_runner.py's (one tool call, checks).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_runner import write_scenarios  # pyright: ignore[reportMissingImports, reportUnknownVariableType]

TARGET = 1.15


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False, env=env)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {completed.returncode}:\n{completed.stdout}\n{completed.stderr}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _figure(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def compare(
    label: str, plugin: list[str], cli: list[str], cwd: Path, rounds: int, plugin_env: dict[str, str], *, cpu_too: bool
) -> None:
    """Print the ratios. CPU only when both sides' processes are all waited for: `agentrig run -j`'s workers are
    children of its forkserver, which is not waited for them, so their CPU time is not counted."""
    wall: list[float] = []
    cpu: list[float] = []
    plugin_wall: list[float] = []
    cli_wall: list[float] = []
    timed(plugin, cwd, plugin_env)  # warm: files cached, bytecode written
    timed(cli, cwd, dict(os.environ))
    for _ in range(rounds):
        plugin_time = timed(plugin, cwd, plugin_env)
        cli_time = timed(cli, cwd, dict(os.environ))
        plugin_wall.append(plugin_time[0])
        cli_wall.append(cli_time[0])
        wall.append(plugin_time[0] / cli_time[0])
        cpu.append(plugin_time[1] / cli_time[1])
    verdict = "ok" if statistics.median(wall) <= TARGET else f"over the {TARGET}x target"
    cpu_figure = f", CPU {_figure(cpu)}" if cpu_too else ""
    print(
        f"{label}: wall {_figure(wall)}{cpu_figure}; pytest {statistics.median(plugin_wall):.2f} s, "
        f"agentrig run {statistics.median(cli_wall):.2f} s  [{verdict}]"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--all-plugins", action="store_true", help="let pytest autoload every installed plugin")
    parser.add_argument(
        "--heavy-module",
        metavar="MODULE",
        help="bench_heavy_imports.py's suite instead: 68 scenarios whose agent imports MODULE (e.g. pandas)",
    )
    parser.add_argument("--suite", type=Path, help="time this folder of scenarios instead of generated ones")
    args = parser.parse_args()
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    python = sys.executable
    with tempfile.TemporaryDirectory() as temporary:
        project = Path(temporary)
        if args.suite is not None:
            shutil.copytree(args.suite, project / "scenarios", ignore=shutil.ignore_patterns("__pycache__"))
        elif args.heavy_module:
            from bench_heavy_imports import write_suite  # pyright: ignore[reportMissingImports, reportUnknownVariableType]

            write_suite(project / "scenarios", 68, args.heavy_module)
            args.scenarios = 68
        else:
            (project / "scenarios").mkdir()
            write_scenarios(project / "scenarios", args.scenarios)
        # A project of its own: no ini of this repository (its addopts, its testpaths) in the way.
        (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        # Bytecode cached (in the scratch folder), as on a user's machine: with PYTHONDONTWRITEBYTECODE every process
        # compiles every module it imports, and pytest -n 2 starts three of them.
        os.environ["PYTHONPYCACHEPREFIX"] = str(project / "pycache")
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        plugin_env = dict(os.environ)
        only_ours: list[str] = []
        if not args.all_plugins:
            plugin_env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
            only_ours = ["-p", "agentrig.pytest_plugin", "-p", "xdist.plugin"]
        pytest_run = [python, "-m", "pytest", *only_ours, "scenarios", "-q", "-p", "no:cacheprovider", "--agentrig-out"]
        agentrig_run = [python, "-m", "agentrig", "run", "scenarios", "-q", "--out"]
        plugins = "every autoloaded plugin" if args.all_plugins else "only agentrig's plugin and pytest-xdist"
        what = f"the scenarios of {args.suite}" if args.suite is not None else f"{args.scenarios} scripted scenarios"
        print(f"{what}, {args.rounds} interleaved rounds, {os.cpu_count()} CPUs, {plugins}")
        single = ([*pytest_run, "out-p"], [*agentrig_run, "out-r"])
        compare("pytest scenarios/ vs agentrig run", *single, project, args.rounds, plugin_env, cpu_too=True)
        parallel = ([*pytest_run, "out-p2", "-n", "2"], [*agentrig_run, "out-r2", "-j", "2"])
        compare("pytest -n 2 vs agentrig run -j 2", *parallel, project, args.rounds, plugin_env, cpu_too=False)
        print(f"load average after: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")


if __name__ == "__main__":
    main()
