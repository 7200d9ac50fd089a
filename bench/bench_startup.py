"""Benchmark: start-up time of the fast commands against importing pydantic-ai.

`agentrig --help`, `agentrig validate` and `agentrig schema` must never import pydantic-ai, so each
should take a fraction of `python -c "import pydantic_ai"` (target: ratio <= 0.3). Run:

    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_startup.py [--repeat 7] [--scenarios DIR]

Each command runs in a fresh subprocess (`sys.executable -m agentrig ...`, so any venv works); the runs are
interleaved (one of each per round) and the median of the per-round ratios is printed (min-max). When the
scenario directory holds no scenario files, a temporary copy of the docs examples is validated instead.
Bytecode is cached in a temporary directory (PYTHONPYCACHEPREFIX), as an installed package would have it.
A script, not a test: timings never gate the test suite.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 0.3


def interleaved_seconds(
    commands: dict[str, list[str]], rounds: int, cwd: Path, bytecode_cache: Path
) -> dict[str, list[float]]:
    """Wall times of each command over `rounds` rounds, each running every command once in order (after a warm-up
    round), each in a fresh subprocess."""
    # Measure what an installed tool costs: with PYTHONDONTWRITEBYTECODE set and no .pyc in the venv every
    # run would recompile each module from source. Bytecode goes to a private cache, never into the venv.
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "PYTHONPYCACHEPREFIX": str(bytecode_cache)}
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    for command in commands.values():
        subprocess.run(command, cwd=cwd, env=environment, capture_output=True, check=False)
    samples: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(rounds):
        for label, command in commands.items():
            started = time.perf_counter()
            completed = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, check=False)
            samples[label].append(time.perf_counter() - started)
            if completed.returncode not in (0, 2):
                raise SystemExit(f"{' '.join(command)} failed ({completed.returncode}): {completed.stderr.decode()}")
    return samples


def has_scenario_files(directory: Path) -> bool:
    """The directory exists and holds at least one *.yaml / *.yml file."""
    return directory.is_dir() and any(directory.rglob("*.y*ml"))


def write_docs_examples(target: Path) -> None:
    """Write the examples of docs/scenarios.md (and the files they refer to) under `target`."""
    generator = load_module(REPO_ROOT / "scripts" / "gen_scenario_docs.py")
    for relative, text in generator.SUPPORT_FILES.items():
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        (target / relative).write_text(text, encoding="utf-8")
    for example in generator.EXAMPLES:
        (target / example.file_name).write_text(example.yaml, encoding="utf-8")


def load_module(path: Path) -> ModuleType:
    """Import a script by path."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # dataclasses look their module up while the script runs
    spec.loader.exec_module(module)
    return module


def main() -> int:
    """Measure and print; exit 1 when a command misses the target ratio."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7, help="interleaved rounds (one run of each command per round)")
    parser.add_argument("--scenarios", type=Path, default=REPO_ROOT / "scenarios", help="directory to validate")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="agentrig-bench-") as temporary:
        scenarios: Path = options.scenarios
        if not has_scenario_files(scenarios):
            scenarios = Path(temporary) / "scenarios"
            write_docs_examples(scenarios)
            print(f"{options.scenarios} holds no scenario files: validating the docs examples in {scenarios}")
        agentrig = [sys.executable, "-m", "agentrig"]
        cache = Path(temporary) / "pycache"
        baseline_label = 'python -c "import pydantic_ai"'
        commands = {
            baseline_label: [sys.executable, "-c", "import pydantic_ai"],
            "agentrig --help": [*agentrig, "--help"],
            f"agentrig validate {scenarios.name}/": [*agentrig, "validate", str(scenarios)],
            "agentrig schema": [*agentrig, "schema"],
        }
        samples = interleaved_seconds(commands, options.repeat, REPO_ROOT, cache)
    baseline = samples.pop(baseline_label)
    print(f"{options.repeat} interleaved rounds; ratio = median (min-max) of per-round ratios to the baseline")
    print(f"{baseline_label:<40} {statistics.median(baseline) * 1000:8.1f} ms   (baseline)")
    missed = False
    for label, times in samples.items():
        ratios = [command / base for command, base in zip(times, baseline, strict=True)]
        ratio = statistics.median(ratios)
        verdict = "ok" if ratio <= TARGET_RATIO else "SLOW"
        missed = missed or ratio > TARGET_RATIO
        print(
            f"{label:<40} {statistics.median(times) * 1000:8.1f} ms   ratio {ratio:.2f} ({min(ratios):.2f}-"
            f"{max(ratios):.2f})  (target <= {TARGET_RATIO})  {verdict}"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
