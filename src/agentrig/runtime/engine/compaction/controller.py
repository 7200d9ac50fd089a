"""Context compaction: keep long sessions inside the model's context window (docs/compaction.md).

`CompactionController.check_and_compact(history, force=...)` estimates the tokens of the input the next
request would send (~4 characters a token plus a small overhead per part and message: an estimate, not a
tokenizer). Above `context_window - reserve - keep_recent` it walks back from the end to a safe split (a user
request: never between a tool call and its return, never between two requests), serializes the older part to
a plain transcript, asks the model for a summary, and returns the model input `[summary request] + retained
tail`, with an outcome `compacted` / `skipped` (`below_threshold`, `no_valid_boundary`) / `failed`
(`summary_failed`: the request goes on uncompacted).

What is stored (the compatibility contract's history-policy row): compaction changes the model's *input* only.
The session keeps every message as the authoritative record, plus a `CompactionRecord` (summary, how many
leading messages it replaces, token counts). Later requests, and a resumed session (the controller is
seeded with its record), rebuild their input from that record instead of summarizing again; a new compaction folds the
previous summary into the next one. Request scoping (one check per request, one forced compaction and retry
on a context overflow) is the orchestrator's side of the contract.

Pure canonical code: no pydantic-ai import. The summarizer is injected (the orchestrator passes one that calls
the run's model; scenarios script it with `summary:` steps).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Literal

import orjson

from agentrig.errors import UsageError
from agentrig.runtime.history.canonical import (
    CapabilityPart,
    Message,
    OpaquePart,
    Part,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
    UserContentPart,
)
from agentrig.runtime.history.run_records import CompactionOutcome
from agentrig.runtime.history.sessions import CompactionRecord
from agentrig.runtime.history.user_content import describe_prompt

Summarizer = Callable[[str], Awaitable[str]]
"""Turns a transcript into a summary (calls the model with `SUMMARIZE_PROMPT`)."""

SUMMARIZE_PROMPT = (
    "Summarize the conversation transcript below for your own later use. Keep the user's goals, decisions, "
    "facts learned from tools (file names, values, errors) and open tasks. Be concise; do not invent anything."
)
"""The instructions of the summarize request, sent with the transcript."""

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
        case CapabilityPart():  # what the model is shown of it is its content (and a frame around it)
            content = part.content if isinstance(part.content, str) else orjson.dumps(part.content)
            return len(part.kind) + len(content)
        case UserContentPart():
            # The text, and each attachment as its short label: a file's bytes are not text the model reads.
            return len(describe_prompt(part.content) or "")


def estimate_message_tokens(message: Message) -> int:
    """A provider-independent estimate: about four characters a token, plus a small overhead per part."""
    chars = sum(_part_chars(part) for part in message.parts)
    return _MESSAGE_OVERHEAD_TOKENS + len(message.parts) * _PART_OVERHEAD_TOKENS + -(-chars // _CHARS_PER_TOKEN)


def estimate_tokens(history: Sequence[Message]) -> int:
    """Estimated tokens of a whole history."""
    return sum(estimate_message_tokens(message) for message in history)


def _is_safe_split(history: Sequence[Message], index: int, open_calls: set[str]) -> bool:
    # A split before `index` is safe when the retained tail starts with a request that answers no call
    # (a user turn), no call made before the split is still waiting for its return after it, and the message
    # before it is not a request too: pydantic-ai merges consecutive requests (2.38 and 2.68), so a split
    # between two of them would swallow the second (e.g. a new prompt merged into a stored tool-results request).
    message = history[index]
    if message.kind != "request" or open_calls:
        return False
    if index > 0 and history[index - 1].kind == "request":
        return False
    return not any(_answered_call(part) for part in message.parts)


def _answered_call(part: Part) -> str | None:
    """The id of the call `part` answers (a tool return or a tool's retry prompt), else None."""
    if isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_call_id:
        return part.tool_call_id
    return None


def is_valid_boundary(history: Sequence[Message], index: int) -> bool:
    """Whether `history[:index]` can stand behind a summary without separating a call from its answer."""
    if not 0 < index < len(history):
        return False
    answered_in_tail: set[str] = set()
    called_in_tail: set[str] = set()
    for message in history[index:]:
        for part in message.parts:
            if answered := _answered_call(part):
                answered_in_tail.add(answered)
            elif isinstance(part, ToolCallPart):
                called_in_tail.add(part.tool_call_id)
    return _is_safe_split(history, index, answered_in_tail - called_in_tail)


def calculate_retention_boundary(history: Sequence[Message], keep_recent: int) -> int | None:
    """Index of the first retained message: the latest safe split that keeps at least `keep_recent` tokens.

    Walks back from the end accumulating tokens; once the tail holds `keep_recent` tokens, continues back to
    the nearest safe split. Returns None when no safe split leaves anything to summarize (boundary 0).
    One backward pass that stops at the boundary: cost grows with the retained tail, not the whole history.
    """
    # Calls answered in history[index:] whose call is not in it: a split at `index` would separate them.
    open_calls: set[str] = set()
    calls_in_tail: set[str] = set()
    tail_tokens = 0
    for index in range(len(history) - 1, 0, -1):
        message = history[index]
        for part in message.parts:
            if answered := _answered_call(part):
                if answered not in calls_in_tail:
                    open_calls.add(answered)
            elif isinstance(part, ToolCallPart):
                calls_in_tail.add(part.tool_call_id)
                open_calls.discard(part.tool_call_id)
        tail_tokens += estimate_message_tokens(message)
        if tail_tokens >= keep_recent and _is_safe_split(history, index, open_calls):
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
                case UserContentPart():
                    lines.append(f"{speaker}: {describe_prompt(part.content)}")
                case ToolCallPart():
                    args = part.args if isinstance(part.args, str) else orjson.dumps(part.args).decode()
                    lines.append(f"Assistant called {part.tool_name}({args}) [{part.tool_call_id}]")
                case ToolReturnPart():
                    content = part.content if isinstance(part.content, str) else orjson.dumps(part.content).decode()
                    lines.append(f"Tool result [{part.tool_call_id}]: {content}")
                case RetryPromptPart():
                    content = part.content if isinstance(part.content, str) else orjson.dumps(part.content).decode()
                    lines.append(f"Retry requested: {content}")
                case CapabilityPart():
                    content = part.content if isinstance(part.content, str) else orjson.dumps(part.content).decode()
                    lines.append(f"Note ({part.kind}): {content}")
                case ThoughtPart() | SystemPromptPart() | OpaquePart():
                    continue  # reasoning and system prompts are not part of what happened
    return "\n".join(lines)


def summary_message(summary: str) -> Message:
    """The request that stands for compacted messages in the model's input."""
    return Message.request(TextPart(content=f"{SUMMARY_PREFIX}\n{summary}"))


def state_applies(history: Sequence[Message], state: CompactionRecord | None) -> bool:
    """Whether `state` can be used on `history`: its count still falls on a safe split of it.

    A record loaded with a history that was edited, or cleaned differently, may no longer fit; it is then
    ignored (the model gets the full history) rather than cutting a tool call from its answer.
    """
    return state is not None and bool(state.summary) and is_valid_boundary(history, state.compacted_message_count)


def apply_state(history: Sequence[Message], state: CompactionRecord | None) -> list[Message]:
    """The model input for a stored history under a compaction: the summary, then the messages after it.

    The full history when there is no compaction or it does not fit the history (`state_applies`)."""
    if state is None or not state_applies(history, state):
        return list(history)
    return [summary_message(state.summary), *history[state.compacted_message_count :]]


class CompactionController:
    """Decides, per request, whether to compact, and does it. Holds the session's compaction state.

    The orchestrator calls `check_and_compact` once before a request (and once more, forced, when the
    provider answers that the context is too long); the model's tool-call turns inside the request reuse
    that input, so a request is compacted at most once whatever the number of model turns.
    """

    def __init__(
        self,
        *,
        context_window: int,
        reserve: int = 0,
        keep_recent: int = 0,
        summarizer: Summarizer,
        state: CompactionRecord | None = None,
    ) -> None:
        if context_window - reserve - keep_recent <= 0:
            raise UsageError(
                f"compaction settings leave no room: context_window ({context_window}) must exceed"
                f" reserve ({reserve}) + keep_recent ({keep_recent})"
            )
        self.context_window = context_window
        self.reserve = reserve
        self.keep_recent = keep_recent
        self.summarizer = summarizer
        self.state = state
        """The compaction in force (seeded from a resumed session's record), replaced by each new one."""

    @property
    def threshold(self) -> int:
        """Tokens above which the model input is compacted: `context_window - reserve - keep_recent`."""
        return self.context_window - self.reserve - self.keep_recent

    @property
    def record(self) -> CompactionRecord | None:
        """The session's `compaction` record for the state in force."""
        return self.state

    async def check_and_compact(
        self, history: Sequence[Message], *, force: bool = False
    ) -> tuple[list[Message], CompactionOutcome]:
        """The model input for `history` (the stored, authoritative messages) and what was done.

        `force` compacts whatever the estimate says (the provider answered that the context is too long).
        A summarizer failure, or an empty summary, falls back to the current input without failing the request.
        """
        current = self.state if state_applies(history, self.state) else None
        model_input = apply_state(history, current)
        tokens_before = estimate_tokens(model_input)

        def unchanged(
            status: Literal["skipped", "failed"], reason: str, detail: str = ""
        ) -> tuple[list[Message], CompactionOutcome]:
            outcome = CompactionOutcome(
                status=status, reason=reason, tokens_before=tokens_before, tokens_after=tokens_before, detail=detail
            )
            return model_input, outcome

        if not force and tokens_before <= self.threshold:
            return unchanged("skipped", "below_threshold")
        already = current.compacted_message_count if current is not None else 0
        boundary = calculate_retention_boundary(history[already:], self.keep_recent)
        if boundary is None:
            return unchanged("skipped", "no_valid_boundary")
        boundary += already
        transcript = serialize_transcript(history[already:boundary])
        if current is not None:  # a later compaction folds the summary in force into the new one
            transcript = f"{SUMMARY_PREFIX}\n{current.summary}\n\n{transcript}"
        try:
            summary = (await self.summarizer(transcript)).strip()
        except Exception as error:  # any summarizer failure: the request goes on uncompacted
            return unchanged("failed", "summary_failed", f"{type(error).__name__}: {error}")
        if not summary:
            return unchanged("failed", "summary_failed", "the summary was empty")
        previous = self.state  # a record that no longer fits is still the previous summary
        new_state = CompactionRecord(
            summary=summary,
            compacted_message_count=boundary,
            tokens_before=tokens_before,
            tokens_after=0,
            count=(previous.count if previous is not None else 0) + 1,
            previous_summary=previous.summary if previous is not None else None,
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
