"""A repeated run against a baseline run (`agentrig run --repeat N --baseline DIR`, `agentrig report RUN --baseline
DIR`): per scenario, and per judged check, the pass rate and the mean score before and now, their deltas, and
whether the two 95% intervals of the pass rate overlap (when they do not, the change is beyond what the runs'
sampling explains at that confidence; when they do, the runs do not show a change).

Pure JSON: both sides are report.json `repeats` blocks (`suite/repeats`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["compare_repeats", "intervals_overlap"]


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
    scenario = _change(entry, before)
    scenario["score_mean"] = _mean(before.get("score"))
    return {**scenario, "judged": judged}


def compare_repeats(repeats: Mapping[str, Any], baseline: Mapping[str, Any], label: str) -> dict[str, Any]:
    """`repeats` with `baseline` set to `label` and each scenario's `baseline` to its change against the baseline's
    block (None for a scenario the baseline has not)."""
    before = {str(item.get("name")): item for item in baseline.get("scenarios") or () if isinstance(item, Mapping)}
    scenarios = [
        {**entry, "baseline": _compared(entry, before.get(str(entry.get("name"))))}
        for entry in repeats.get("scenarios") or ()
    ]
    return {**repeats, "baseline": label, "scenarios": scenarios}
