from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentrig.errors import UsageError
from agentrig.runtime.engine.compaction.controller import (
    SUMMARY_PREFIX,
    CompactionController,
    apply_state,
    calculate_retention_boundary,
    estimate_tokens,
    is_valid_boundary,
    serialize_transcript,
    state_applies,
)
from agentrig.runtime.history.canonical import Message, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.sessions import CompactionRecord


def user(text: str) -> Message:
    return Message.request(TextPart(content=text))


def answer(text: str) -> Message:
    return Message.response(TextPart(content=text))


def tool_exchange(call_id: str, size: int = 40) -> list[Message]:
    return [
        Message.response(ToolCallPart(tool_call_id=call_id, tool_name="read", args={"path": f"{call_id}.txt"})),
        Message.request(ToolReturnPart(tool_call_id=call_id, tool_name="read", content="x" * size)),
    ]


def conversation(turns: int, words: int = 50, *, label: str = "") -> list[Message]:
    history: list[Message] = []
    for turn in range(turns):
        history.append(user(f"{label}question {turn} " + "word " * words))
        history.extend(tool_exchange(f"{label}tc_{turn}"))
        history.append(answer(f"{label}answer {turn} " + "word " * words))
    return history


def pairs_split(history: list[Message], boundary: int) -> bool:
    """True when some call before the boundary is answered after it."""
    head_calls = {p.tool_call_id for m in history[:boundary] for p in m.parts if isinstance(p, ToolCallPart)}
    tail_returns = {p.tool_call_id for m in history[boundary:] for p in m.parts if isinstance(p, ToolReturnPart)}
    return bool(head_calls & tail_returns)


class FakeSummarizer:
    def __init__(self, summary: str = "the user asked questions; tools read files") -> None:
        self.summary = summary
        self.transcripts: list[str] = []

    async def __call__(self, transcript: str) -> str:
        self.transcripts.append(transcript)
        return self.summary


def test_estimate_grows_with_content() -> None:
    assert estimate_tokens(conversation(2)) < estimate_tokens(conversation(4))
    assert estimate_tokens([user("x" * 400)]) >= 100


def test_boundary_never_separates_a_tool_call_from_its_return() -> None:
    history = conversation(6)
    for keep_recent in range(0, estimate_tokens(history), 25):
        boundary = calculate_retention_boundary(history, keep_recent)
        if boundary is not None:
            assert history[boundary].kind == "request"
            assert not pairs_split(history, boundary)


@given(st.lists(st.sampled_from(["user", "tool", "answer"]), min_size=1, max_size=30), st.integers(0, 2000))
def test_boundary_is_safe_for_any_shape(shape: list[str], keep_recent: int) -> None:
    history: list[Message] = []
    for index, kind in enumerate(shape):
        if kind == "user":
            history.append(user(f"u{index}"))
        elif kind == "tool":
            history.extend(tool_exchange(f"c{index}"))
        else:
            history.append(answer(f"a{index}"))
    boundary = calculate_retention_boundary(history, keep_recent)
    if boundary is not None:
        assert 0 < boundary < len(history)
        assert not pairs_split(history, boundary)
        assert not any(isinstance(p, ToolReturnPart) for p in history[boundary].parts)


def test_no_valid_boundary_when_the_only_split_would_cut_a_tool_pair() -> None:
    history = [*tool_exchange("only", size=4000)]
    assert calculate_retention_boundary(history, 0) is None


def test_transcript_names_speakers_tools_and_results() -> None:
    transcript = serialize_transcript([user("hi"), *tool_exchange("tc_9", size=3), answer("done")])
    assert "User: hi" in transcript
    assert 'Assistant called read({"path":"tc_9.txt"}) [tc_9]' in transcript
    assert "Tool result [tc_9]: xxx" in transcript
    assert transcript.endswith("Assistant: done")


def test_below_threshold_is_skipped_and_input_unchanged() -> None:
    history = conversation(2)
    controller = CompactionController(context_window=100_000, summarizer=FakeSummarizer())
    model_input, outcome = asyncio.run(controller.check_and_compact(history))
    assert model_input == history
    assert (outcome.status, outcome.reason) == ("skipped", "below_threshold")
    assert controller.state is None


def test_over_threshold_compacts_older_messages_into_a_summary() -> None:
    history = conversation(8)
    summarizer = FakeSummarizer()
    controller = CompactionController(
        context_window=estimate_tokens(history) // 2, keep_recent=100, summarizer=summarizer
    )
    model_input, outcome = asyncio.run(controller.check_and_compact(history))
    assert outcome.status == "compacted"
    assert outcome.reason == "threshold_exceeded"
    assert model_input[0].parts[0] == TextPart(content=f"{SUMMARY_PREFIX}\n{summarizer.summary}")
    assert model_input[1:] == history[outcome.compacted_messages :]
    assert outcome.tokens_after < outcome.tokens_before
    assert "question 0" in summarizer.transcripts[0]
    assert controller.state is not None
    assert controller.state.compacted_message_count == outcome.compacted_messages
    assert controller.state.count == 1


def test_later_requests_reuse_the_summary_and_a_second_compaction_folds_it_in() -> None:
    history = conversation(8)
    summarizer = FakeSummarizer("first summary")
    controller = CompactionController(
        context_window=estimate_tokens(history) // 2, keep_recent=50, summarizer=summarizer
    )
    first_input, first = asyncio.run(controller.check_and_compact(history))
    assert first.status == "compacted"
    # The next request reuses the stored summary while under the threshold.
    assert apply_state(history, controller.state) == first_input
    longer = [*history, *conversation(8)]
    summarizer.summary = "second summary"
    second_input, second = asyncio.run(controller.check_and_compact(longer))
    assert second.status == "compacted"
    assert "first summary" in summarizer.transcripts[-1]
    assert controller.state is not None
    assert (controller.state.count, controller.state.previous_summary) == (2, "first summary")
    assert second_input[0].parts[0] == TextPart(content=f"{SUMMARY_PREFIX}\nsecond summary")


def test_force_compacts_below_threshold_for_context_overflow() -> None:
    history = conversation(4)
    controller = CompactionController(context_window=10**6, summarizer=FakeSummarizer())
    _, outcome = asyncio.run(controller.check_and_compact(history, force=True))
    assert (outcome.status, outcome.reason) == ("compacted", "context_overflow")


@pytest.mark.parametrize("summary", ["boom", ""])
def test_summary_failure_falls_back_to_the_uncompacted_input(summary: str) -> None:
    async def failing(transcript: str) -> str:
        if summary == "boom":
            raise RuntimeError("model unavailable")
        return summary

    history = conversation(6)
    controller = CompactionController(context_window=10, summarizer=failing)
    model_input, outcome = asyncio.run(controller.check_and_compact(history))
    assert model_input == history
    assert (outcome.status, outcome.reason) == ("failed", "summary_failed")
    assert outcome.tokens_after == outcome.tokens_before == estimate_tokens(history)
    assert controller.state is None


def test_a_split_between_two_requests_is_never_chosen() -> None:
    # A stored tool-results request followed by the new prompt: pydantic-ai merges the two, so a summary
    # standing for everything up to the results would swallow the prompt merged into them.
    history = [
        user("read it " + "word " * 40),
        Message.response(ToolCallPart(tool_call_id="c1", tool_name="read", args={})),
        Message.request(ToolReturnPart(tool_call_id="c1", tool_name="read", content="x" * 200)),
        user("and now?"),
    ]
    assert calculate_retention_boundary(history, 0) is None
    assert not is_valid_boundary(history, 3)


def test_a_tool_retry_prompt_is_kept_with_its_call() -> None:
    history = [
        user("first " + "word " * 40),
        answer("ok"),
        user("call it"),
        Message.response(ToolCallPart(tool_call_id="r1", tool_name="read", args={"path": 1})),
        Message.request(RetryPromptPart(tool_call_id="r1", tool_name="read", content="path must be a string")),
        Message.response(TextPart(content="sorry")),
    ]
    for keep_recent in range(0, 60, 5):
        boundary = calculate_retention_boundary(history, keep_recent)
        assert boundary in (None, 2)


@given(
    st.lists(st.sampled_from(["user", "tool", "retry", "answer", "results"]), min_size=1, max_size=30),
    st.integers(0, 2000),
)
def test_every_chosen_boundary_is_a_valid_boundary(shape: list[str], keep_recent: int) -> None:
    history: list[Message] = []
    for index, kind in enumerate(shape):
        if kind == "user":
            history.append(user(f"u{index}"))
        elif kind == "tool":
            history.extend(tool_exchange(f"c{index}"))
        elif kind == "retry":
            history.append(Message.response(ToolCallPart(tool_call_id=f"r{index}", tool_name="t", args={})))
            history.append(Message.request(RetryPromptPart(tool_call_id=f"r{index}", tool_name="t", content="no")))
        elif kind == "results":  # a dangling return request (e.g. a stored failed turn) before the next prompt
            history.append(Message.request(ToolReturnPart(tool_call_id=f"x{index}", tool_name="t", content="r")))
        else:
            history.append(answer(f"a{index}"))
    boundary = calculate_retention_boundary(history, keep_recent)
    if boundary is not None:
        assert is_valid_boundary(history, boundary)
        assert history[boundary - 1].kind == "response"
        assert not pairs_split(history, boundary)


def test_a_resumed_record_is_the_state_in_force() -> None:
    record = CompactionRecord(
        summary="s",
        compacted_message_count=4,
        tokens_before=90,
        tokens_after=40,
        count=2,
        previous_summary="p",
        created_at="2026-11-30T09:10:00+00:00",
    )
    controller = CompactionController(context_window=1000, summarizer=FakeSummarizer(), state=record)
    assert controller.record == record


def test_a_record_that_no_longer_fits_the_history_is_ignored() -> None:
    history = conversation(3)  # user, call, return, answer per turn
    fitting = CompactionRecord(
        summary="s",
        compacted_message_count=4,
        tokens_before=0,
        tokens_after=0,
        count=1,
        previous_summary=None,
        created_at="",
    )
    assert state_applies(history, fitting)
    assert apply_state(history, fitting)[1:] == history[4:]
    for count in (2, 3, 0, len(history), len(history) + 5):  # a tool return, a response, nothing, everything
        unfit = replace(fitting, compacted_message_count=count)
        assert not state_applies(history, unfit)
        assert apply_state(history, unfit) == history


def test_a_resumed_record_is_used_without_summarizing_again() -> None:
    history = conversation(6)
    summarizer = FakeSummarizer()
    state = CompactionRecord(
        summary="earlier work",
        compacted_message_count=8,
        tokens_before=0,
        tokens_after=0,
        count=1,
        previous_summary=None,
        created_at="",
    )
    controller = CompactionController(context_window=100_000, summarizer=summarizer, state=state)
    model_input, outcome = asyncio.run(controller.check_and_compact(history))
    assert (outcome.status, outcome.reason) == ("skipped", "below_threshold")
    assert model_input == [Message.request(TextPart(content=f"{SUMMARY_PREFIX}\nearlier work")), *history[8:]]
    assert outcome.tokens_before == estimate_tokens(model_input) < estimate_tokens(history)
    assert summarizer.transcripts == []


def test_a_second_compaction_counts_only_the_newly_summarized_messages() -> None:
    history = conversation(8)
    summarizer = FakeSummarizer("first")
    controller = CompactionController(
        context_window=estimate_tokens(history) // 2, keep_recent=50, summarizer=summarizer
    )
    _, first = asyncio.run(controller.check_and_compact(history))
    assert controller.state is not None
    first_count = controller.state.compacted_message_count
    _, second = asyncio.run(controller.check_and_compact([*history, *conversation(8, label="later ")]))
    assert second.status == "compacted"
    assert controller.state.compacted_message_count == first_count + second.compacted_messages
    assert first.compacted_messages == first_count
    # The second summarizer call gets the first summary and only messages not summarized yet.
    assert summarizer.transcripts[1].startswith(f"{SUMMARY_PREFIX}\nfirst\n\n")
    assert "User: question 0 " not in summarizer.transcripts[1]


@pytest.mark.parametrize(("window", "reserve", "keep_recent"), [(100, 100, 0), (100, 60, 40), (10, 0, 20)])
def test_settings_that_leave_no_room_are_a_usage_error(window: int, reserve: int, keep_recent: int) -> None:
    with pytest.raises(UsageError, match="compaction settings leave no room"):
        CompactionController(
            context_window=window, reserve=reserve, keep_recent=keep_recent, summarizer=FakeSummarizer()
        )
