"""What a user's agent raised, said in the scenario's terms: which tool failed, which agent was not scripted.

pydantic-ai lets an exception from a tool function end the run as it is, with nothing saying which call
raised it. The tool call is found on the way the exception came: every toolset is called as
`call_tool(name, tool_args, ctx, tool)` (the public `AbstractToolset` signature, 2.38 and 2.68), and that
frame's `ctx` is the call's `RunContext`, holding its `tool_call_id` and `tool_name`. The outermost such
frame of a call of this run is the main agent's call (an inner one belongs to a sub-agent it ran).

A scripted run sets pydantic-ai's `ALLOW_MODEL_REQUESTS` guard, so an agent with no script (usually a
sub-agent a tool delegates to) fails with pydantic-ai's `RuntimeError`; the innermost agent on the way
(`self` of `Agent.run` / `Agent.iter`) is the one that asked, and is named in the error.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from pydantic_ai.agent import AbstractAgent

from agentrig.runtime.history.run_records import RunError
from agentrig.runtime.models.failures import one_line

__all__ = ["GUARD_MESSAGE", "ToolFailure", "tool_failure", "unscripted_agent"]

GUARD_MESSAGE = "Model requests are not allowed, since ALLOW_MODEL_REQUESTS is False"
"""pydantic-ai's message when its `ALLOW_MODEL_REQUESTS` guard refuses a request (2.38 and 2.68)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFailure:
    """A run ended by an exception from one of its tool calls."""

    tool_call_id: str
    error: RunError


def _frames(traceback: TracebackType | None) -> list[dict[str, Any]]:
    """The local variables of each frame the exception passed through, outermost first."""
    frames: list[dict[str, Any]] = []
    while traceback is not None:
        frames.append(traceback.tb_frame.f_locals)
        traceback = traceback.tb_next
    return frames


def _describe_agent(agent: Any) -> str:
    name = getattr(agent, "name", None)
    model: Any = getattr(agent, "model", None)
    model_name = model if isinstance(model, str) else getattr(model, "model_name", None)
    system = getattr(model, "system", None)
    if isinstance(model_name, str) and isinstance(system, str) and ":" not in model_name:
        model_name = f"{system}:{model_name}"
    label = f"agent {name!r}" if name else "an agent"
    return label + (f" (model {model_name})" if model_name else "")


def unscripted_agent(error: BaseException) -> str | None:
    """`agent 'name' (model provider:name)` when `error` is the model-request guard refusing an agent."""
    if not isinstance(error, RuntimeError) or GUARD_MESSAGE not in str(error):
        return None
    agent: Any = None
    for local in _frames(error.__traceback__):
        candidate = local.get("self")
        if isinstance(candidate, AbstractAgent):
            agent = candidate
    return _describe_agent(agent)


def _guard_message(who: str) -> str:
    return (
        f"{who} sent a model request, and a scripted run sends none: give it a script under"
        " `agents:` (module:attribute) in the scenario"
    )


def tool_failure(error: BaseException, call_ids: Container[str]) -> ToolFailure | None:
    """The call of this run (`call_ids`) whose tool raised `error`, with the run's error naming the tool."""
    for local in _frames(error.__traceback__):
        ctx = local.get("ctx")
        call_id = getattr(ctx, "tool_call_id", None)
        tool_name = getattr(ctx, "tool_name", None)
        if isinstance(call_id, str) and call_id in call_ids and "tool_args" in local:
            who = unscripted_agent(error)
            cause = _guard_message(who) if who is not None else f"{type(error).__name__}: {error}"
            message = one_line(f"tool {tool_name!r} (call {call_id}) raised {cause}")
            return ToolFailure(tool_call_id=call_id, error=RunError(kind="tool_failed", message=message))
    return None


def unscripted_model_error(error: BaseException) -> RunError | None:
    """The run's error when the guard refused a model outside any tool call."""
    who = unscripted_agent(error)
    if who is None:
        return None
    return RunError(kind="agent_error", message=_guard_message(who))
