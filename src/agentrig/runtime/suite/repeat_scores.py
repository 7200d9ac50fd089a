"""Scores over `--repeat N`: each scenario's score (the mean of its judged checks' scores, `checks/judge_checks`)
as a distribution over its runs, and each judged check's pass rate (with its 95% Wilson interval) and scores.

Built from JSON (a run's `ScenarioScore.to_json()` and its checks' pass, or a report.json entry's `score` and
`checks`), so a run, a merge and a baseline read from disk are tallied alike. A judged check without a verdict
scores 0 here as in the scenario's score: a judge that could not grade is no evidence of a good answer.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ScoreTally", "distribution", "wilson_interval"]

_Z_95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


def wilson_interval(passed: int, runs: int, *, z: float = _Z_95) -> tuple[float, float]:
    """The Wilson score interval of a pass fraction (95% by default); (0, 1) for no runs. Sound at 0 and N passes,
    where the normal approximation gives an interval of width 0."""
    if runs == 0:
        return (0.0, 1.0)
    fraction = passed / runs
    denominator = 1 + z * z / runs
    centre = (fraction + z * z / (2 * runs)) / denominator
    margin = z * math.sqrt(fraction * (1 - fraction) / runs + z * z / (4 * runs * runs)) / denominator
    return (max(0.0, centre - margin), min(1.0, centre + margin))


def distribution(values: list[float]) -> dict[str, Any]:
    """`runs`, `mean`, `min`, `median`, `max` and `stdev` (the sample's; 0 for one value) of some scores."""
    return {
        "runs": len(values),
        "mean": round(statistics.fmean(values), 4),
        "min": round(min(values), 4),
        "median": round(statistics.median(values), 4),
        "max": round(max(values), 4),
        "stdev": round(statistics.stdev(values), 4) if len(values) > 1 else 0.0,
    }


@dataclass(slots=True)
class ScoreTally:
    """One scenario's scores over its runs: add each run's `score` block and its checks' pass."""

    values: list[float] = field(default_factory=list[float])
    threshold: float | None = None
    judged: dict[str, list[tuple[bool, float]]] = field(default_factory=dict[str, list[tuple[bool, float]]])
    """Judged check name -> (passed, score) per run that asked it."""

    def add(self, score: Mapping[str, Any] | None, passed: Mapping[str, bool]) -> None:
        """One run: its `score` block (None: it has no judged check, or it did not get to them) and whether each of
        its checks passed, by name."""
        if not isinstance(score, Mapping):
            return
        value = score.get("value")
        if isinstance(value, int | float) and not isinstance(value, bool):
            self.values.append(float(value))
        threshold = score.get("threshold")
        if isinstance(threshold, int | float) and not isinstance(threshold, bool):
            self.threshold = float(threshold)
        judged = score.get("judged")
        for name, found in judged.items() if isinstance(judged, Mapping) else ():  # pyright: ignore[reportUnknownVariableType]
            number = float(found) if isinstance(found, int | float) and not isinstance(found, bool) else 0.0
            self.judged.setdefault(str(name), []).append((bool(passed.get(str(name), False)), number))  # pyright: ignore[reportUnknownArgumentType]

    def score_json(self) -> dict[str, Any] | None:
        """The scenario's score over its runs (`distribution`, and its `threshold`); None when no run was scored."""
        if not self.values:
            return None
        return {**distribution(self.values), "threshold": self.threshold}

    def judged_json(self) -> dict[str, Any]:
        """Each judged check over the runs that asked it: its pass rate with its interval, and its scores."""
        checks: dict[str, Any] = {}
        for name, runs in self.judged.items():
            passed = sum(1 for ok, _ in runs if ok)
            low, high = wilson_interval(passed, len(runs))
            checks[name] = {
                "runs": len(runs),
                "passed": passed,
                "pass_fraction": round(passed / len(runs), 4),
                "interval": [round(low, 4), round(high, 4)],
                "score": distribution([score for _, score in runs]),
            }
        return checks
