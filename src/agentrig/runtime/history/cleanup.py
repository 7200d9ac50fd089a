"""History preparation: the removal contract's loop step 3, as pure functions on canonical messages.

Every function takes a history and returns a new list; nothing is mutated (parts and messages
are frozen). `prepare_history` runs the steps in the contract's order: prune old tool outputs,
the cleanup loop to a fixpoint, drop a trailing request, sanitize for resume.

Words used below: a tool call is *answered* by a tool-return part or a tool-bound retry-prompt
part carrying its `tool_call_id`. A call is *dangling* when the response holding it is not the
last message and the message right after it is not a request answering it. The last response's
calls are the live frontier (pending or deferred calls), which is why they are left alone, as
pydantic-ai does (its `_clean_message_history` exempts the last response too).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from agentrig.runtime.history.canonical import (
    History,
    Message,
    Part,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from agentrig.runtime.runfolder import jsonio

__all__ = [
    "INTERRUPTED_TOOL_RESULT",
    "answered_ids",
    "answered_tool_call_id",
    "close_unanswered_calls",
    "common_prefix_length",
    "dangling_tool_calls",
    "drop_answers_from_failed_call",
    "drop_trailing_request",
    "merge_consecutive_requests",
    "orphaned_tool_answers",
    "prepare_history",
    "prune_old_tool_outputs",
    "remove_dangling_tool_calls",
    "remove_empty_responses",
    "remove_orphaned_tool_returns",
    "run_cleanup_loop",
    "sanitize_history_for_resume",
    "split_at_last_response",
    "with_pause_marks",
]

INTERRUPTED_TOOL_RESULT = "The tool call was interrupted before a result was produced."
"""The content of the return given to a call a run left unanswered (pydantic-ai's own wording)."""

_PRUNED_MARKER = re.compile(r"\[pruned: \d+ chars\]")


def answered_tool_call_id(part: Part) -> str | None:
    """The id of the tool call this part answers (tool return or tool-bound retry prompt), else None."""
    if isinstance(part, ToolReturnPart | RetryPromptPart):
        return part.tool_call_id
    return None


def answered_ids(message: Message) -> set[str]:
    """The ids of the tool calls a message answers."""
    return {tool_call_id for part in message.parts if (tool_call_id := answered_tool_call_id(part)) is not None}


def prune_old_tool_outputs(history: History, *, keep_recent: int) -> list[Message]:
    """Replace the content of all but the `keep_recent` most recent tool returns with `[pruned: N chars]`.

    Ids, names and outcomes stay, so the history keeps its shape and its invariants. N is the length of
    the content as text (JSON for non-string content). Returns already pruned are left as they are, so
    pruning twice changes nothing. Retry prompts are never pruned: they are short and the model needs them.
    """
    if keep_recent < 0:
        raise ValueError(f"keep_recent must be >= 0, got {keep_recent}")
    return_count = sum(isinstance(p, ToolReturnPart) for m in history for p in m.parts)
    to_prune = return_count - keep_recent
    if to_prune <= 0:
        return list(history)
    result: list[Message] = []
    for message in history:
        if to_prune <= 0 or message.kind != "request":
            result.append(message)
            continue
        parts: list[Part] = []
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and to_prune > 0:
                to_prune -= 1
                part = _pruned(part)
            parts.append(part)
        result.append(message.with_parts(parts))
    return result


def _pruned(part: ToolReturnPart) -> ToolReturnPart:
    content = part.content
    if isinstance(content, str) and _PRUNED_MARKER.fullmatch(content):
        return part
    size = len(content) if isinstance(content, str) else len(jsonio.dumps(content).decode())
    return ToolReturnPart(
        tool_call_id=part.tool_call_id,
        tool_name=part.tool_name,
        content=f"[pruned: {size} chars]",
        outcome=part.outcome,
    )


def dangling_tool_calls(history: History) -> Iterator[tuple[int, int, ToolCallPart]]:
    """Message index, part index and part of every dangling tool call (see the module docstring).

    The calls of the last message are the live frontier and never dangling. A call answered later than
    the very next request still dangles: the model would have seen a request without its answer.
    """
    last = len(history) - 1
    for index, message in enumerate(history):
        if message.kind != "response" or index == last:
            continue
        following = history[index + 1]
        answered = answered_ids(following) if following.kind == "request" else set[str]()
        for part_index, part in enumerate(message.parts):
            if isinstance(part, ToolCallPart) and part.tool_call_id not in answered:
                yield index, part_index, part


def orphaned_tool_answers(history: History) -> Iterator[tuple[int, int, ToolReturnPart | RetryPromptPart]]:
    """Message index, part index and part of every tool return or tool retry whose call never appeared earlier."""
    seen_calls: set[str] = set()
    for index, message in enumerate(history):
        for part_index, part in enumerate(message.parts):
            if isinstance(part, ToolCallPart):
                seen_calls.add(part.tool_call_id)
            elif (
                isinstance(part, ToolReturnPart | RetryPromptPart)
                and part.tool_call_id is not None
                and part.tool_call_id not in seen_calls
            ):
                yield index, part_index, part


def _without_parts(history: History, doomed: set[tuple[int, int]]) -> list[Message]:
    """The history without the parts at `doomed` positions; a message that loses all its parts goes too."""
    if not doomed:
        return list(history)
    result: list[Message] = []
    for index, message in enumerate(history):
        parts = [p for part_index, p in enumerate(message.parts) if (index, part_index) not in doomed]
        if len(parts) == len(message.parts):
            result.append(message)
        elif parts:
            result.append(message.with_parts(parts))
    return result


def remove_dangling_tool_calls(history: History) -> list[Message]:
    """Remove dangling tool-call parts; drop a response left empty."""
    return _without_parts(history, {(i, j) for i, j, _ in dangling_tool_calls(history)})


def remove_orphaned_tool_returns(history: History) -> list[Message]:
    """Remove tool returns and tool-bound retry prompts whose call never appeared earlier; drop a request left empty.

    pydantic-ai does the same before every model request (2.38 and 2.68 alike): a provider rejects a
    tool result that answers no call.
    """
    return _without_parts(history, {(i, j) for i, j, _ in orphaned_tool_answers(history)})


def _is_empty_response(message: Message) -> bool:
    return message.kind == "response" and all(isinstance(p, TextPart) and not p.content.strip() for p in message.parts)


def remove_empty_responses(history: History) -> list[Message]:
    """Remove responses with no parts, or with only blank text parts (what a model returns when it says nothing).

    A response holding only a thought is not empty: the thought is content the provider may need back.
    """
    return [m for m in history if not _is_empty_response(m)]


def _is_tool_result(part: Part) -> bool:
    return answered_tool_call_id(part) is not None


def merge_consecutive_requests(history: History) -> list[Message]:
    """Merge each run of consecutive requests into one, keeping every part; drop requests with no parts.

    Tool returns and tool-bound retry prompts come first, then the other parts in their order, as
    pydantic-ai merges them (a provider expects tool results right after the calls). The merged
    message keeps the first request's `run_id`.
    """
    result: list[Message] = []
    pending: list[Message] = []

    def flush() -> None:
        if len(pending) == 1:
            result.append(pending[0])
        elif pending:
            parts = [p for m in pending for p in m.parts]
            ordered = [p for p in parts if _is_tool_result(p)] + [p for p in parts if not _is_tool_result(p)]
            merged = pending[0].with_parts(ordered)
            metadata = _merged_metadata(pending)
            result.append(merged if metadata == merged.metadata else replace(merged, metadata=metadata))
        pending.clear()

    for message in history:
        if message.kind == "request":
            if message.parts:
                pending.append(message)
            continue
        flush()
        result.append(message)
    flush()
    return result


_RESERVED = "__pydantic_ai__"
"""pydantic-ai's own namespace in a message's metadata."""
_PAUSE = "deferred_pause"


def _merged_metadata(requests: list[Message]) -> dict[str, Any] | None:
    """The metadata of requests merged into one, as pydantic-ai 2.78 merges them (`_merged_reserved_metadata`):
    the first request's own keys, the reserved namespaces combined, and the deferred-pause mark only if every
    request had it (an answer or a new message after a pause continues the run)."""
    first = dict(requests[0].metadata or {})
    namespaces = [(m.metadata or {}).get(_RESERVED) for m in requests]
    if not any(isinstance(namespace, dict) for namespace in namespaces):
        return requests[0].metadata
    combined: dict[str, Any] = {}
    for namespace in namespaces:
        if isinstance(namespace, dict):
            combined.update(namespace)
    if not all(isinstance(n, dict) and n.get(_PAUSE) is True for n in namespaces):
        combined.pop(_PAUSE, None)
    if combined:
        first[_RESERVED] = combined
    else:
        first.pop(_RESERVED, None)
    return first or None


def with_pause_marks(history: History) -> list[Message]:
    """The history of a run that paused for deferred calls, its requests after the last response marked as the
    pause's record (`metadata["__pydantic_ai__"]["deferred_pause"]`): pydantic-ai 2.78 writes that mark itself, and a
    history ending on it pauses again when resumed; the canonical form writes it for every engine and release, so
    the same pause has the same history everywhere."""
    last = max((index for index, message in enumerate(history) if message.kind == "response"), default=-1)
    if last < 0:
        return list(history)
    result = list(history[: last + 1])
    for message in history[last + 1 :]:
        metadata = dict(message.metadata or {})
        namespace = metadata.get(_RESERVED)
        metadata[_RESERVED] = {**(namespace if isinstance(namespace, dict) else {}), _PAUSE: True}
        result.append(replace(message, metadata=metadata))
    return result


def run_cleanup_loop(history: History) -> list[Message]:
    """Apply the cleanup steps until nothing changes.

    Steps, in order: dangling tool calls, orphaned tool returns, empty responses, consecutive requests.
    One step can expose work for another (removing a call can empty a response, whose removal makes
    two requests meet), hence the loop. Each pass only removes or merges, so it ends; the bound is a
    safety net, never reached.
    """
    current = list(history)
    for _ in range(len(current) + 2):
        cleaned = merge_consecutive_requests(
            remove_empty_responses(remove_orphaned_tool_returns(remove_dangling_tool_calls(current)))
        )
        if cleaned == current:
            return cleaned
        current = cleaned
    return current  # pragma: no cover


def drop_trailing_request(history: History) -> list[Message]:
    """Drop the last message when it is a request: the new run brings its own request."""
    if history and history[-1].kind == "request":
        return list(history[:-1])
    return list(history)


def sanitize_history_for_resume(history: History) -> list[Message]:
    """Strip system-prompt parts, clear every `run_id`, and drop requests left with no parts.

    The agent adds its own system prompt to each run, and a stale `run_id` would tie the old messages
    to a run that no longer exists (the removal contract's pydantic-specific guard).
    """
    result: list[Message] = []
    for message in history:
        parts = [p for p in message.parts if not isinstance(p, SystemPromptPart)]
        if message.kind == "request" and not parts:
            continue
        if len(parts) == len(message.parts) and message.run_id is None:
            result.append(message)
        else:
            result.append(replace(message, parts=tuple(parts), run_id=None))
    return result


def _without_pending_calls(history: list[Message]) -> list[Message]:
    """Remove the unanswered calls of a final response, which a new prompt would leave dangling."""
    if not history or history[-1].kind != "response" or not history[-1].tool_calls:
        return history
    last = history[-1]
    parts = [p for p in last.parts if not isinstance(p, ToolCallPart)]
    return [*history[:-1], last.with_parts(parts)] if parts else history[:-1]


def prepare_history(
    history: Iterable[Message], *, prune_keep_recent: int | None = None, keep_pending_tool_calls: bool = False
) -> list[Message]:
    """The history a new run starts from (loop contract step 3).

    1. prune old tool outputs (skipped when `prune_keep_recent` is None);
    2. the cleanup loop to a fixpoint;
    3. drop a trailing request;
    4. sanitize for resume.

    Then, unless `keep_pending_tool_calls`, unanswered calls of the final response are removed and the
    cleanup loop runs once more: the new run's prompt would follow them, leaving them dangling
    (pydantic-ai refuses a new prompt after unprocessed tool calls). Keep them to resume deferred calls
    without a prompt.
    """
    prepared = list(history)
    if prune_keep_recent is not None:
        prepared = prune_old_tool_outputs(prepared, keep_recent=prune_keep_recent)
    prepared = drop_trailing_request(run_cleanup_loop(prepared))
    prepared = sanitize_history_for_resume(prepared)
    if not keep_pending_tool_calls:
        prepared = drop_trailing_request(run_cleanup_loop(_without_pending_calls(prepared)))
    return prepared


def close_unanswered_calls(history: History, *, failed_call_id: str | None = None, failure: str = "") -> list[Message]:
    """Give every call that no later request answers an `interrupted` return (`failed` for `failed_call_id`),
    in the request right after its response (a new request when none follows).

    Unlike the cleanup loop, which drops dangling calls, this keeps them: after an abort, a timeout or an
    error the history shows the call and how it ended, and the tool registry (cancelled / failed) agrees.
    """
    answered = {call_id for message in history if message.kind == "request" for call_id in answered_ids(message)}
    result: list[Message] = []
    index = 0
    while index < len(history):
        message = history[index]
        result.append(message)
        index += 1
        missing = (
            [c for c in message.tool_calls if c.tool_call_id not in answered] if message.kind == "response" else []
        )
        if not missing:
            continue
        closing: list[Part] = [
            ToolReturnPart(
                tool_call_id=call.tool_call_id,
                tool_name=call.tool_name,
                content=failure if call.tool_call_id == failed_call_id else INTERRUPTED_TOOL_RESULT,
                outcome="failed" if call.tool_call_id == failed_call_id else "interrupted",
            )
            for call in missing
        ]
        if index < len(history) and history[index].kind == "request":
            following = history[index]
            result.append(following.with_parts([*following.parts, *closing]))
            index += 1
        else:
            result.append(Message.request(*closing))
    return result


def drop_answers_from_failed_call(history: History, failed_call_id: str) -> list[Message]:
    """The history without the answers of `failed_call_id` and of the calls listed after it in its response, so
    that closing the run (`close_unanswered_calls`) marks it failed and them interrupted.

    When one call of a parallel batch fails, what its siblings did by then is timing, and version: the engine
    lets the batch finish and ends the run with the first failing call in call order (`held_failures`); the calls
    before it keep their answers, the calls after it are interrupted whatever they did. The same scenario then
    gives the same history on every run and every pinned version (a golden on it holds)."""
    dropped: set[str] = set()
    for message in history:
        ids = [call.tool_call_id for call in message.tool_calls] if message.kind == "response" else []
        if failed_call_id in ids:
            dropped = set(ids[ids.index(failed_call_id) :])
            break
    if not dropped:
        return list(history)
    return [
        message.with_parts(part for part in message.parts if answered_tool_call_id(part) not in dropped)
        if message.kind == "request" and answered_ids(message) & dropped
        else message
        for message in history
    ]


def common_prefix_length(first: History, second: History) -> int:
    """How many leading messages two histories share."""
    count = 0
    for left, right in zip(first, second, strict=False):
        if left != right:
            break
        count += 1
    return count


def split_at_last_response(history: History) -> tuple[list[Message], list[Message]]:
    """Everything up to the last response, and what follows it (for a deferred resume: the pending calls'
    response ends the head, and the request with the results of the calls that did run is the tail)."""
    for index in range(len(history) - 1, -1, -1):
        if history[index].kind == "response":
            return list(history[: index + 1]), list(history[index + 1 :])
    return list(history), []
