from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentrig.runtime.canonical import Message, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.compaction import (
    SUMMARY_PREFIX,
    CompactionController,
    apply_state,
    calculate_retention_boundary,
    estimate_tokens,
    serialize_transcript,
)


def user(text: str) -> Message:
    return Message.request(TextPart(content=text))


def answer(text: str) -> Message:
    return Message.response(TextPart(content=text))


def tool_exchange(call_id: str, size: int = 40) -> list[Message]:
    return [
        Message.response(ToolCallPart(tool_call_id=call_id, tool_name="read", args={"path": f"{call_id}.txt"})),
        Message.request(ToolReturnPart(tool_call_id=call_id, tool_name="read", content="x" * size)),
    ]


def conversation(turns: int, words: int = 50) -> list[Message]:
    history: list[Message] = []
    for turn in range(turns):
        history.append(user(f"question {turn} " + "word " * words))
        history.extend(tool_exchange(f"tc_{turn}"))
        history.append(answer(f"answer {turn} " + "word " * words))
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
    assert outcome.status == "failed"
    assert outcome.reason.startswith("summary_failed")
    assert controller.state is None
