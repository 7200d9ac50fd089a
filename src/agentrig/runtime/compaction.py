"""Context compaction: keep long sessions inside the model's context window.

`CompactionController.check_and_compact(history, force=...)` estimates the tokens of the history
the next request would send. Above `context_window - reserve - keep_recent` it walks back from
the end to a safe split (never between a tool call and its return), serializes the older part to
a plain transcript, asks the model for a summary, and returns the model input
`[summary request] + retained tail`, with an outcome `compacted`, `skipped` or `failed` and a
reason.

What is stored (the compatibility contract's history-policy row): compaction changes the model's
*input* only. The session keeps every message as the authoritative record, plus a
`CompactionRecord` (summary, how many leading messages it replaces, token counts). Later requests
rebuild their input from that record instead of summarizing again, and a new compaction folds the
previous summary into the next one.

Pure canonical code: no pydantic-ai import. The summarizer is injected (the orchestrator passes one
that calls the run's model; scenarios script it with `summary:` steps).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import orjson

from agentrig.runtime.canonical import (
    Message,
    OpaquePart,
    Part,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
)
from agentrig.runtime.records import CompactionOutcome

Summarizer = Callable[[str], Awaitable[str]]
"""Turns a transcript into a summary (calls the model with `SUMMARIZE_PROMPT`)."""

SUMMARIZE_PROMPT = (
    "Summarize the conversation transcript below for your own later use. Keep the user's goals, decisions, "
    "facts learned from tools (file names, values, errors) and open tasks. Be concise; do not invent anything."
)
"""The instruction sent with the transcript. Scripted models recognise a summarize request by it."""

SUMMARY_PREFIX = "[SUMMARY OF EARLIER CONVERSATION]"
"""Starts the text of the request that replaces the compacted messages in the model's input."""

_CHARS_PER_TOKEN = 4
_PART_OVERHEAD_TOKENS = 4
_MESSAGE_OVERHEAD_TOKENS = 3


def _part_chars(part: Part) -> int:
    match part:
        case TextPart() | SystemPromptPart() | ThoughtPart():
            return len(part.content)
        case ToolCallPart():
            args = part.args if isinstance(part.args, str) else orjson.dumps(part.args)
            return len(part.tool_name) + len(args)
        case ToolReturnPart():
            content = part.content if isinstance(part.content, str) else orjson.dumps(part.content)
            return len(content)
        case RetryPromptPart():
            content = part.content if isinstance(part.content, str) else orjson.dumps(part.content)
            return len(content)
        case OpaquePart():
            return len(orjson.dumps(part.data))


def estimate_message_tokens(message: Message) -> int:
    """A provider-independent estimate: about four characters a token, plus a small overhead per part."""
    chars = sum(_part_chars(part) for part in message.parts)
    return _MESSAGE_OVERHEAD_TOKENS + len(message.parts) * _PART_OVERHEAD_TOKENS + -(-chars // _CHARS_PER_TOKEN)


def estimate_tokens(history: Sequence[Message]) -> int:
    """Estimated tokens of a whole history."""
    return sum(estimate_message_tokens(message) for message in history)


def _is_safe_split(history: Sequence[Message], index: int, open_calls: set[str]) -> bool:
    # A split before `index` is safe when the retained tail starts with a request that answers no call
    # (a user turn), and no call made before the split is still waiting for its return after it.
    message = history[index]
    if message.kind != "request" or open_calls:
        return False
    return not any(isinstance(p, ToolReturnPart | RetryPromptPart) and p.tool_call_id for p in message.parts)


def calculate_retention_boundary(history: Sequence[Message], keep_recent: int) -> int | None:
    """Index of the first retained message: the latest safe split that keeps at least `keep_recent` tokens.

    Walks back from the end accumulating tokens; once the tail holds `keep_recent` tokens, continues back to
    the nearest safe split. Returns None when no safe split leaves anything to summarize (boundary 0).
    """
    # Tool calls whose answers lie at or after each index, computed in one backward pass.
    answered_later: set[str] = set()
    open_before: list[set[str]] = [set() for _ in history]
    calls_seen_after: set[str] = set()
    for index in range(len(history) - 1, -1, -1):
        for part in history[index].parts:
            if isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_call_id:
                answered_later.add(part.tool_call_id)
            elif isinstance(part, ToolCallPart):
                calls_seen_after.add(part.tool_call_id)
        # ids answered in history[index:] whose call is not there: splitting at `index` would separate them.
        open_before[index] = answered_later - calls_seen_after
    tail_tokens = 0
    for index in range(len(history) - 1, 0, -1):
        tail_tokens += estimate_message_tokens(history[index])
        if tail_tokens >= keep_recent and _is_safe_split(history, index, open_before[index]):
            return index
    return None


def serialize_transcript(history: Sequence[Message]) -> str:
    """A plain-text transcript of messages, for the summarizer."""
    lines: list[str] = []
    for message in history:
        speaker = "User" if message.kind == "request" else "Assistant"
        for part in message.parts:
            match part:
                case TextPart():
                    lines.append(f"{speaker}: {part.content}")
                case ToolCallPart():
                    args = part.args if isinstance(part.args, str) else orjson.dumps(part.args).decode()
                    lines.append(f"Assistant called {part.tool_name}({args}) [{part.tool_call_id}]")
                case ToolReturnPart():
                    content = part.content if isinstance(part.content, str) else orjson.dumps(part.content).decode()
                    lines.append(f"Tool result [{part.tool_call_id}]: {content}")
                case RetryPromptPart():
                    content = part.content if isinstance(part.content, str) else orjson.dumps(part.content).decode()
                    lines.append(f"Retry requested: {content}")
                case ThoughtPart() | SystemPromptPart() | OpaquePart():
                    continue  # reasoning and system prompts are not part of what happened
    return "\n".join(lines)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionState:
    """The compaction currently in force for a session (mirrors the stored `CompactionRecord`)."""

    summary: str
    """The summary that stands for the first `compacted_message_count` messages."""
    compacted_message_count: int
    """How many leading messages of the stored history the summary replaces in the model's input."""
    tokens_before: int
    """Estimated tokens of the model input before this compaction."""
    tokens_after: int
    """Estimated tokens of the model input after it."""
    count: int
    """How many compactions this session has had."""
    previous_summary: str | None
    """The summary this one replaced, if any."""
    created_at: str
    """When it was made (ISO 8601, UTC)."""


def summary_message(summary: str) -> Message:
    """The request that stands for compacted messages in the model's input."""
    return Message.request(TextPart(content=f"{SUMMARY_PREFIX}\n{summary}"))


def apply_state(history: Sequence[Message], state: CompactionState | None) -> list[Message]:
    """The model input for a stored history under a compaction: the summary, then the messages after it."""
    if state is None or state.compacted_message_count > len(history):
        return list(history)
    return [summary_message(state.summary), *history[state.compacted_message_count :]]


class CompactionController:
    """Decides, per request, whether to compact, and does it. Holds the session's compaction state."""

    def __init__(
        self,
        *,
        context_window: int,
        reserve: int = 0,
        keep_recent: int = 0,
        summarizer: Summarizer,
        state: CompactionState | None = None,
    ) -> None:
        self.context_window = context_window
        self.reserve = reserve
        self.keep_recent = keep_recent
        self.summarizer = summarizer
        self.state = state

    @property
    def threshold(self) -> int:
        """Tokens above which the model input is compacted: `context_window - reserve - keep_recent`."""
        return self.context_window - self.reserve - self.keep_recent

    async def check_and_compact(
        self, history: Sequence[Message], *, force: bool = False
    ) -> tuple[list[Message], CompactionOutcome]:
        """The model input for `history` (the stored, authoritative messages) and what was done.

        `force` compacts whatever the estimate says (the provider answered that the context is too long).
        A summarizer failure falls back to the uncompacted input without failing the request.
        """
        model_input = apply_state(history, self.state)
        tokens_before = estimate_tokens(model_input)
        if not force and tokens_before <= self.threshold:
            return model_input, CompactionOutcome(
                status="skipped", reason="below_threshold", tokens_before=tokens_before, tokens_after=tokens_before
            )
        already = self.state.compacted_message_count if self.state else 0
        boundary = calculate_retention_boundary(history[already:], self.keep_recent)
        if boundary is None:
            return model_input, CompactionOutcome(
                status="skipped", reason="no_valid_boundary", tokens_before=tokens_before, tokens_after=tokens_before
            )
        boundary += already
        older = list(history[already:boundary])
        transcript = serialize_transcript(older)
        if self.state is not None:
            transcript = f"{SUMMARY_PREFIX}\n{self.state.summary}\n\n{transcript}"
        try:
            summary = (await self.summarizer(transcript)).strip()
        except Exception as error:  # any summarizer failure: keep going uncompacted (issue 6)
            return model_input, CompactionOutcome(
                status="failed",
                reason=f"summary_failed: {type(error).__name__}: {error}",
                tokens_before=tokens_before,
                tokens_after=tokens_before,
            )
        if not summary:
            return model_input, CompactionOutcome(
                status="failed",
                reason="summary_failed: empty summary",
                tokens_before=tokens_before,
                tokens_after=tokens_before,
            )
        new_state = CompactionState(
            summary=summary,
            compacted_message_count=boundary,
            tokens_before=tokens_before,
            tokens_after=0,
            count=(self.state.count if self.state else 0) + 1,
            previous_summary=self.state.summary if self.state else None,
            created_at=datetime.now(UTC).isoformat(),
        )
        compacted = apply_state(history, new_state)
        tokens_after = estimate_tokens(compacted)
        self.state = replace(new_state, tokens_after=tokens_after)
        return compacted, CompactionOutcome(
            status="compacted",
            reason="context_overflow" if force else "threshold_exceeded",
            compacted_messages=boundary - already,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
        )
