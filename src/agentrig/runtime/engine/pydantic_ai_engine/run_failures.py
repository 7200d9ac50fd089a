"""What a user's agent raised, said in the scenario's terms: which tool failed, which agent was not scripted.

pydantic-ai lets an exception from a tool function end the run as it is, with nothing saying which call
raised it. The tool call is found on the way the exception came: every toolset is called as
`call_tool(name, tool_args, ctx, tool)` (the public `AbstractToolset` signature, 2.38 and 2.68), and that
frame's `ctx` is the call's `RunContext`, holding its `tool_call_id` and `tool_name`. The outermost such
frame of a call of this run is the main agent's call (an inner one belongs to a sub-agent it ran).

A scripted run sets pydantic-ai's `ALLOW_MODEL_REQUESTS` guard, so an agent with no script (usually a
sub-agent a tool delegates to) fails with pydantic-ai's `RuntimeError`; the innermost agent on the way
(`self` of `Agent.run` / `Agent.iter`) is the one that asked. The error names it by what `agents:` takes: the
module attribute(s) holding that very object (`module_attributes`), never pydantic-ai's inferred name.
"""

from __future__ import annotations

import sys
from collections.abc import Container
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from pydantic_ai.agent import AbstractAgent

from agentrig.runtime.history.run_records import RunError
from agentrig.runtime.models.failures import one_line

__all__ = ["GUARD_MESSAGE", "ToolFailure", "UnscriptedAgent", "module_attributes", "tool_failure", "unscripted_agent"]

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


def _model_label(agent: Any) -> str:
    model: Any = getattr(agent, "model", None)
    model_name = model if isinstance(model, str) else getattr(model, "model_name", None)
    system = getattr(model, "system", None)
    if isinstance(model_name, str) and isinstance(system, str) and ":" not in model_name:
        model_name = f"{system}:{model_name}"
    return f" (model {model_name})" if model_name else ""


# Modules that hold agents of their own making, never the user's: not offered as what to script.
_FOREIGN_MODULES = ("agentrig.", "pydantic_ai.", "pydantic.")


def module_attributes(agent: object) -> list[str]:
    """Every `module:attribute` of an imported module that holds `agent` itself: what `agents:` can script.

    pydantic-ai names an unnamed agent after the variable it was run from, often a tool's local variable
    (`specialist_agent = SPECIALISTS[topic]`), which no scenario can name; several agents commonly share a model
    string too. Only a module attribute reaches the very object the tool runs, so those are what is offered."""
    found: list[str] = []
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith(_FOREIGN_MODULES):
            continue
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        found.extend(f"{module_name}:{name}" for name, value in list(namespace.items()) if value is agent)
    return sorted(found)


def _refused_agent(error: BaseException) -> AbstractAgent[Any, Any] | None:
    """The innermost agent on the way of `error` (the one whose request the guard refused)."""
    agent: Any = None
    for local in _frames(error.__traceback__):
        candidate = local.get("self")
        if isinstance(candidate, AbstractAgent):
            agent = candidate
    return agent


@dataclass(frozen=True, slots=True)
class UnscriptedAgent:
    """The model-request guard refused an agent with no script."""

    agent: str
    """`an agent (model provider:name)`."""
    remedy: str
    """What to script it by: its `module:attribute`, or why `agents:` cannot reach it."""


def unscripted_agent(error: BaseException) -> UnscriptedAgent | None:
    """The refused agent when `error` is the model-request guard refusing one, else None."""
    if not isinstance(error, RuntimeError) or GUARD_MESSAGE not in str(error):
        return None
    agent = _refused_agent(error)
    attributes = module_attributes(agent) if agent is not None else []
    if attributes:
        first, *others = attributes
        also = f" (or as {', '.join(f'`{spec}`' for spec in others)}: the same agent)" if others else ""
        remedy = f"script it under `agents:` as `{first}`{also}"
    else:
        name = getattr(agent, "name", None)
        called = f" (pydantic-ai calls it {name!r})" if name else ""
        remedy = (
            f"no module attribute holds it{called}, so `agents:` (module:attribute) cannot script it:"
            " make it a module attribute and script that"
        )
    return UnscriptedAgent(agent="an agent" + _model_label(agent), remedy=remedy)


_NO_REQUESTS = "a scripted run sends no model request"


def tool_failure(error: BaseException, call_ids: Container[str]) -> ToolFailure | None:
    """The call of this run (`call_ids`) whose tool raised `error`, with the run's error naming the tool."""
    for local in _frames(error.__traceback__):
        ctx = local.get("ctx")
        call_id = getattr(ctx, "tool_call_id", None)
        tool_name = getattr(ctx, "tool_name", None)
        if isinstance(call_id, str) and call_id in call_ids and "tool_args" in local:
            who = unscripted_agent(error)
            if who is None:
                failure = f"raised {type(error).__name__}: {error}"
            else:
                failure = f"ran {who.agent} with no script, and {_NO_REQUESTS}: {who.remedy}"
            message = one_line(f"tool {tool_name!r} (call {call_id}) {failure}")
            return ToolFailure(tool_call_id=call_id, error=RunError(kind="tool_failed", message=message))
    return None


def unscripted_model_error(error: BaseException) -> RunError | None:
    """The run's error when the guard refused a model outside any tool call."""
    who = unscripted_agent(error)
    if who is None:
        return None
    return RunError(kind="agent_error", message=f"{who.agent} has no script, and {_NO_REQUESTS}: {who.remedy}")
