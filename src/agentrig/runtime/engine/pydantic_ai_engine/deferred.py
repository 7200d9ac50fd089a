"""Answers to deferred calls, in pydantic-ai's own types, and the instructions a run sent.

A turn that continues deferred calls gives `deferred_results` (the result of a `CallDeferred` or external
call) and `approvals` (decisions on calls that asked for approval). They travel to the engine as one
mapping by tool_call_id: approvals as pydantic-ai's `ToolApproved` / `ToolDenied`, results as plain values.
The engine splits them into `DeferredToolResults(calls=..., approvals=...)`: an approved call then runs
its real tool, a denied one tells the model the denial message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_ai import DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.messages import ModelMessage, ModelRequest

from agentrig.scenarios.model import ApprovalDecision, Turn

__all__ = ["deferred_tool_results", "last_instructions", "misanswered_approvals", "turn_deferred_results"]


def _approval(decision: bool | ApprovalDecision) -> ToolApproved | ToolDenied:
    if decision is True:
        return ToolApproved()
    if decision is False:
        return ToolDenied()
    if decision.deny is not None:
        return ToolDenied(message=decision.deny)
    return ToolApproved(override_args=dict(decision.args or {}))


def turn_deferred_results(turn: Turn) -> dict[str, Any] | None:
    """A turn's `deferred_results` and `approvals` as one mapping for the engine; None when it has neither."""
    if turn.deferred_results is None and turn.approvals is None:
        return None
    answers: dict[str, Any] = dict(turn.deferred_results or {})
    for call_id, decision in (turn.approvals or {}).items():
        answers[call_id] = _approval(decision)
    return answers


def deferred_tool_results(answers: Mapping[str, Any] | None) -> DeferredToolResults | None:
    """pydantic-ai's `DeferredToolResults`: approval decisions under `approvals`, every other value under `calls`."""
    if answers is None:
        return None
    calls = {k: v for k, v in answers.items() if not isinstance(v, ToolApproved | ToolDenied)}
    approvals: dict[str, Any] = {k: v for k, v in answers.items() if isinstance(v, ToolApproved | ToolDenied)}
    return DeferredToolResults(calls=calls, approvals=approvals)


def last_instructions(messages: Sequence[ModelMessage]) -> str | None:
    """The instructions of the last request that carried any (pydantic-ai sets them on every request it sends)."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest) and message.instructions:
            return message.instructions
    return None


def misanswered_approvals(answers: Mapping[str, Any] | None, awaiting_approval: set[str]) -> str | None:
    """Why `answers` cannot resume the run: a call that asked for approval got a plain result, which
    pydantic-ai would silently use as the tool's return without running the tool."""
    if answers is None:
        return None
    wrong = sorted(
        k for k, v in answers.items() if k in awaiting_approval and not isinstance(v, ToolApproved | ToolDenied)
    )
    if not wrong:
        return None
    return (
        f"deferred_results answers {', '.join(wrong)}, which asked for approval: decide under `approvals`"
        " (true, false, {deny: message} or {args: {...}})"
    )
