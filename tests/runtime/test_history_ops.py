"""History preparation: prune, the cleanup loop, trailing request, sanitize, prepare_history."""

from __future__ import annotations

import pytest
from hypothesis import given

from agentrig.runtime.history.canonical import (
    Message,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
)
from agentrig.runtime.history.cleanup import (
    drop_trailing_request,
    merge_consecutive_requests,
    prepare_history,
    prune_old_tool_outputs,
    remove_dangling_tool_calls,
    remove_empty_responses,
    remove_orphaned_tool_returns,
    run_cleanup_loop,
    sanitize_history_for_resume,
)
from agentrig.runtime.history.invariants import check_invariants
from tests.runtime.history_strategies import conversations


def call(tool_call_id: str, name: str = "bash") -> ToolCallPart:
    return ToolCallPart(tool_call_id=tool_call_id, tool_name=name, args={"command": "ls"})


def result(tool_call_id: str, content: object = "out") -> ToolReturnPart:
    return ToolReturnPart(tool_call_id=tool_call_id, tool_name="bash", content=content)


def user(text: str) -> Message:
    return Message.request(TextPart(content=text))


def say(text: str) -> Message:
    return Message.response(TextPart(content=text))


# --- prune ---


def test_prune_keeps_the_most_recent_returns_and_every_id() -> None:
    history = [
        user("go"),
        Message.response(call("a"), call("b")),
        Message.request(result("a", "x" * 1234), result("b", {"k": [1, 2]})),
        Message.response(call("c")),
        Message.request(result("c", "recent")),
        say("done"),
    ]
    pruned = prune_old_tool_outputs(history, keep_recent=1)
    assert pruned[2].parts == (
        ToolReturnPart(tool_call_id="a", tool_name="bash", content="[pruned: 1234 chars]"),
        ToolReturnPart(tool_call_id="b", tool_name="bash", content="[pruned: 11 chars]"),  # compact JSON
    )
    assert pruned[4] == history[4]
    assert [m.kind for m in pruned] == [m.kind for m in history]
    assert history[2].parts[0] == result("a", "x" * 1234)  # the input is not mutated
    assert prune_old_tool_outputs(pruned, keep_recent=1) == pruned
    assert prune_old_tool_outputs(history, keep_recent=3) == history
    assert prune_old_tool_outputs(history, keep_recent=0)[4].parts[0] == result("c", "[pruned: 6 chars]")


def test_prune_leaves_retry_prompts_and_outcomes_alone() -> None:
    retry = RetryPromptPart(content="again", tool_name="bash", tool_call_id="a")
    failed = ToolReturnPart(tool_call_id="b", content="boom", outcome="failed")
    history = [Message.response(call("a"), call("b")), Message.request(retry, failed)]
    assert prune_old_tool_outputs(history, keep_recent=0)[1].parts == (
        retry,
        ToolReturnPart(tool_call_id="b", content="[pruned: 4 chars]", outcome="failed"),
    )


def test_prune_rejects_a_negative_count() -> None:
    with pytest.raises(ValueError, match="keep_recent"):
        prune_old_tool_outputs([], keep_recent=-1)


# --- the cleanup steps ---


def test_dangling_calls_are_removed_except_in_the_last_response() -> None:
    history = [
        user("go"),
        Message.response(TextPart(content="let me look"), call("a"), call("b")),
        Message.request(result("a")),
        Message.response(call("c")),
        user("never mind"),
        Message.response(call("d")),
    ]
    assert remove_dangling_tool_calls(history) == [
        user("go"),
        Message.response(TextPart(content="let me look"), call("a")),
        Message.request(result("a")),
        user("never mind"),
        Message.response(call("d")),
    ]


def test_a_call_followed_by_a_response_is_dangling() -> None:
    history = [user("go"), Message.response(call("a")), say("[INTERRUPTED]")]
    assert remove_dangling_tool_calls(history) == [user("go"), say("[INTERRUPTED]")]


def test_orphaned_returns_are_removed() -> None:
    retry = RetryPromptPart(content="again", tool_name="bash", tool_call_id="ghost2")
    output_retry = RetryPromptPart(content="bad output")
    history = [
        Message.request(result("ghost"), TextPart(content="hi")),
        Message.response(call("a")),
        Message.request(result("a"), retry, output_retry),
        Message.request(result("ghost3")),
    ]
    assert remove_orphaned_tool_returns(history) == [
        user("hi"),
        Message.response(call("a")),
        Message.request(result("a"), output_retry),
    ]


def test_empty_responses_are_removed_but_thoughts_count_as_content() -> None:
    thought = Message.response(ThoughtPart(content="hmm"))
    history = [user("a"), Message.response(), say("  "), thought, say("ok")]
    assert remove_empty_responses(history) == [user("a"), thought, say("ok")]


def test_consecutive_requests_merge_with_tool_results_first() -> None:
    history = [
        Message.response(call("a"), call("b")),
        Message.request(result("a"), run_id="r1"),
        Message.request(TextPart(content="steer"), result("b")),
        Message.request(),
        Message.request(TextPart(content="more")),
        say("ok"),
        Message.request(),
    ]
    assert merge_consecutive_requests(history) == [
        Message.response(call("a"), call("b")),
        Message.request(result("a"), result("b"), TextPart(content="steer"), TextPart(content="more"), run_id="r1"),
        say("ok"),
    ]


def test_cleanup_loop_reaches_the_fixpoint_across_steps() -> None:
    # Removing the dangling call empties the response; removing it makes two requests meet; merging them
    # brings the return of 'b' right after the call of 'b'.
    history = [
        user("one"),
        Message.response(call("a")),
        user("two"),
        Message.response(call("b")),
        Message.request(result("b")),
        say("done"),
    ]
    assert run_cleanup_loop(history) == [
        Message.request(TextPart(content="one"), TextPart(content="two")),
        Message.response(call("b")),
        Message.request(result("b")),
        say("done"),
    ]


@given(conversations)
def test_cleanup_loop_is_idempotent_and_leaves_no_violation(history: list[Message]) -> None:
    cleaned = run_cleanup_loop(history)
    assert run_cleanup_loop(cleaned) == cleaned
    codes = ["no_dangling_tool_calls", "no_orphaned_tool_returns", "no_consecutive_requests"]
    assert check_invariants(cleaned, only=codes) == []
    assert not any(m.kind == "response" and not m.parts for m in cleaned)
    # Nothing but tool parts of unanswerable calls, returns of unknown calls and blank responses is lost.
    kept_text = [p for m in cleaned for p in m.parts if isinstance(p, TextPart) and m.kind == "request"]
    assert kept_text == [p for m in history for p in m.parts if isinstance(p, TextPart) and m.kind == "request"]


# --- trailing request, sanitize, prepare ---


def test_drop_trailing_request() -> None:
    assert drop_trailing_request([user("a"), say("b"), user("c")]) == [user("a"), say("b")]
    assert drop_trailing_request([user("a"), say("b")]) == [user("a"), say("b")]
    assert drop_trailing_request([]) == []


def test_sanitize_strips_system_prompts_and_run_ids() -> None:
    history = [
        Message.request(SystemPromptPart(content="sys"), TextPart(content="hi"), run_id="r"),
        Message.response(TextPart(content="yo"), run_id="r"),
        Message.request(SystemPromptPart(content="sys2")),
        say("bye"),
    ]
    assert sanitize_history_for_resume(history) == [user("hi"), say("yo"), say("bye")]


def test_prepare_history_prunes_and_sanitizes_before_a_run() -> None:
    """Removal contract checklist: the request loop still prunes and sanitizes history before a run."""
    history = [
        Message.request(SystemPromptPart(content="You are terse."), TextPart(content="list files"), run_id="r1"),
        Message.response(call("a"), run_id="r1"),
        Message.request(result("a", "a.txt\n" * 100), run_id="r1"),
        Message.response(call("b"), call("lost"), run_id="r1"),
        Message.request(result("b", "b.txt"), result("ghost"), run_id="r1"),
        Message.response(TextPart(content="Two files."), run_id="r1"),
        Message.response(),
        Message.request(TextPart(content="unanswered prompt of an aborted turn"), run_id="r2"),
    ]
    # Pruning comes first, so the orphaned 'ghost' return still counts as one of the 2 most recent.
    prepared = prepare_history(history, prune_keep_recent=2)
    assert prepared == [
        user("list files"),
        Message.response(call("a")),
        Message.request(result("a", "[pruned: 600 chars]")),
        Message.response(call("b")),
        Message.request(result("b", "b.txt")),
        say("Two files."),
    ]
    assert check_invariants(prepared) == []
    assert prepare_history(prepared, prune_keep_recent=2) == prepared
    assert prepare_history(history)[2] == Message.request(result("a", "a.txt\n" * 100))  # no pruning without a count


def test_prepare_history_closes_the_pending_calls_of_the_last_response_unless_asked_to_keep_them() -> None:
    history = [user("go"), Message.response(TextPart(content="checking"), call("a"))]
    assert prepare_history(history) == [user("go"), say("checking")]
    assert prepare_history(history, keep_pending_tool_calls=True) == history
    assert prepare_history([user("go"), Message.response(call("a"))]) == []
