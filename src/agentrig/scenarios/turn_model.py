"""The scenario format's turns: one user request (or a continuation) and the scripted responses that answer it."""

from __future__ import annotations

from pydantic import Field, model_validator

from agentrig.scenarios._strict import JsonValue
from agentrig.scenarios._strict import Strict as _Strict
from agentrig.scenarios.content_model import Attachment, UserMessage
from agentrig.scenarios.expectation_model import TurnExpectations
from agentrig.scenarios.simulate_model import SimulatedUser
from agentrig.scenarios.step_model import ModelStep
from agentrig.scenarios.turn_controls import CancelPoint, SteeringMessage, check_turn_points
from agentrig.scenarios.ui_model import UiRequest

__all__ = ["ApprovalDecision", "SubAgentScript", "Turn"]


class ApprovalDecision(_Strict):
    """A decision on a call that asked for approval; exactly one of `deny` or `args`."""

    deny: str | None = None
    """Deny the call; the model is told this message."""
    args: dict[str, JsonValue] | None = None
    """Approve the call, running the tool with these arguments instead of the model's. Arguments the tool
    rejects fail the scenario (pydantic-ai only asks the model to retry), unless a `tool_calls` `status`
    names the call."""

    @model_validator(mode="after")
    def _one_decision(self) -> ApprovalDecision:
        if (self.deny is None) == (self.args is None):
            raise ValueError("an approval decision needs exactly one of deny or args")
        return self


class Turn(_Strict):
    """One user request and the scripted model responses that answer it."""

    user: UserMessage | None = None
    """The user's message: text, or a list of text pieces and attachments in order (`- Describe it.` then
    `- {file: photos/cat.png}`). Omitted: continue without a prompt (pending or deferred calls)."""
    model: tuple[ModelStep, ...] = ()
    """The scripted model responses, in order. Ignored when running against a real model."""
    deferred_results: dict[str, JsonValue] | None = None
    """Results for calls deferred in the previous turn (`CallDeferred`, external tools), by tool_call_id
    (continue without a prompt). Calls that asked for approval are answered under `approvals`."""
    approvals: dict[str, bool | ApprovalDecision] | None = None
    """Decisions on calls that asked for approval in the previous turn (`requires_approval`,
    `ApprovalRequired`), by tool_call_id (continue without a prompt): `true` approves (the real tool runs),
    `false` denies with pydantic-ai's default message, `{deny: message}` denies with that message,
    `{args: {...}}` approves with replaced arguments (which the tool must accept: see `args`)."""
    ui: UiRequest | None = None
    """The turn arrives as one request of a UI protocol (AG-UI, Vercel AI) to pydantic-ai's adapter, which reads
    the conversation from it and encodes the run as events (see `UiRequest`); no `user` then."""
    steer: tuple[SteeringMessage, ...] = ()
    """Steering messages the host enqueues during this turn (see `SteeringMessage`); each is checked to reach
    the model exactly once."""
    cancel: CancelPoint | None = None
    """Cancel the turn at this point (see `CancelPoint`)."""
    simulate: SimulatedUser | None = None
    """A user model writes this turn's user messages (see `SimulatedUser`): each runs as an ordinary turn, the
    agent's `model` steps answering them all in order; `user`, when given, is sent first as written. `expect`
    holds after the last of them."""
    expect: TurnExpectations = Field(default_factory=TurnExpectations)
    """What must hold after this turn."""

    @model_validator(mode="after")
    def _resume_has_no_prompt(self) -> Turn:
        if self.approvals is not None and self.user is not None:
            raise ValueError("a turn with approvals continues the deferred calls: it takes no user prompt")
        if isinstance(self.user, tuple) and not self.user:
            raise ValueError("user: an empty list sends nothing; give text or attachments, or leave user out")
        if self.ui is not None:
            others = [name for name in ("user", "deferred_results", "approvals", "cancel") if getattr(self, name)]
            others += ["steer"] if self.steer else []
            if others:
                raise ValueError(f"a ui turn takes its conversation from the request: no {', '.join(others)}")
        check_turn_points(self.model, self.steer, self.cancel)
        if self.simulate is not None:
            self._check_simulated()
        return self

    def _check_simulated(self) -> None:
        others = [name for name in ("deferred_results", "approvals", "ui", "cancel") if getattr(self, name) is not None]
        others += ["steer"] if self.steer else []
        if others:
            raise ValueError(f"a simulated turn is the user's messages and the agent's answers: no {', '.join(others)}")
        assert self.simulate is not None
        if self.user is None and self.simulate.script == ():
            raise ValueError("simulate: the script is empty and the turn has no user message: nothing is sent")

    @property
    def attachments(self) -> tuple[Attachment, ...]:
        """The attachments of the user's message, in order."""
        return tuple(item for item in self.user if isinstance(item, Attachment)) if isinstance(self.user, tuple) else ()


class SubAgentScript(_Strict):
    """The script of another agent the scenario's agent calls (a sub-agent a tool delegates to)."""

    model: tuple[ModelStep, ...] = Field(min_length=1)
    """The sub-agent's scripted responses, in order, across the whole scenario (every run of it takes the
    next steps)."""
