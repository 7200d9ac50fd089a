"""`--shard K/N --durations REPORT`: shards balanced by how long each scenario took in an earlier run.

Real suites are not uniform (one scenario's agent module can take seconds to import), so shards dealt by count can
end minutes apart. Given an earlier `report.json` (a plain run's or a merged one), each scenario weighs its recorded
`duration_s`; a scenario the report does not hold (added since) weighs the mean of those it does. The scenarios are
dealt longest first, each to the shard with the least time so far (ties: the lowest shard, the hash order of
`selection`), as pytest-split does with its stored durations.

The plan depends only on the selected ids and the file's contents, so every shard given the same file computes the
same partition: each scenario lands in exactly one shard. A file that is missing, unreadable, corrupt, or holds none of
the selected scenarios (stale) is not an error: the shards fall back to count balancing, and the note says why.
Either way the report records the plan (`shard.plan`: `count` or `durations <digest>`), and `agentrig merge` refuses
shards planned differently (one job that found the file and one that did not would overlap and miss scenarios).
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentrig.errors import AgentrigError
from agentrig.runtime.runfolder import jsonio

__all__ = ["COUNT_PLAN", "Durations", "deal_by_durations", "for_selection", "read_durations"]

COUNT_PLAN = "count"
"""`shard.plan` of shards dealt by count (no durations file, or one that could not be used)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Durations:
    """Seconds per scenario id from an earlier report, or why there are none (the shards then balance by count)."""

    seconds: Mapping[str, float]
    """Scenario id -> `duration_s`; empty when the file could not be used."""
    label: str
    """`durations <digest of the file's durations>`, or `count`: what the report records as `shard.plan`."""
    note: str | None = None
    """One line for the user: why the durations are not used, or how many scenarios they lack."""
    source: str = ""
    """The file given, as the notes name it."""


def _fallback(path: Path, reason: str) -> Durations:
    note = f"--durations {path}: {reason}; shards balanced by count"
    return Durations(seconds={}, label=COUNT_PLAN, note=note, source=str(path))


def _entries(document: Any) -> list[Any] | None:
    scenarios = document.get("scenarios") if isinstance(document, dict) else None
    return scenarios if isinstance(scenarios, list) else None  # pyright: ignore[reportUnknownVariableType]


def _is_seconds(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def read_durations(path: Path) -> Durations:
    """The durations an earlier run's `report.json` (or its output directory) records; never raises."""
    report = path / "report.json" if path.is_dir() else path
    try:
        document = jsonio.read_json_file(report)
    except AgentrigError as error:
        return _fallback(path, f"not usable ({error.message})")
    except OSError as error:
        return _fallback(path, f"not usable ({error.strerror or error})")
    entries = _entries(document)
    if entries is None:
        return _fallback(path, "not an agentrig report.json (no scenarios list)")
    seconds: dict[str, float] = {}
    for position, entry in enumerate(entries):
        scenario_id = entry.get("id") if isinstance(entry, dict) else None
        duration: object = entry.get("duration_s") if isinstance(entry, dict) else None
        if not isinstance(scenario_id, str) or not _is_seconds(duration):
            return _fallback(path, f"scenarios[{position}] lacks an id or a non-negative duration_s")
        seconds[scenario_id] = float(duration)  # pyright: ignore[reportArgumentType]  (checked by _is_seconds)
    if not seconds:
        return _fallback(path, "the report holds no scenarios")
    digest = hashlib.sha256(jsonio.dumps(sorted(seconds.items()))).hexdigest()[:12]
    return Durations(seconds=seconds, label=f"durations {digest}", source=str(path))


def for_selection(ordered_ids: Sequence[str], durations: Durations) -> Durations:
    """`durations` as these scenarios use them: a count fallback (with its note) when the file holds none of them
    (a stale file), else a note counting those it lacks (they weigh the mean of the others)."""
    known = [durations.seconds[scenario_id] for scenario_id in ordered_ids if scenario_id in durations.seconds]
    if not durations.seconds:
        return durations
    if not known:
        reason = f"holds none of the {len(ordered_ids)} selected scenarios (stale?); shards balanced by count"
        return Durations(seconds={}, label=COUNT_PLAN, note=f"--durations {durations.source}: {reason}")
    unknown = len(ordered_ids) - len(known)
    if not unknown:
        return durations
    mean = sum(known) / len(known)
    lacking = f"{unknown} of {len(ordered_ids)} scenarios have no duration there (new?)"
    note = f"--durations {durations.source}: {lacking}; each counts {mean:.3g} s"
    return Durations(seconds=durations.seconds, label=durations.label, note=note, source=durations.source)


def deal_by_durations(ordered_ids: Sequence[str], count: int, seconds: Mapping[str, float]) -> list[list[str]]:
    """The ids of each of `count` shards: longest first, each onto the shard with the least time so far (ties: the
    lowest shard; equal durations: `ordered_ids`' order). An id `seconds` lacks weighs the mean of those it has."""
    known = [seconds[scenario_id] for scenario_id in ordered_ids if scenario_id in seconds]
    mean = sum(known) / len(known) if known else 0.0
    weight = {scenario_id: seconds.get(scenario_id, mean) for scenario_id in ordered_ids}
    position = {scenario_id: index for index, scenario_id in enumerate(ordered_ids)}
    shards: list[list[str]] = [[] for _ in range(count)]
    loads: list[tuple[float, int]] = [(0.0, index) for index in range(count)]
    for scenario_id in sorted(ordered_ids, key=lambda item: (-weight[item], position[item])):
        load, index = heapq.heappop(loads)
        shards[index].append(scenario_id)
        heapq.heappush(loads, (load + weight[scenario_id], index))
    return shards
