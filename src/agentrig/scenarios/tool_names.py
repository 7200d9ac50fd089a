"""Scripted calls to tools the agent does not have (`fetsh` for `fetch`).

pydantic-ai answers a call to an unknown tool with a retry prompt ("Unknown tool name: 'fetsh'. Available
tools: 'fetch'") and the run goes on, so a typo in a script would pass unnoticed. A scenario *expects* such a
call when its `tool_calls` expectations (of any turn, or of the scenario) name it: the tool in `used`,
`sequence` or `counts` (above zero), or the call's id in `status`. Otherwise, for a self-contained agent
(whose tools are the YAML `tools:`) the file is invalid (`agentrig validate` and `agentrig run` report it,
exit 2), and for a user's agent `agentrig run` fails the scenario (its tools are known only once it runs).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from yaml.nodes import Node

from agentrig.errors import ScenarioError
from agentrig.scenarios._yaml_source import find_node, format_field_path, node_position
from agentrig.scenarios.model import Scenario, ScriptedToolCall, ToolCallsExpectation
from agentrig.scenarios.ui_model import frontend_tool_names

__all__ = ["ScriptedCall", "did_you_mean", "expects_call", "scripted_calls", "unknown_tool_call_errors"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedCall:
    """One scripted tool call and where it is in the scenario."""

    call: ScriptedToolCall
    field_path: tuple[str | int, ...]
    """e.g. `("turns", 0, "model", 1, "tool_calls", 0)`."""


def scripted_calls(scenario: Scenario) -> Iterator[ScriptedCall]:
    """Every tool call of the scenario's script, in order."""
    for turn_index, turn in enumerate(scenario.turns):
        for step_index, step in enumerate(turn.model):
            for call_index, call in enumerate(step.tool_calls):
                path = ("turns", turn_index, "model", step_index, "tool_calls", call_index)
                yield ScriptedCall(call=call, field_path=path)


def _tool_call_expectations(scenario: Scenario) -> Iterator[ToolCallsExpectation]:
    for expectation in (*(turn.expect.tool_calls for turn in scenario.turns), scenario.expect.tool_calls):
        if expectation is not None:
            yield expectation


def expects_call(scenario: Scenario, *, tool_name: str, tool_call_id: str | None) -> bool:
    """Whether the scenario's expectations name this call (so a call to an unknown tool is intended)."""
    for expectation in _tool_call_expectations(scenario):
        if tool_name in expectation.used or expectation.counts.get(tool_name, 0) > 0:
            return True
        if any(matcher.name == tool_name for matcher in expectation.sequence):
            return True
        if tool_call_id is not None and tool_call_id in expectation.status:
            return True
    return False


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """` (did you mean 'fetch'?)`, or `` when nothing is close."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_tool_call_errors(
    scenario: Scenario, *, path: Path, node: Node | None, prefix: tuple[str | int, ...] = ()
) -> list[ScenarioError]:
    """For a self-contained agent: one error per scripted call to a tool not in `tools:` that no expectation
    names (`node` is the scenario's YAML node, for line and column). A user's agent (`agent:`) is not imported
    here; `agentrig run` checks its calls."""
    if scenario.agent is not None:
        return []
    known = set(scenario.tools)
    if scenario.output is not None:
        known.update(scenario.output.tool_names)  # output tools are tools the model calls (expectations count them)
    errors: list[ScenarioError] = []
    for scripted in scripted_calls(scenario):
        call = scripted.call
        if call.name in known or expects_call(scenario, tool_name=call.name, tool_call_id=call.id):
            continue
        request = scenario.turns[int(scripted.field_path[1])].ui
        frontend = frontend_tool_names(request, path.parent) if request is not None else frozenset[str]()
        if frontend is None or call.name in frontend:  # a UI turn's frontend tools are the agent's in that turn
            continue
        field_path = (*prefix, *scripted.field_path, "name")
        line = column = None
        if node is not None:
            line, column = node_position(find_node(node, (*scripted.field_path, "name")).node)
        available = ", ".join(repr(name) for name in sorted(known)) or "none"
        errors.append(
            ScenarioError(
                f"the agent has no tool {call.name!r}{did_you_mean(call.name, known)}; its tools: {available} "
                "(a call meant to reach no tool is named in a tool_calls expectation)",
                path=path,
                line=line,
                column=column,
                field=format_field_path(field_path),
            )
        )
    return errors
