"""Judged checks as checks: what a judge model (or a scripted judge) said of a turn's output or of the conversation,
against the rubric's threshold. Pure: the verdicts come in as `JudgeRecord`s (`runtime/models/judging` asks the
judge); this module only decides and words each check.

A check passes when the verdict's `pass` is true and its `score` is at least the `threshold`. Its `actual` is the
verdict (`pass`, `score`, `reason`, the judge's model, what it cost) and its `detail` says the score against the
threshold and the reason, passed or not, so junit.xml's failure message and summary.md show the reason beside it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentrig.runtime.history.canonical import JsonValue
from agentrig.runtime.history.run_records import Check, ScenarioScore
from agentrig.scenarios.model import JudgeExpectation, JudgeVerdict, Scenario, TurnExpectations

__all__ = [
    "SCORE_CHECK",
    "JudgeRecord",
    "has_judges",
    "judge_check",
    "judge_name",
    "judges_of",
    "scenario_score",
    "score_check",
]

SCORE_CHECK = "scenario: score"
"""The check of a scenario's `min_score`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeRecord:
    """One judged check of one run: what was asked and what the judge answered (or why it did not)."""

    name: str
    """The check's name: `turn 2: judge`, `scenario: judge[1]` (`judge_name`)."""
    expect: JudgeExpectation
    verdict: JudgeVerdict | None = None
    """The judge's verdict; None when it gave none (`failure`)."""
    failure: str | None = None
    """Why there is no verdict: nothing to judge (the turn produced no output), or the judge's request failed."""
    model: str
    """`script`, or the judge's `provider:name`."""
    cost_usd: float | None = None
    """What the judge's requests cost; None for a scripted judge or a model without a price."""


def judges_of(expect: TurnExpectations) -> tuple[JudgeExpectation, ...]:
    """The judged checks of one `expect` (`judge:` gives one or a list)."""
    return (expect.judge,) if isinstance(expect.judge, JudgeExpectation) else expect.judge


def has_judges(scenario: Scenario) -> bool:
    """Whether any turn or the scenario itself has a judged check (no judge to build otherwise)."""
    return any(judges_of(turn.expect) for turn in scenario.turns) or bool(judges_of(scenario.expect))


def judge_name(label: str, position: int, count: int) -> str:
    """`turn 1: judge`, or with several rubrics on one turn `turn 1: judge[0]`, `turn 1: judge[1]`."""
    return f"{label}: judge" if count == 1 else f"{label}: judge[{position}]"


def judge_check(record: JudgeRecord) -> Check:
    expect = record.expect
    expected: dict[str, JsonValue] = {"rubric": expect.rubric, "of": expect.of, "threshold": expect.threshold}
    if expect.reference is not None:
        expected["reference"] = expect.reference
    verdict = record.verdict
    if verdict is None:
        failure = record.failure or "the judge gave no verdict"
        return Check(name=record.name, passed=False, expected=expected, actual=None, detail=failure)
    actual: dict[str, JsonValue] = {
        "pass": verdict.passed,
        "score": verdict.score,
        "reason": verdict.reason,
        "model": record.model,
        "cost_usd": record.cost_usd,
    }
    reached = verdict.score >= expect.threshold
    passed = verdict.passed and reached
    if passed:
        detail = f"score {_score(verdict.score)} >= {_score(expect.threshold)}, pass: {verdict.reason}"
    elif not verdict.passed:
        detail = f"the judge's verdict is fail (score {_score(verdict.score)}): {verdict.reason}"
    else:
        detail = f"score {_score(verdict.score)} < threshold {_score(expect.threshold)}: {verdict.reason}"
    return Check(name=record.name, passed=passed, expected=expected, actual=actual, detail=detail.rstrip(": "))


def scenario_score(records: Sequence[JudgeRecord], threshold: float | None) -> ScenarioScore | None:
    """The scenario's score: the mean of its judged checks' scores, one without a verdict counted as 0 (a judge that
    could not grade is no evidence of a good answer); None without judged checks."""
    if not records:
        return None
    judged = tuple((record.name, record.verdict.score if record.verdict else None) for record in records)
    value = round(sum(score or 0.0 for _, score in judged) / len(judged), 4)
    return ScenarioScore(value=value, judged=judged, threshold=threshold)


def score_check(score: ScenarioScore | None, threshold: float | None) -> Check | None:
    """`scenario: score` against `min_score` (None without one); a scenario with no judged check fails it."""
    if threshold is None:
        return None
    if score is None:
        detail = f"min_score {_score(threshold)}: the scenario has no judged check to score"
        return Check(name=SCORE_CHECK, passed=False, expected=threshold, actual=None, detail=detail)
    passed = score.value >= threshold
    count = len(score.judged)
    mean = f"the mean of {count} judged check{'s' if count != 1 else ''}"
    relation = ">=" if passed else "<"
    detail = f"score {_score(score.value)} {relation} min_score {_score(threshold)} ({mean})"
    return Check(name=SCORE_CHECK, passed=passed, expected=threshold, actual=score.value, detail=detail)


def _score(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"
