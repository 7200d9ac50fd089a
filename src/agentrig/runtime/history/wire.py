"""The wire format: canonical messages <-> JSON, and the one reader for every history vocabulary.

Writing produces the canonical document `{"format": "agentrig.history/1", "messages": [...]}`,
with optional keys left out when they hold their default (a tool return's `outcome: "success"`,
a message's `run_id: null`), so files stay minimal and diff cleanly.

Reading accepts, at the level of parsed JSON and without importing pydantic-ai:

- the tagged canonical document, or a bare list of canonical messages;
- legacy dict messages: `{"content": ..., "role": "user" | "assistant" | "system"}` (no role means
  user) and `{"thought": ...}` entries, which are thoughts rather than messages and are returned
  apart (`history_and_thoughts_from_json`);
- `ModelMessagesTypeAdapter.dump_json` output of any pydantic-ai 2.x release (both retry shapes:
  `retry-prompt` before 2.60, `tool-return` with `outcome: "retried"` and `retry-feedback` from 2.60);
- tinyagent message lists (tunacode's format), converted by `tinyagent_format`.

A part kind the canonical model does not know becomes an `OpaquePart` and is written back
verbatim. A value of the wrong shape raises `HistoryFormatError` naming the field path, for
example `messages[3].parts[1].tool_call_id`. The per-part and per-message decoders live in
`wire_decoding.py`; `pydantic_ai_dicts.to_pydantic_ai_dicts` goes the other way, to dicts that
`ModelMessagesTypeAdapter.validate_python` of a chosen era accepts.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Generator, Iterable
from pathlib import Path
from typing import Any

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history import tinyagent_format
from agentrig.runtime.history.canonical import (
    OPTIONAL_MESSAGE_FIELDS,
    OPTIONAL_PART_FIELDS,
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
from agentrig.runtime.history.message_decoding import NotPlain, decode_legacy, decode_message, decode_plain_message
from agentrig.runtime.history.user_content import encode_user_content
from agentrig.runtime.history.wire_errors import BadField, json_type
from agentrig.runtime.runfolder import jsonio

__all__ = [
    "HISTORY_FORMAT",
    "dumps_history",
    "history_and_thoughts_from_json",
    "history_from_json",
    "history_to_json",
    "loads_history",
    "message_to_json",
    "messages_from_json",
    "no_cyclic_gc",
    "part_to_json",
]

HISTORY_FORMAT = "agentrig.history/1"


def messages_from_json(
    items: object, *, field: str = "", source: str | Path | None = None
) -> tuple[list[Message], list[str]]:
    """Messages and legacy thoughts from a JSON list in any accepted vocabulary.

    `field` names the list in error messages (`messages` gives `messages[3].parts[1]...`).
    """
    if type(items) is not list:
        raise HistoryFormatError(
            f"expected a list of messages, got {json_type(items)}", path=source, field=field or None
        )
    try:
        return [decode_plain_message(item) for item in items], []
    except (NotPlain, BadField, KeyError, TypeError, AttributeError):
        pass  # legacy entries or an error: the checked loop below handles them and names the field
    if tinyagent_format.looks_like_tinyagent(items):  # tinyagent/tunacode messages: role and content blocks
        return tinyagent_format.messages_from_tinyagent(items, field=field, source=source)
    messages: list[Message] = []
    thoughts: list[str] = []
    for index, item in enumerate(items):
        if type(item) is dict and "kind" in item:
            messages.append(decode_message(item, f"{field}[{index}]", source))
        elif type(item) is dict and "thought" in item:
            thought = item["thought"]
            if type(thought) is not str:
                got = json_type(thought)
                raise HistoryFormatError(
                    f"expected a string, got {got}", path=source, field=f"{field}[{index}].thought"
                )
            thoughts.append(thought)
        elif type(item) is dict and "content" in item:
            messages.append(decode_legacy(item, f"{field}[{index}]", source))
        else:
            raise HistoryFormatError(
                f"not a message: expected an object with kind and parts, content, or thought; got {json_type(item)}",
                path=source,
                field=f"{field}[{index}]",
            )
    return messages, thoughts


def history_and_thoughts_from_json(
    data: object, *, source: str | Path | None = None
) -> tuple[list[Message], list[str]]:
    """Messages and legacy `{"thought": ...}` entries from a tagged document or a bare list."""
    with no_cyclic_gc():
        return _history_and_thoughts(data, source)


@contextlib.contextmanager
def no_cyclic_gc() -> Generator[None]:
    """Pause the cyclic garbage collector while a history is built (or converted: `models/conversion.py`).

    Building tens of thousands of small objects triggers a collection every few hundred
    allocations, each scanning everything alive; that tripled load time (bench/bench_history.py).
    The objects built here hold no reference cycles, so nothing is left for the collector to find.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _history_and_thoughts(data: object, source: str | Path | None) -> tuple[list[Message], list[str]]:
    if type(data) is dict:
        if "format" not in data:
            raise HistoryFormatError("not a history document: missing the format tag", path=source, field="format")
        if data["format"] != HISTORY_FORMAT:
            raise HistoryFormatError(
                f"unknown history format {data['format']!r} (this agentrig reads {HISTORY_FORMAT!r})",
                path=source,
                field="format",
            )
        return messages_from_json(data.get("messages"), field="messages", source=source)
    if type(data) is list:
        return messages_from_json(data, source=source)
    raise HistoryFormatError(f"expected a history document or a list of messages, got {json_type(data)}", path=source)


def history_from_json(data: object, *, source: str | Path | None = None) -> list[Message]:
    """Canonical messages from parsed JSON in any accepted form; legacy thought entries are not messages and are skipped
    (`load_session` keeps them as the session's thoughts)."""
    return history_and_thoughts_from_json(data, source=source)[0]


def loads_history(data: bytes | str, *, source: str | Path | None = None) -> list[Message]:
    """Canonical messages from JSON text in any accepted form."""
    with no_cyclic_gc():
        return history_from_json(jsonio.loads(data, source=source), source=source)


# --- writing ---


def _with_optional(data: dict[str, Any], part: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """`data` with each of `names` that is set on `part` (left out when None, so files stay minimal)."""
    for name in names:
        value = getattr(part, name)
        if value is not None:
            data[name] = value
    return data


_TEXT_EXTRAS = OPTIONAL_PART_FIELDS[TextPart]
_CALL_EXTRAS = OPTIONAL_PART_FIELDS[ToolCallPart]
_RETURN_EXTRAS = OPTIONAL_PART_FIELDS[ToolReturnPart]
_RETRY_EXTRAS = OPTIONAL_PART_FIELDS[RetryPromptPart]
_SYSTEM_EXTRAS = OPTIONAL_PART_FIELDS[SystemPromptPart]


def _encode_text(part: Any) -> dict[str, Any]:
    data = {"part_kind": "text", "content": part.content}
    if part.id is None and part.provider_name is None and part.provider_details is None and part.citations is None:
        return data
    return _with_optional(data, part, _TEXT_EXTRAS)


def _encode_user_content(part: Any) -> dict[str, Any]:
    return {"part_kind": "user-content", "content": encode_user_content(part.content)}


def _encode_tool_call(part: Any) -> dict[str, Any]:
    data = {"part_kind": "tool-call", "tool_call_id": part.tool_call_id, "tool_name": part.tool_name, "args": part.args}
    return _with_optional(data, part, _CALL_EXTRAS)


def _encode_tool_return(part: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"part_kind": "tool-return", "tool_call_id": part.tool_call_id}
    if part.tool_name is not None:
        data["tool_name"] = part.tool_name
    data["content"] = part.content
    if part.outcome != "success":
        data["outcome"] = part.outcome
    return _with_optional(data, part, _RETURN_EXTRAS)


def _encode_retry_prompt(part: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"part_kind": "retry-prompt"}
    if part.tool_call_id is not None:
        data["tool_call_id"] = part.tool_call_id
    if part.tool_name is not None:
        data["tool_name"] = part.tool_name
    data["content"] = part.content
    return _with_optional(data, part, _RETRY_EXTRAS)


def _encode_system_prompt(part: Any) -> dict[str, Any]:
    return _with_optional({"part_kind": "system-prompt", "content": part.content}, part, _SYSTEM_EXTRAS)


def _encode_capability(part: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"part_kind": "capability", "kind": part.kind}
    if part.content is not None:
        data["content"] = part.content
    if part.record_id is not None:
        data["record_id"] = part.record_id
    data.update(part.data)
    return data


def _encode_thought(part: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"part_kind": "thought", "content": part.content}
    if part.signature is not None:
        data["signature"] = part.signature
    if part.provider_name is not None:
        data["provider_name"] = part.provider_name
    if part.id is not None:
        data["id"] = part.id
    if part.provider_details is not None:
        data["provider_details"] = part.provider_details
    return data


def _encode_opaque(part: Any) -> dict[str, Any]:
    return {"part_kind": part.part_kind, **part.data}


_PART_ENCODERS: dict[type, Callable[[Any], dict[str, Any]]] = {
    TextPart: _encode_text,
    UserContentPart: _encode_user_content,
    ToolCallPart: _encode_tool_call,
    ToolReturnPart: _encode_tool_return,
    RetryPromptPart: _encode_retry_prompt,
    SystemPromptPart: _encode_system_prompt,
    ThoughtPart: _encode_thought,
    CapabilityPart: _encode_capability,
    OpaquePart: _encode_opaque,
}


def part_to_json(part: Part) -> dict[str, Any]:
    """The canonical JSON object of one part."""
    return _PART_ENCODERS[type(part)](part)


def message_to_json(message: Message) -> dict[str, Any]:
    """The canonical JSON object of one message (`run_id` and the other optional keys only when set)."""
    encoders = _PART_ENCODERS
    data: dict[str, Any] = {"kind": message.kind, "parts": [encoders[type(p)](p) for p in message.parts]}
    return _with_optional(data, message, OPTIONAL_MESSAGE_FIELDS)


def history_to_json(messages: Iterable[Message]) -> dict[str, Any]:
    """The tagged canonical document `{"format": HISTORY_FORMAT, "messages": [...]}`."""
    return {"format": HISTORY_FORMAT, "messages": [message_to_json(m) for m in messages]}


def dumps_history(messages: Iterable[Message], *, pretty: bool = False) -> bytes:
    """The tagged canonical document as JSON bytes."""
    return jsonio.dumps(history_to_json(messages), pretty=pretty)
