"""What a run's memory grows by per scenario: peak resident memory of `agentrig run` on N generated scenarios.

    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_memory.py [--sizes 200 2000 10000] [-j 1]

Each size gets its own generated suite (the peer bench's tool round trip, one file per scenario) and a new
`--out`; the peak resident set of the run (the largest of its processes, with `-j N`) is printed, and the growth
per scenario between the smallest and the largest size. A run holds at most a thousand scenarios and a thousand
results (`runtime/suite/spool.py`), so past that the growth is what each scenario's reference and bookkeeping
cost. A script, not a test; the largest default size takes a couple of minutes.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_peers import SCENARIO


def peak_rss_mb(argv: list[str]) -> float:
    """Peak resident memory of the command's largest process, in MB (each size runs in a fresh child)."""
    probe = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}
    output = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, env=environment)
    if output.returncode != 0:
        raise SystemExit(f"agentrig run failed: {output.stderr.strip()}")
    return int(output.stdout) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description="Peak memory of agentrig run on N generated scenarios.")
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000, 10000])
    parser.add_argument("-j", "--jobs", type=int, default=1)
    arguments = parser.parse_args()
    peaks: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="agentrig-bench-memory-") as temporary:
        for size in sorted(arguments.sizes):
            suite = Path(temporary) / f"s{size}"
            suite.mkdir()
            for index in range(size):
                (suite / f"case_{index:05d}.yaml").write_text(SCENARIO.format(index=index), encoding="utf-8")
            out = Path(temporary) / f"out{size}"
            argv = [
                sys.executable,
                "-m",
                "agentrig",
                "run",
                str(suite),
                "--out",
                str(out),
                "-q",
                "-j",
                str(arguments.jobs),
            ]
            peaks[size] = peak_rss_mb(argv)
            print(f"{size:>6} scenarios: peak {peaks[size]:.0f} MB", flush=True)
    # Between consecutive sizes: past the spools' first thousand, the growth is what a run holds per scenario.
    sizes = sorted(peaks)
    for smaller, larger in itertools.pairwise(sizes):
        growth_kb = (peaks[larger] - peaks[smaller]) * 1024 / (larger - smaller)
        print(f"growth: {growth_kb:.1f} KB per scenario between {smaller} and {larger} scenarios")


if __name__ == "__main__":
    main()
