"""What proving an output folder agentrig's costs a run (run: `python bench/bench_output_folder.py [--scenarios N]`).

A run into a folder an earlier run wrote (the usual case: `agentrig run` again) claims it, which reads and hashes
every file its manifest lists, records each scenario's files before writing them (one append per scenario), and
at the end removes what it did not write again and rewrites the manifest. Measured as the ratio of a whole
in-process run (`run_suite`, -j 1, N scripted scenarios re-run into their earlier folder) with that work, against
the same run with the hashing and the appends switched off (the manifest still written, nothing proven), interleaved
A, B, A, B: median (min-max) of the per-round ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")

sys.path.insert(0, str(Path(__file__).parent))

from bench_runner import write_scenarios  # pyright: ignore[reportMissingImports, reportUnknownVariableType]

from agentrig.runtime.runfolder import owned_folder
from agentrig.runtime.suite.outputs import scenario_files
from agentrig.runtime.suite.runner import RunOptions, run_suite


def _timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenarios", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        suite, proven_out, unproven_out = root / "suite", root / "proven", root / "unproven"
        suite.mkdir()
        write_scenarios(suite, arguments.scenarios)
        options = {"paths": (suite,), "html_report": False}

        def proven() -> object:
            return run_suite(RunOptions(out_dir=proven_out, **options))  # pyright: ignore[reportArgumentType]

        def unproven() -> object:
            nothing_read = owned_folder._Verified(None, {}, frozenset())  # pyright: ignore[reportPrivateUsage]
            with (
                mock.patch.object(scenario_files, "append_records", return_value=None),
                mock.patch.object(owned_folder, "_verify", return_value=nothing_read),
            ):
                return run_suite(RunOptions(out_dir=unproven_out, **options))  # pyright: ignore[reportArgumentType]

        proven()
        unproven()  # the earlier runs each folder is written over
        ratios: list[float] = []
        for _ in range(arguments.rounds):
            ratios.append(_timed(proven) / _timed(unproven))
        manifest = (proven_out / owned_folder.MANIFEST_NAME).stat().st_size
        print(
            f"{arguments.scenarios} scenarios re-run into their folder, proven / unproven: "
            f"{statistics.median(ratios):.3f}x ({min(ratios):.3f}-{max(ratios):.3f}); manifest {manifest} bytes"
        )


if __name__ == "__main__":
    main()
