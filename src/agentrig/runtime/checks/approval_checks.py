"""The check that fails an approval whose edited arguments the tool rejects.

`approvals: {ID: {args: {...}}}` approves a call with replaced arguments. When the tool's schema rejects
them, pydantic-ai does not fail the run: it answers the call with a retry prompt (the validation errors) and
the model goes on, so a scripted scenario would pass with the tool never run. The check reads that retry in
the turn's new messages and fails, unless the scenario's `tool_calls.status` (of any turn, or of the
scenario) names the call: then the retry is what the scenario tests.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from agentrig.runtime.history.canonical import RetryPromptPart
from agentrig.runtime.history.run_records import Check, TurnRecord
from agentrig.runtime.runfolder import jsonio
from agentrig.scenarios.model import ApprovalDecision, Scenario, ToolCallsExpectation

__all__ = ["approval_args_checks"]


def _status_expectations(scenario: Scenario) -> Iterator[ToolCallsExpectation]:
    for expectation in (*(turn.expect.tool_calls for turn in scenario.turns), scenario.expect.tool_calls):
        if expectation is not None:
            yield expectation


def approval_args_checks(scenario: Scenario, turns: Sequence[TurnRecord]) -> list[Check]:
    """One check per approval with edited `args`: failed when the tool answered them with a retry, unless expected."""
    expected_ids = {call_id for expectation in _status_expectations(scenario) for call_id in expectation.status}
    checks: list[Check] = []
    for turn in turns:
        approvals = scenario.turns[turn.index].approvals if turn.index < len(scenario.turns) else None
        for call_id, decision in (approvals or {}).items():
            if not isinstance(decision, ApprovalDecision) or decision.args is None:
                continue
            retries = [
                part
                for message in turn.new_messages
                for part in message.parts
                if isinstance(part, RetryPromptPart) and part.tool_call_id == call_id
            ]
            if not retries:
                checks.append(_check(turn, call_id, decision, passed=True, actual="accepted", detail=""))
                continue
            retry = retries[0]
            told = retry.content if isinstance(retry.content, str) else jsonio.dumps(retry.content).decode()
            expected = call_id in expected_ids
            detail = (
                f"expected: the scenario's tool_calls status names {call_id}"
                if expected
                else f"{retry.tool_name or 'the tool'} rejected the approval's args and the model was asked to retry: "
                f"{told} (expect the retry with tool_calls: {{status: {{{call_id}: failed}}}})"
            )
            checks.append(_check(turn, call_id, decision, passed=expected, actual="retried", detail=detail))
    return checks


def _check(
    turn: TurnRecord, call_id: str, decision: ApprovalDecision, *, passed: bool, actual: str, detail: str
) -> Check:
    return Check(
        name=f"turn {turn.index + 1}: approval of {call_id}: the tool accepts the edited args",
        passed=passed,
        expected=dict(decision.args or {}),
        actual=actual,
        detail=detail,
    )
