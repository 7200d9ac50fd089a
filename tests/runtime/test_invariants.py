"""Invariants: every violation reported with its location, nothing repaired."""

from __future__ import annotations

from typing import get_args

import pytest

from agentrig.runtime.history.canonical import (
    Message,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from agentrig.runtime.history.invariants import check_invariants
from agentrig.runtime.history.violations import INVARIANT_NAMES, Violation
from agentrig.scenarios.model import InvariantName


def call(tool_call_id: str) -> ToolCallPart:
    return ToolCallPart(tool_call_id=tool_call_id, tool_name="bash", args={})


def answer(tool_call_id: str) -> ToolReturnPart:
    return ToolReturnPart(tool_call_id=tool_call_id, tool_name="bash", content="ok")


def test_codes_are_the_scenario_invariant_names() -> None:
    assert get_args(InvariantName) == INVARIANT_NAMES


def test_a_clean_history_has_no_violation() -> None:
    history = [
        Message.request(TextPart(content="go")),
        Message.response(call("a"), call("b")),
        Message.request(answer("a"), RetryPromptPart(content="again", tool_name="bash", tool_call_id="b")),
        Message.response(call("c")),  # the live frontier: pending calls are not dangling
    ]
    assert check_invariants(history) == []


def test_every_violation_is_reported_with_its_location() -> None:
    history = [
        Message.request(SystemPromptPart(content="sys"), TextPart(content="go")),
        Message.response(call("a"), call("b")),
        Message.request(answer("a")),
        Message.request(answer("ghost"), RetryPromptPart(content="x", tool_name="bash", tool_call_id="ghost2")),
        Message.response(call("a")),
        Message.request(answer("a")),
        Message.response(TextPart(content="done")),
    ]
    before = list(history)
    violations = check_invariants(history)
    assert history == before  # never repaired
    assert [(v.code, v.message_index, v.part_index) for v in violations] == [
        ("no_persisted_system_prompt", 0, 0),
        ("no_dangling_tool_calls", 1, 1),
        ("no_consecutive_requests", 3, None),
        ("no_orphaned_tool_returns", 3, 0),
        ("no_orphaned_tool_returns", 3, 1),
        ("no_duplicate_tool_call_ids", 4, 0),
        ("no_duplicate_tool_call_ids", 5, 0),
    ]
    assert violations[1].message == "tool call 'b' (bash) is not answered by the next request"
    assert violations[1].location == "message[1].parts[1]"
    assert violations[2].location == "message[3]"
    assert violations[3].message == "tool return for 'ghost' answers no earlier tool call"
    assert violations[4].message == "retry prompt for 'ghost2' answers no earlier tool call"
    assert violations[5].message == "second tool call 'a' (first at message[1].parts[0])"
    assert violations[6].message == "second answer to tool call 'a' (first at message[2].parts[0])"


def test_a_call_answered_only_after_an_intervening_message_is_dangling() -> None:
    history = [Message.response(call("a")), Message.response(TextPart(content="x")), Message.request(answer("a"))]
    assert [v.code for v in check_invariants(history)] == ["no_dangling_tool_calls"]


def test_only_limits_the_codes_and_rejects_unknown_ones() -> None:
    history = [Message.request(SystemPromptPart(content="s")), Message.request(TextPart(content="x"))]
    assert [v.code for v in check_invariants(history, only=["no_consecutive_requests"])] == ["no_consecutive_requests"]
    assert check_invariants(history, only=[]) == []
    with pytest.raises(ValueError, match="unknown invariant 'nope'"):
        check_invariants(history, only=["nope"])


def test_violation_is_a_frozen_value() -> None:
    violation = Violation(code="no_consecutive_requests", message="m", message_index=None, part_index=None)
    assert violation.location == "registry"
    with pytest.raises(AttributeError):
        violation.code = "no_dangling_tool_calls"  # pyright: ignore[reportAttributeAccessIssue]


def test_a_prompt_may_follow_a_request_of_tool_returns_alone_and_nothing_else_may() -> None:
    # How pydantic-ai stores a run that ended with the output tool's return, then the next run's prompt.
    ended_a_run = [
        Message.request(TextPart(content="go")),
        Message.response(call("out")),
        Message.request(answer("out")),
        Message.request(TextPart(content="next")),
        Message.response(TextPart(content="done")),
    ]
    assert check_invariants(ended_a_run) == []

    prompt_after_prompt = [Message.request(TextPart(content="go")), Message.request(TextPart(content="again"))]
    results_after_results = [
        Message.response(call("a"), call("b")),
        Message.request(answer("a")),
        Message.request(answer("b")),
    ]
    results_after_retry = [
        Message.response(call("a")),
        Message.request(RetryPromptPart(content="again", tool_name="bash", tool_call_id="a")),
        Message.request(TextPart(content="next")),
    ]
    for history, index in ((prompt_after_prompt, 1), (results_after_results, 2), (results_after_retry, 2)):
        codes = [(v.code, v.message_index) for v in check_invariants(history, only=["no_consecutive_requests"])]
        assert codes == [("no_consecutive_requests", index)], history
