"""The check that fails a scripted call to a tool the agent does not have (`fetsh` for `fetch`).

pydantic-ai does not fail such a call: it answers it with a retry prompt, "Unknown tool name: 'fetsh'.
Available tools: 'fetch'" (the same words in every supported version, before and after 2.60's retry
parts), and the scripted model goes on as if the tool had run. The canonical history keeps that retry,
so the check reads it there: a retry answering one of the script's calls with that message fails the
scenario, unless the scenario's expectations name the call (`agentrig.scenarios.tool_names`). The scripts of
sub-agents (`agents:`) are checked the same way, in the histories of their runs.
Against a real model nothing is checked: a model that invents a tool name is behaviour, not a typo.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from agentrig.runtime.history.canonical import Message, RetryPromptPart
from agentrig.runtime.history.run_records import Check
from agentrig.scenarios.model import Scenario
from agentrig.scenarios.tool_names import did_you_mean, expects_call, scripted_calls

__all__ = ["UNKNOWN_TOOL_MESSAGE", "SubAgentHistory", "unknown_tool_checks"]

UNKNOWN_TOOL_MESSAGE = "Unknown tool name: "
"""How pydantic-ai's retry prompt for a call to a tool the agent does not have begins."""

_AVAILABLE = re.compile(r"Available tools: (.*)$")
_QUOTED = re.compile(r"'([^']*)'")


def _unknown_tool_retries(history: Sequence[Message], call_ids: set[str]) -> Iterator[RetryPromptPart]:
    for message in history:
        for part in message.parts:
            if (
                isinstance(part, RetryPromptPart)
                and isinstance(part.content, str)
                and part.content.startswith(UNKNOWN_TOOL_MESSAGE)
                and part.tool_call_id in call_ids
            ):
                yield part


class SubAgentHistory(Protocol):
    """One run of a scripted sub-agent, as the engine reports it (`SubAgentRun`)."""

    @property
    def spec(self) -> str: ...
    @property
    def messages(self) -> Sequence[Message]: ...


def unknown_tool_checks(
    scenario: Scenario,
    history: Sequence[Message],
    *,
    scripted: bool,
    subagent_runs: Sequence[SubAgentHistory] = (),
) -> list[Check]:
    """One check per scripted call pydantic-ai answered with "Unknown tool name": failed unless expected.

    The calls of the scenario's script are read in the main history; the calls of each `agents:` script in
    the histories of that sub-agent's runs (a sub-agent's typo is as silent as the main agent's)."""
    if not scripted:
        return []
    call_ids = {scripted_call.call.id for scripted_call in scripted_calls(scenario)}
    checks = _checks(scenario, _unknown_tool_retries(history, call_ids), label="scenario", expectable=True)
    for spec, script in scenario.agents.items():
        sub_call_ids = {call.id for step in script.model for call in step.tool_calls}
        retries = {
            (retry.tool_call_id, retry.content if isinstance(retry.content, str) else ""): retry
            for run in subagent_runs
            if run.spec == spec
            for retry in _unknown_tool_retries(run.messages, sub_call_ids)
        }  # a run's history is recorded as its last request saw it; each retry counts once
        # The tool_calls expectations describe the scenario's agent, so they cannot make a sub-agent's call intended.
        checks.extend(_checks(scenario, retries.values(), label=f"agent {spec}", expectable=False))
    return checks


def _checks(scenario: Scenario, retries: Iterable[RetryPromptPart], *, label: str, expectable: bool) -> list[Check]:
    checks: list[Check] = []
    for retry in retries:
        name = retry.tool_name or ""
        available_text = _AVAILABLE.search(retry.content if isinstance(retry.content, str) else "")
        available = _QUOTED.findall(available_text.group(1)) if available_text else []
        expected = expectable and expects_call(scenario, tool_name=name, tool_call_id=retry.tool_call_id)
        detail = (
            "expected: the scenario's tool_calls expectations name this call"
            if expected
            else f"the agent has no tool {name!r}{did_you_mean(name, available)}; the model was told: {retry.content}"
        )
        checks.append(
            Check(
                name=f"{label}: tool call {retry.tool_call_id} names a tool the agent has",
                passed=expected,
                expected=list(available),
                actual=name,
                detail=detail,
            )
        )
    return checks
