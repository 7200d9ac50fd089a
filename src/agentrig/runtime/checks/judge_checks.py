"""Judged checks as checks: what a judge model (or a scripted judge) said of a turn's output or of the conversation,
against the rubric's threshold. Pure: the verdicts come in as `JudgeRecord`s (`runtime/models/judging` asks the
judge); this module only decides and words each check.

A check passes when the verdict's `pass` is true and its `score` is at least the `threshold`. Its `actual` is the
verdict (`pass`, `score`, `reason`, the judge's model, what it cost) and its `detail` says the score against the
threshold and the reason, passed or not, so junit.xml's failure message and summary.md show the reason beside it."""

from __future__ import annotations

from dataclasses import dataclass

from agentrig.runtime.history.canonical import JsonValue
from agentrig.runtime.history.run_records import Check
from agentrig.scenarios.model import JudgeExpectation, JudgeVerdict, Scenario, TurnExpectations

__all__ = ["JudgeRecord", "has_judges", "judge_check", "judge_name", "judges_of"]


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


def _score(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"
