"""Judged checks: a rubric a model grades the turn's output (or the whole conversation) against, with a structured
verdict (`pass`, `score` 0..1, `reason`), given as `judge:` in a turn's or the scenario's `expect`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from agentrig.scenarios._strict import Strict as _Strict

__all__ = ["JudgeExpectation", "JudgeVerdict"]


class JudgeVerdict(_Strict):
    """What a judge answers: its structured verdict (and what a scripted judge's `script` returns)."""

    passed: bool = Field(alias="pass")
    """The judge's own pass or fail."""
    score: float = Field(ge=0, le=1)
    """How well the rubric is met, from 0 (not at all) to 1 (fully)."""
    reason: str = ""
    """Why, in a sentence or two: shown beside the check in every report."""


class JudgeExpectation(_Strict):
    """A rubric graded by a judge model: passes when the verdict's `pass` is true and its `score` is at least
    `threshold`."""

    rubric: str = Field(min_length=1)
    """What the judge grades, in plain words (`The answer states the refund policy and stays polite`)."""
    of: Literal["output", "conversation"] = "output"
    """What is judged. output: the turn's output (the last turn's at scenario level); conversation: the messages the
    scenario ran up to this turn (every turn's at scenario level), user words, answers, tool calls and their results.
    (Not `on:`, which YAML reads as `true`.)"""
    reference: str | None = None
    """A reference answer the judge compares with (the rubric says how: `states the same total as the reference`)."""
    threshold: float = Field(default=0.0, ge=0, le=1)
    """The lowest passing score; 0: the verdict's `pass` alone decides."""
    model: str | None = None
    """The judge's model as `provider:name` (resolved as `agentrig run --model` is: its key variable, its base URL
    variable such as `OPENAI_BASE_URL`; `--base-url` is the run's model's), priced and limited with the run, and
    recorded and replayed with the run's record mode (`--record`, `--replay`, `--record-mode`) as
    `<scenario>+judge-N.json` beside the scenario's recording."""
    script: JudgeVerdict | None = None
    """A scripted judge: the verdict it returns, offline (pydantic-ai's FunctionModel answering the judge's output
    tool with it), so a suite's own tests make no judge call."""

    @model_validator(mode="before")
    @classmethod
    def _no_on_key(cls, data: Any) -> Any:
        # YAML 1.1 reads an unquoted `on:` key as the boolean true: say what to write instead of "keys should be
        # strings".
        if isinstance(data, dict) and True in data:
            raise ValueError("`on:` is read by YAML as true: write `of: output` or `of: conversation`")
        return data  # pyright: ignore[reportUnknownVariableType]

    @model_validator(mode="after")
    def _one_judge(self) -> JudgeExpectation:
        if (self.model is None) == (self.script is None):
            raise ValueError("give the judge a model or a script, one of the two")
        return self
