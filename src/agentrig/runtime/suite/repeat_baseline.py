"""`agentrig run --repeat N --baseline DIR`: the earlier run's repeats, read before the run (a bad folder is a usage
error, exit 2, before anything is written), then each scenario's change against them (`reports.repeat_baseline`).

A baseline run without `--repeat` counts as one run per scenario: its entries are tallied as a repeat run's are,
so its pass rate (0 or 1) has its interval and its score its distribution of one."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentrig.errors import InputError, UsageError
from agentrig.runtime.reports.repeat_baseline import compare_repeats
from agentrig.runtime.suite.repeats import RepeatTally

__all__ = ["read_baseline", "with_baseline"]


def read_baseline(directory: Path | None, repeat: int) -> dict[str, Any] | None:
    """The `repeats` block of the run in `directory` (made from its entries when it did not repeat); None without
    `--baseline`. A `UsageError` for `--baseline` without `--repeat`, an `InputError` for a folder that is no run's."""
    if directory is None:
        return None
    if repeat < 2:
        raise UsageError("--baseline compares repeated runs: give --repeat N (N of at least 2)")
    from agentrig.runtime.suite.outputs.reports import load_report

    if not directory.is_dir():
        raise InputError(f"--baseline {directory}: no such directory")
    report = load_report(directory)
    block = report.get("repeats")
    if isinstance(block, Mapping) and isinstance(block.get("scenarios"), list):  # pyright: ignore[reportUnknownMemberType]
        return dict(block)  # pyright: ignore[reportUnknownArgumentType]
    tally = RepeatTally(1, None)
    for entry in report["scenarios"]:
        tally.add_entry(entry, None)
    return tally.report()


def with_baseline(repeats: dict[str, Any] | None, baseline: Mapping[str, Any] | None, label: Path | None) -> Any:
    """The run's `repeats` block compared with the baseline's (unchanged without one)."""
    if repeats is None or baseline is None or label is None:
        return repeats
    return compare_repeats(repeats, baseline, str(label))
