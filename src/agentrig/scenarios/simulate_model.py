"""Simulated users: a turn whose user messages a user model writes from a persona and a goal, given as `simulate:`
in a turn, for up to `max_turns` turns or until a stop condition; each message it writes runs as an ordinary turn."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from agentrig.scenarios._strict import Strict as _Strict

__all__ = ["SimulatedUser", "SimulationStop"]


class SimulationStop(_Strict):
    """A text condition on the agent's answer that ends the simulated conversation once an answer meets it."""

    contains: str | None = None
    """The answer contains this text."""
    regex: str | None = None
    """A Python regular expression searched in the answer."""

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as error:
                raise ValueError(f"not a regular expression: {error}") from None
        return value

    @model_validator(mode="after")
    def _says_something(self) -> SimulationStop:
        if self.contains is None and self.regex is None:
            raise ValueError("a stop condition needs contains or regex")
        return self

    def met_by(self, answer: str | None) -> bool:
        """Whether `answer` (the agent's output text) meets the condition; an answer that is None meets none."""
        if answer is None:
            return False
        if self.contains is not None and self.contains in answer:
            return True
        return self.regex is not None and re.search(self.regex, answer) is not None


class SimulatedUser(_Strict):
    """A user model that writes the turn's user messages: it is shown its persona, its goal and the conversation so
    far (the user's words and the agent's answers), and answers with the next message, or that it is done."""

    persona: str = Field(min_length=1)
    """Who the user is, in plain words (`A customer who returned order A-1001 and is impatient`)."""
    goal: str = Field(min_length=1)
    """What the user wants from the conversation (`Learn when the refund arrives`); the user model says it is done
    once it is met (or cannot be)."""
    max_turns: int = Field(default=5, ge=1, le=100)
    """The most turns the simulated conversation runs (the turn's own `user:` message counts as its first)."""
    stop: SimulationStop | None = None
    """Ends the conversation after the first answer that meets it (`{contains: refund}`, `{regex: ...}`)."""
    model: str | None = None
    """The user model as `provider:name`, resolved, limited and priced as a judge's `model` is, and recorded and
    replayed with the run's record mode as `<scenario>+user-N.json` (N: this turn's place in `turns`, from 0)."""
    script: tuple[str, ...] | None = None
    """A scripted user: the messages it writes, in order, offline (pydantic-ai's FunctionModel answering the user
    model's output tool); it is done after the last one."""

    @field_validator("script")
    @classmethod
    def _no_empty_message(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None and any(not message.strip() for message in value):
            raise ValueError("a scripted user's message is empty: write the text it sends")
        return value

    @model_validator(mode="after")
    def _one_user_model(self) -> SimulatedUser:
        if (self.model is None) == (self.script is None):
            raise ValueError("give the simulated user a model or a script, one of the two")
        return self
