"""The tool call registry: legal lifecycle moves, records, agreement with the history."""

from __future__ import annotations

import pytest

from agentrig.runtime.history.canonical import Message, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.invariants import check_invariants
from agentrig.runtime.history.run_records import ToolCallStatusRecord
from agentrig.runtime.history.tool_registry import IllegalToolTransition, ToolCallRegistry


def call(tool_call_id: str, name: str = "bash") -> ToolCallPart:
    return ToolCallPart(tool_call_id=tool_call_id, tool_name=name, args={"x": 1})


def test_registry_records_complete_fail_cancel_in_sync_with_tool_returns() -> None:
    """Removal contract checklist: tool registry records complete/fail/cancel updates in sync with tool return parts."""
    registry = ToolCallRegistry()
    history = [
        Message.request(TextPart(content="go")),
        Message.response(call("ok"), call("bad", "read"), call("slow")),
    ]
    for part in history[1].tool_calls:
        registry.register(part.tool_call_id, part.tool_name, part.args)
    registry.start("ok")
    registry.start("bad")
    registry.start("slow")
    assert [r.status for r in registry.records()] == ["running", "running", "running"]
    registry.complete("ok")
    registry.fail("bad", "ModelRetry: file not found")
    registry.cancel("slow", "aborted by the user")
    history.append(
        Message.request(
            ToolReturnPart(tool_call_id="ok", tool_name="bash", content="a.txt"),
            RetryPromptPart(content="file not found", tool_name="read", tool_call_id="bad"),
            ToolReturnPart(tool_call_id="slow", tool_name="bash", content="interrupted", outcome="interrupted"),
        )
    )
    assert registry.records() == [
        ToolCallStatusRecord(tool_call_id="ok", tool_name="bash", status="completed"),
        ToolCallStatusRecord(tool_call_id="bad", tool_name="read", status="failed"),
        ToolCallStatusRecord(tool_call_id="slow", tool_name="bash", status="cancelled"),
    ]
    assert registry.error("bad") == "ModelRetry: file not found"
    assert registry.error("slow") == "aborted by the user"
    assert registry.check_against_history(history) == []
    assert check_invariants(history, registry=registry) == []


def test_disagreements_are_reported_where_they_are() -> None:
    registry = ToolCallRegistry()
    for tool_call_id in ("done", "retried", "lost", "running"):
        registry.register(tool_call_id, "bash", {})
        registry.start(tool_call_id)
    registry.complete("done")
    registry.complete("retried")
    registry.fail("lost", "boom")
    registry.register("phantom", "bash", {})
    history = [
        Message.response(call("done"), call("retried"), call("lost"), call("running"), call("unregistered")),
        Message.request(
            ToolReturnPart(tool_call_id="done", content="x", outcome="interrupted"),
            RetryPromptPart(content="again", tool_name="bash", tool_call_id="retried"),
            ToolReturnPart(tool_call_id="running", content="x"),
        ),
    ]
    violations = registry.check_against_history(history)
    assert [(v.message_index, v.part_index, v.message) for v in violations] == [
        (0, 4, "tool call 'unregistered' is not in the registry"),
        (1, 0, "registry says 'done' is completed, but it is answered by a tool return with outcome interrupted"),
        (1, 1, "registry says 'retried' is completed, but it is answered by a retry prompt"),
        (0, 2, "registry says 'lost' is failed, but it has no answer"),
        (1, 2, "registry says 'running' is running, but it is answered by a tool return with outcome success"),
        (None, None, "registered tool call 'phantom' has no tool-call part in the history"),
    ]
    assert {v.code for v in violations} == {"registry_matches_parts"}
    assert check_invariants(history, registry=registry, only=["no_consecutive_requests"]) == []
    assert check_invariants(history, registry=registry)[-1].location == "registry"


def test_a_cancelled_call_may_have_no_answer_and_a_failed_one_a_failed_return() -> None:
    registry = ToolCallRegistry()
    registry.register("a", "bash", {})
    registry.cancel("a", "timeout")  # cancelled before it ran
    registry.register("b", "bash", "raw")
    registry.fail("b", "invalid arguments")  # rejected before it ran
    history = [
        Message.response(call("a"), call("b")),
        Message.request(ToolReturnPart(tool_call_id="b", content="invalid", outcome="failed")),
    ]
    assert registry.check_against_history(history) == []


@pytest.mark.parametrize(
    ("moves", "expected"),
    [
        (["start"], "cannot start tool call 'c': it is not registered"),
        (["register", "register"], "tool call 'c' is already registered"),
        (["register", "complete"], "cannot complete tool call 'c': it is registered"),
        (["register", "start", "start"], "cannot start tool call 'c': it is running"),
        (["register", "start", "complete", "complete"], "cannot complete tool call 'c': it is completed"),
        (["register", "cancel", "complete"], "cannot complete tool call 'c': it is cancelled"),
        (["register", "start", "fail", "cancel"], "cannot cancel tool call 'c': it is failed"),
    ],
)
def test_illegal_transitions_raise(moves: list[str], expected: str) -> None:
    registry = ToolCallRegistry()
    actions = {
        "register": lambda: registry.register("c", "bash", {}),
        "start": lambda: registry.start("c"),
        "complete": lambda: registry.complete("c"),
        "fail": lambda: registry.fail("c", "e"),
        "cancel": lambda: registry.cancel("c", "r"),
    }
    for move in moves[:-1]:
        actions[move]()
    with pytest.raises(IllegalToolTransition, match=f"^{expected}$"):
        actions[moves[-1]]()
    assert issubclass(IllegalToolTransition, ValueError)


def test_status_records_order_and_clear() -> None:
    registry = ToolCallRegistry()
    assert registry.status("x") is None
    registry.register("z", "b", {})
    registry.register("a", "b", {})
    assert [r.tool_call_id for r in registry.records()] == ["z", "a"]
    assert registry.status("a") == "registered"
    assert "a" in registry
    assert len(registry) == 2
    registry.clear()
    assert registry.records() == []
    registry.register("z", "b", {})  # ids are free again after a reset
