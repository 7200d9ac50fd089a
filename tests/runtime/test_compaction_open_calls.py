"""The compaction boundary never separates a call from an answer that comes later than the next request.

A deferred call (answered by the host in a later turn) or a call whose return was stored after a new prompt
stays open across requests. The other boundary properties only ever see a call answered by the very next
request, where any split at a user request is safe anyway; these histories keep calls open for a while.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentrig.runtime.engine.compaction.controller import (
    calculate_retention_boundary,
    estimate_tokens,
    is_valid_boundary,
)
from agentrig.runtime.history.canonical import Message, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart

STEPS = st.lists(st.sampled_from(["user", "answer", "open", "close", "retry"]), min_size=1, max_size=40)


def _history(steps: list[str]) -> list[Message]:
    """`open` makes a call that stays unanswered; `close`/`retry` answers the oldest open call, turns later."""
    history: list[Message] = []
    open_calls: list[str] = []
    for index, step in enumerate(steps):
        if step == "open":
            open_calls.append(f"c{index}")
            history.append(Message.response(ToolCallPart(tool_call_id=f"c{index}", tool_name="job", args={"n": index})))
        elif step in ("close", "retry") and open_calls:
            call_id = open_calls.pop(0)
            answer = (
                ToolReturnPart(tool_call_id=call_id, tool_name="job", content="done " * 10)
                if step == "close"
                else RetryPromptPart(tool_call_id=call_id, tool_name="job", content="again " * 10)
            )
            history.append(Message.request(answer))
        elif step == "answer":
            history.append(Message.response(TextPart(content=f"answer {index} " * 5)))
        else:
            history.append(Message.request(TextPart(content=f"question {index} " * 5)))
    return history


def _separated(history: list[Message], boundary: int) -> set[str]:
    """Calls made before the boundary and answered after it."""
    called = {p.tool_call_id for m in history[:boundary] for p in m.parts if isinstance(p, ToolCallPart)}
    answered = {
        p.tool_call_id for m in history[boundary:] for p in m.parts if isinstance(p, ToolReturnPart | RetryPromptPart)
    }
    return called & answered


@given(STEPS)
def test_the_boundary_never_separates_a_call_from_a_later_answer(steps: list[str]) -> None:
    history = _history(steps)
    for keep_recent in range(0, estimate_tokens(history) + 5, 5):  # every boundary the history offers
        boundary = calculate_retention_boundary(history, keep_recent)
        if boundary is not None:
            assert _separated(history, boundary) == set(), (keep_recent, boundary)
    for index in range(len(history)):
        if is_valid_boundary(history, index):
            assert _separated(history, index) == set(), index


def test_a_call_still_open_across_a_user_turn_is_not_split() -> None:
    history = _history(["user", "open", "user", "answer", "user", "close", "answer", "user", "answer"])
    for keep_recent in range(0, 200, 5):
        boundary = calculate_retention_boundary(history, keep_recent)
        assert boundary is None or not _separated(history, boundary), (keep_recent, boundary)
    assert not is_valid_boundary(history, 2)  # after the call, before its return
