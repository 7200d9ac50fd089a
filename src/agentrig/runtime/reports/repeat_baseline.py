"""A repeated run against a baseline run (`agentrig run --repeat N --baseline DIR`, `agentrig report RUN --baseline
DIR`): per scenario, and per judged check, the pass rate and the mean score before and now, their deltas, and
whether the two 95% intervals of the pass rate overlap (when they do not, the change is beyond what the runs'
sampling explains at that confidence; when they do, the runs do not show a change).

Pure JSON: both sides are report.json `repeats` blocks (`suite/repeats`). `agentrig merge` of shards of such a run
compares the merged block again (`merged_baseline`): each shard's report carries, per scenario, the baseline's
figures it was compared with, so the merge reads no baseline folder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentrig.errors import InputError

__all__ = ["compare_repeats", "intervals_overlap", "merged_baseline"]


def intervals_overlap(first: Sequence[float] | None, second: Sequence[float] | None) -> bool | None:
    """Whether two `[low, high]` intervals share a point; None when either is missing (no run ran)."""
    if not first or not second:
        return None
    return first[0] <= second[1] and second[0] <= first[1]


def _delta(now: Any, before: Any) -> float | None:
    if not isinstance(now, int | float) or not isinstance(before, int | float):
        return None
    return round(float(now) - float(before), 4)


def _mean(block: Any) -> float | None:
    return block.get("mean") if isinstance(block, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def _change(now: Mapping[str, Any], before: Mapping[str, Any]) -> dict[str, Any]:
    """What a scenario's (or a judged check's) repeats were before, and the change."""
    return {
        "runs": before.get("runs"),
        "passed": before.get("passed"),
        "pass_fraction": before.get("pass_fraction"),
        "interval": before.get("interval"),
        "score_mean": _mean(before.get("score")),
        "pass_rate_delta": _delta(now.get("pass_fraction"), before.get("pass_fraction")),
        "score_delta": _delta(_mean(now.get("score")), _mean(before.get("score"))),
        "intervals_overlap": intervals_overlap(now.get("interval"), before.get("interval")),
    }


def _compared(entry: Mapping[str, Any], before: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if before is None:
        return None  # a scenario the baseline did not run
    judged_before: Mapping[str, Any] = before.get("judged") or {}
    judged: dict[str, Any] = {
        name: _change(now, judged_before[name])
        for name, now in (entry.get("judged") or {}).items()
        if name in judged_before
    }
    return {**_change(entry, before), "judged": judged}


def compare_repeats(repeats: Mapping[str, Any], baseline: Mapping[str, Any], label: str) -> dict[str, Any]:
    """`repeats` with `baseline` set to `label` and each scenario's `baseline` to its change against the baseline's
    block (None for a scenario the baseline has not)."""
    before = {str(item.get("name")): item for item in baseline.get("scenarios") or () if isinstance(item, Mapping)}
    scenarios = [
        {**entry, "baseline": _compared(entry, before.get(str(entry.get("name"))))}
        for entry in repeats.get("scenarios") or ()
    ]
    return {**repeats, "baseline": label, "scenarios": scenarios}


def merged_baseline(reports: Sequence[Mapping[str, Any]], repeats: dict[str, Any] | None) -> dict[str, Any] | None:
    """The merged `repeats` block compared with the baseline its inputs were compared with (unchanged when none
    was). An `InputError` when the repeated inputs name different baselines, or some one and some none: the merged
    runs would have no one baseline to be compared with."""
    blocks: list[Mapping[str, Any]] = [
        report["repeats"] for report in reports if isinstance(report.get("repeats"), Mapping)
    ]
    labels = sorted({block.get("baseline") for block in blocks}, key=lambda label: (label is None, str(label)))
    if repeats is None or labels in ([], [None]):
        return repeats
    if len(labels) > 1:
        named = ", ".join("none" if label is None else str(label) for label in labels)
        raise InputError(
            f"merge: the runs were compared with different baselines ({named}): merge the shards of one run, all "
            "with the same --baseline or all without"
        )
    before: dict[str, dict[str, Any]] = {}
    for block in blocks:
        for entry in block.get("scenarios") or ():
            change = entry.get("baseline")
            if isinstance(change, Mapping):  # the same figures in every shard that ran some of its runs
                before.setdefault(str(entry.get("name")), _as_repeat_entry(str(entry.get("name")), change))  # pyright: ignore[reportUnknownArgumentType]
    return compare_repeats(repeats, {"scenarios": list(before.values())}, str(labels[0]))


def _as_repeat_entry(name: str, change: Mapping[str, Any]) -> dict[str, Any]:
    """The baseline's repeats entry (what `compare_repeats` reads) back from a change against it."""

    def figures(found: Mapping[str, Any]) -> dict[str, Any]:
        kept = {key: found.get(key) for key in ("runs", "passed", "pass_fraction", "interval")}
        return {**kept, "score": {"mean": found.get("score_mean")}}

    judged: Mapping[str, Any] = change.get("judged") or {}
    return {"name": name, **figures(change), "judged": {check: figures(found) for check, found in judged.items()}}
