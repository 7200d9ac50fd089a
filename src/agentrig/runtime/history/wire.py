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
  `retry-prompt` before 2.60, `tool-return` with `outcome: "retried"` and `retry-feedback` from 2.60).

A part kind the canonical model does not know becomes an `OpaquePart` and is written back
verbatim. A value of the wrong shape raises `HistoryFormatError` naming the field path, for
example `messages[3].parts[1].tool_call_id`. `to_pydantic_ai_dicts` goes the other way, to dicts
that `ModelMessagesTypeAdapter.validate_python` of a chosen era accepts.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Generator, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, NoReturn

import orjson

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history import jsonio
from agentrig.runtime.history.canonical import (
    JsonValue,
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

__all__ = [
    "HISTORY_FORMAT",
    "dumps_history",
    "history_and_thoughts_from_json",
    "history_from_json",
    "history_to_json",
    "loads_history",
    "message_to_json",
    "messages_from_json",
    "part_to_json",
    "to_pydantic_ai_dicts",
]

HISTORY_FORMAT = "agentrig.history/1"
"""The format tag of canonical history documents. A reader refuses any other tag."""

_TOOL_OUTCOMES = frozenset({"success", "failed", "denied", "interrupted"})
_LEGACY_ROLES = frozenset({"user", "assistant", "system"})


class _BadField(Exception):
    """A part or message value has the wrong shape; `field` is relative to the value being decoded."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _required_str(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if type(value) is not str:
        raise _BadField(key, f"expected a string, got {_json_type(value)}")
    return value


def _optional_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and type(value) is not str:
        raise _BadField(key, f"expected a string or null, got {_json_type(value)}")
    return value


def _retry_content(data: dict[str, Any]) -> str | list[dict[str, JsonValue]]:
    content = data.get("content")
    if type(content) is str:
        return content
    if type(content) is list and all(type(item) is dict for item in content):
        return _with_shared_inputs(content)
    raise _BadField("content", f"expected a string or a list of error objects, got {_json_type(content)}")


def _with_shared_inputs(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Validation error details with the `input` pydantic-ai 2.60+ leaves out restored.

    From 2.60 on, top-level errors (`loc` of length <= 1) after the first omit an `input` equal to the
    first top-level error's (the whole args object, sent once to save tokens). 2.38 writes it on every
    error and fails to load details without it. The canonical form keeps the complete details, so a
    dump of either era reads the same and converts back to both.
    """
    shared: Any = None
    restored: list[dict[str, Any]] | None = None
    for index, error in enumerate(errors):
        loc = error.get("loc")
        if not (isinstance(loc, list | tuple) and len(loc) <= 1):  # pyright: ignore[reportUnknownArgumentType]
            continue
        if "input" in error:
            if shared is None:
                shared = error
        elif shared is not None:
            if restored is None:
                restored = list(errors)
            restored[index] = {**error, "input": shared["input"]}
    return errors if restored is None else restored


# --- reading: one decoder per part_kind, for both the canonical and the pydantic-ai vocabulary ---
#
# Loading must be >= 5x faster than pydantic-ai's `validate_json` (issue 2; bench/bench_history.py).
# The frozen dataclasses' generated `__init__` costs about twice as much as filling the slots
# directly, so the hot part kinds are built here by setting their slot descriptors. The values are
# equal to those the constructors build; tests/runtime/test_wire.py proves it for every field.

_new = object.__new__


def _slot_setter(cls: type, field: str) -> Callable[[object, Any], None]:
    """The slot descriptor's setter of a dataclass field: it bypasses the frozen `__setattr__`."""
    return vars(cls)[field].__set__


_set_text_content = _slot_setter(TextPart, "content")
_set_text_kind = _slot_setter(TextPart, "part_kind")
_set_call_id = _slot_setter(ToolCallPart, "tool_call_id")
_set_call_name = _slot_setter(ToolCallPart, "tool_name")
_set_call_args = _slot_setter(ToolCallPart, "args")
_set_call_kind = _slot_setter(ToolCallPart, "part_kind")
_set_return_id = _slot_setter(ToolReturnPart, "tool_call_id")
_set_return_name = _slot_setter(ToolReturnPart, "tool_name")
_set_return_content = _slot_setter(ToolReturnPart, "content")
_set_return_outcome = _slot_setter(ToolReturnPart, "outcome")
_set_return_kind = _slot_setter(ToolReturnPart, "part_kind")
_set_thought_content = _slot_setter(ThoughtPart, "content")
_set_thought_signature = _slot_setter(ThoughtPart, "signature")
_set_thought_provider = _slot_setter(ThoughtPart, "provider_name")
_set_thought_kind = _slot_setter(ThoughtPart, "part_kind")
_set_message_kind = _slot_setter(Message, "kind")
_set_message_parts = _slot_setter(Message, "parts")
_set_message_run_id = _slot_setter(Message, "run_id")
_set_message_state = _slot_setter(Message, "state")


def _decode_text(data: dict[str, Any]) -> Part:
    content = data.get("content")
    if type(content) is not str:
        raise _BadField("content", f"expected a string, got {_json_type(content)}")
    part = _new(TextPart)
    _set_text_content(part, content)
    _set_text_kind(part, "text")
    return part


def _decode_user_prompt(data: dict[str, Any]) -> Part:
    # pydantic-ai `UserPromptPart`: plain text is canonical text; multi-modal content (a list of text,
    # images, documents) has no canonical form and is kept verbatim.
    if type(data.get("content")) is str:
        return _decode_text(data)
    return _decode_opaque(data)


def _decode_system_prompt(data: dict[str, Any]) -> Part:
    return SystemPromptPart(content=_required_str(data, "content"))


def _decode_thought(data: dict[str, Any]) -> Part:
    content = data.get("content")
    signature = data.get("signature")
    provider_name = data.get("provider_name")
    if (
        type(content) is not str
        or (signature is not None and type(signature) is not str)
        or (provider_name is not None and type(provider_name) is not str)
    ):
        content = _required_str(data, "content")  # raises, naming the field
        signature = _optional_str(data, "signature")
        provider_name = _optional_str(data, "provider_name")
    part = _new(ThoughtPart)
    _set_thought_content(part, content)
    _set_thought_signature(part, signature)
    _set_thought_provider(part, provider_name)
    _set_thought_kind(part, "thought")
    return part


def _decode_args(raw: object) -> dict[str, JsonValue] | str:
    """The canonical form of tool-call args, following pydantic-ai's `ToolCallPart.args_as_dict()`:
    an object stays a dict; None, "" and a string holding a JSON object become a dict; any other
    string (malformed JSON, a list, a bare value, blanks) is kept verbatim instead of being wrapped."""
    if type(raw) is dict:
        return raw
    if raw is None or raw == "":
        return {}
    if type(raw) is str:
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw
        return parsed if type(parsed) is dict else raw
    raise _BadField("args", f"expected an object or a string, got {_json_type(raw)}")


def _decode_tool_call(data: dict[str, Any]) -> Part:
    tool_call_id = data.get("tool_call_id")
    tool_name = data.get("tool_name")
    args = data.get("args")
    if type(tool_call_id) is not str or type(tool_name) is not str or type(args) is not dict:
        # The uncommon shapes (and the errors) take the checked path.
        tool_call_id = _required_str(data, "tool_call_id")
        tool_name = _required_str(data, "tool_name")
        args = _decode_args(args)
    part = _new(ToolCallPart)
    _set_call_id(part, tool_call_id)
    _set_call_name(part, tool_name)
    _set_call_args(part, args)
    _set_call_kind(part, "tool-call")
    return part


def _decode_tool_return(data: dict[str, Any]) -> Part:
    outcome = data.get("outcome") or "success"
    if outcome == "retried":
        # pydantic-ai >= 2.60 writes a tool retry as a tool return with outcome 'retried'.
        return RetryPromptPart(
            content=_retry_content(data),
            tool_name=_optional_str(data, "tool_name"),
            tool_call_id=_required_str(data, "tool_call_id"),
        )
    if outcome not in _TOOL_OUTCOMES:
        raise _BadField("outcome", f"unknown tool outcome {outcome!r} (known: {', '.join(sorted(_TOOL_OUTCOMES))})")
    if "content" not in data:
        raise _BadField("content", "missing")
    tool_call_id = data.get("tool_call_id")
    tool_name = data.get("tool_name")
    if type(tool_call_id) is not str or (tool_name is not None and type(tool_name) is not str):
        tool_call_id = _required_str(data, "tool_call_id")  # raises, naming the field
        tool_name = _optional_str(data, "tool_name")
    part = _new(ToolReturnPart)
    _set_return_id(part, tool_call_id)
    _set_return_name(part, tool_name)
    _set_return_content(part, data["content"])
    _set_return_outcome(part, outcome)
    _set_return_kind(part, "tool-return")
    return part


def _decode_retry_prompt(data: dict[str, Any]) -> Part:
    tool_name = _optional_str(data, "tool_name")
    if tool_name is None:
        # An output retry. pydantic-ai < 2.60 gave it a random tool_call_id that references no call;
        # the canonical form keeps none (2.60+ `RetryFeedbackPart` has none either).
        return RetryPromptPart(content=_retry_content(data))
    return RetryPromptPart(
        content=_retry_content(data), tool_name=tool_name, tool_call_id=_required_str(data, "tool_call_id")
    )


def _decode_retry_feedback(data: dict[str, Any]) -> Part:
    # pydantic-ai >= 2.60 `RetryFeedbackPart`: an output retry, bound to no tool call.
    return RetryPromptPart(content=_retry_content(data))


def _decode_opaque(data: dict[str, Any]) -> Part:
    return OpaquePart(part_kind=data["part_kind"], data={k: v for k, v in data.items() if k != "part_kind"})


_PART_DECODERS: dict[str, Callable[[dict[str, Any]], Part]] = {
    "text": _decode_text,
    "user-prompt": _decode_user_prompt,
    "system-prompt": _decode_system_prompt,
    "thought": _decode_thought,
    "thinking": _decode_thought,
    "tool-call": _decode_tool_call,
    "tool-return": _decode_tool_return,
    "retry-prompt": _decode_retry_prompt,
    "retry-feedback": _decode_retry_feedback,
}


def _decode_part(data: dict[str, Any]) -> Part:
    return _PART_DECODERS.get(data["part_kind"], _decode_opaque)(data)


_decoder_for = _PART_DECODERS.get


def _raise_part_error(raw_parts: list[Any], where: str, source: str | Path | None) -> NoReturn:
    """Decode the parts again one by one to name the part that failed (the fast path does not track it)."""
    for index, raw in enumerate(raw_parts):
        field = f"{where}.parts[{index}]"
        if type(raw) is not dict:
            raise HistoryFormatError(f"expected a part object, got {_json_type(raw)}", path=source, field=field)
        kind = raw.get("part_kind")
        if type(kind) is not str:
            message = "missing" if kind is None else f"expected a string, got {_json_type(kind)}"
            raise HistoryFormatError(message, path=source, field=f"{field}.part_kind")
        try:
            _decode_part(raw)
        except _BadField as bad:
            raise HistoryFormatError(bad.message, path=source, field=f"{field}.{bad.field}") from None
    raise AssertionError("unreachable: every part decoded on the second pass")  # pragma: no cover


class _NotPlain(Exception):
    """The fast path met something it does not handle: a legacy entry or a wrong shape."""


def _decode_plain_message(item: dict[str, Any]) -> Message:
    """The fast path for a canonical or pydantic-ai message; anything unusual raises for the checked path."""
    kind = item["kind"]
    if kind != "request" and kind != "response":
        raise _NotPlain
    raw_parts = item["parts"]
    if type(raw_parts) is not list:
        raise _NotPlain
    decoder_for, opaque = _decoder_for, _decode_opaque
    parts = tuple([decoder_for(raw["part_kind"], opaque)(raw) for raw in raw_parts])
    run_id = item.get("run_id")
    if run_id is not None and type(run_id) is not str:
        raise _NotPlain
    state = item.get("state")
    if state is not None and type(state) is not str:
        raise _NotPlain
    message = _new(Message)
    _set_message_kind(message, kind)
    _set_message_parts(message, parts)
    _set_message_run_id(message, run_id)
    # pydantic-ai writes `state: "complete"` on every message; only the exceptions are worth keeping.
    _set_message_state(message, None if state == "complete" else state)
    return message


def _decode_message(item: dict[str, Any], where: str, source: str | Path | None) -> Message:
    """The checked path: the same result as the fast path, or an error naming the field."""
    kind = item["kind"]
    if kind != "request" and kind != "response":
        raise HistoryFormatError(f"expected 'request' or 'response', got {kind!r}", path=source, field=f"{where}.kind")
    raw_parts = item.get("parts")
    if type(raw_parts) is not list:
        raise HistoryFormatError(f"expected a list, got {_json_type(raw_parts)}", path=source, field=f"{where}.parts")
    for key in ("run_id", "state"):
        value = item.get(key)
        if value is not None and type(value) is not str:
            raise HistoryFormatError(
                f"expected a string or null, got {_json_type(value)}", path=source, field=f"{where}.{key}"
            )
    try:
        return _decode_plain_message(item)
    except (_BadField, KeyError, TypeError):
        _raise_part_error(raw_parts, where, source)


def _decode_legacy(item: dict[str, Any], where: str, source: str | Path | None) -> Message:
    """A legacy `{"content": ..., "role": ...}` message.

    Role user (the default when there is none) and system become requests, assistant a response.
    """
    role = item.get("role", "user")
    if type(role) is not str or role not in _LEGACY_ROLES:
        raise HistoryFormatError(
            f"unknown role {role!r} (known: {', '.join(sorted(_LEGACY_ROLES))})", path=source, field=f"{where}.role"
        )
    content = item["content"]
    if type(content) is not str:
        raise HistoryFormatError(f"expected a string, got {_json_type(content)}", path=source, field=f"{where}.content")
    if role == "assistant":
        return Message(kind="response", parts=(TextPart(content=content),))
    if role == "system":
        return Message(kind="request", parts=(SystemPromptPart(content=content),))
    return Message(kind="request", parts=(TextPart(content=content),))


def messages_from_json(
    items: object, *, field: str = "", source: str | Path | None = None
) -> tuple[list[Message], list[str]]:
    """Messages and legacy thoughts from a JSON list in any accepted vocabulary.

    `field` names the list in error messages (`messages` gives `messages[3].parts[1]...`).
    """
    if type(items) is not list:
        raise HistoryFormatError(
            f"expected a list of messages, got {_json_type(items)}", path=source, field=field or None
        )
    try:
        return [_decode_plain_message(item) for item in items], []
    except (_NotPlain, _BadField, KeyError, TypeError, AttributeError):
        pass  # legacy entries or an error: the checked loop below handles them and names the field
    messages: list[Message] = []
    thoughts: list[str] = []
    for index, item in enumerate(items):
        if type(item) is dict and "kind" in item:
            messages.append(_decode_message(item, f"{field}[{index}]", source))
        elif type(item) is dict and "thought" in item:
            thought = item["thought"]
            if type(thought) is not str:
                got = _json_type(thought)
                raise HistoryFormatError(
                    f"expected a string, got {got}", path=source, field=f"{field}[{index}].thought"
                )
            thoughts.append(thought)
        elif type(item) is dict and "content" in item:
            messages.append(_decode_legacy(item, f"{field}[{index}]", source))
        else:
            raise HistoryFormatError(
                f"not a message: expected an object with kind and parts, content, or thought; got {_json_type(item)}",
                path=source,
                field=f"{field}[{index}]",
            )
    return messages, thoughts


def history_and_thoughts_from_json(
    data: object, *, source: str | Path | None = None
) -> tuple[list[Message], list[str]]:
    """Messages and legacy `{"thought": ...}` entries from a tagged document or a bare list."""
    with _no_cyclic_gc():
        return _history_and_thoughts(data, source)


@contextlib.contextmanager
def _no_cyclic_gc() -> Generator[None]:
    """Pause the cyclic garbage collector while a history is built.

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
    raise HistoryFormatError(f"expected a history document or a list of messages, got {_json_type(data)}", path=source)


def history_from_json(data: object, *, source: str | Path | None = None) -> list[Message]:
    """Canonical messages from parsed JSON in any accepted form; legacy thought entries are not messages and are skipped
    (`load_session` keeps them as the session's thoughts)."""
    return history_and_thoughts_from_json(data, source=source)[0]


def loads_history(data: bytes | str, *, source: str | Path | None = None) -> list[Message]:
    """Canonical messages from JSON text in any accepted form."""
    with _no_cyclic_gc():
        return history_from_json(jsonio.loads(data, source=source), source=source)


# --- writing ---


def _encode_text(part: Any) -> dict[str, Any]:
    return {"part_kind": "text", "content": part.content}


def _encode_tool_call(part: Any) -> dict[str, Any]:
    return {"part_kind": "tool-call", "tool_call_id": part.tool_call_id, "tool_name": part.tool_name, "args": part.args}


def _encode_tool_return(part: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"part_kind": "tool-return", "tool_call_id": part.tool_call_id}
    if part.tool_name is not None:
        data["tool_name"] = part.tool_name
    data["content"] = part.content
    if part.outcome != "success":
        data["outcome"] = part.outcome
    return data


def _encode_retry_prompt(part: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"part_kind": "retry-prompt"}
    if part.tool_call_id is not None:
        data["tool_call_id"] = part.tool_call_id
    if part.tool_name is not None:
        data["tool_name"] = part.tool_name
    data["content"] = part.content
    return data


def _encode_system_prompt(part: Any) -> dict[str, Any]:
    return {"part_kind": "system-prompt", "content": part.content}


def _encode_thought(part: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"part_kind": "thought", "content": part.content}
    if part.signature is not None:
        data["signature"] = part.signature
    if part.provider_name is not None:
        data["provider_name"] = part.provider_name
    return data


def _encode_opaque(part: Any) -> dict[str, Any]:
    return {"part_kind": part.part_kind, **part.data}


_PART_ENCODERS: dict[type, Callable[[Any], dict[str, Any]]] = {
    TextPart: _encode_text,
    ToolCallPart: _encode_tool_call,
    ToolReturnPart: _encode_tool_return,
    RetryPromptPart: _encode_retry_prompt,
    SystemPromptPart: _encode_system_prompt,
    ThoughtPart: _encode_thought,
    OpaquePart: _encode_opaque,
}


def part_to_json(part: Part) -> dict[str, Any]:
    """The canonical JSON object of one part."""
    return _PART_ENCODERS[type(part)](part)


def message_to_json(message: Message) -> dict[str, Any]:
    """The canonical JSON object of one message (`run_id` only when set)."""
    encoders = _PART_ENCODERS
    data: dict[str, Any] = {"kind": message.kind, "parts": [encoders[type(p)](p) for p in message.parts]}
    if message.run_id is not None:
        data["run_id"] = message.run_id
    if message.state is not None:
        data["state"] = message.state
    return data


def history_to_json(messages: Iterable[Message]) -> dict[str, Any]:
    """The tagged canonical document `{"format": HISTORY_FORMAT, "messages": [...]}`."""
    return {"format": HISTORY_FORMAT, "messages": [message_to_json(m) for m in messages]}


def dumps_history(messages: Iterable[Message], *, pretty: bool = False) -> bytes:
    """The tagged canonical document as JSON bytes."""
    return jsonio.dumps(history_to_json(messages), pretty=pretty)


# --- the other direction: dicts for pydantic-ai's ModelMessagesTypeAdapter.validate_python ---

RetryShape = Literal["retry-prompt", "retried"]
"""`retry-prompt`: pydantic-ai < 2.60 (`RetryPromptPart`); `retried`: 2.60+ (`ToolReturnPart(outcome='retried')`
for tool retries, `RetryFeedbackPart` for output retries)."""


def _retry_cause(content: object) -> str:
    # A list of error details comes from a ValidationError; a string from ModelRetry.
    return "validation_error" if isinstance(content, list) else "model_retry"


def _request_part_dict(part: Part, tool_names: dict[str, str], retry_shape: RetryShape) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"part_kind": "user-prompt", "content": part.content}
    if isinstance(part, SystemPromptPart):
        return {"part_kind": "system-prompt", "content": part.content}
    if isinstance(part, ToolReturnPart):
        return {
            "part_kind": "tool-return",
            # pydantic-ai requires a tool name; the seed wire format may omit it, so take the call's.
            "tool_name": part.tool_name or tool_names.get(part.tool_call_id, ""),
            "content": part.content,
            "tool_call_id": part.tool_call_id,
            "outcome": part.outcome,
        }
    if isinstance(part, RetryPromptPart):
        tool_name = part.tool_name or (tool_names.get(part.tool_call_id) if part.tool_call_id else None)
        if retry_shape == "retry-prompt":
            data: dict[str, Any] = {"part_kind": "retry-prompt", "content": part.content, "tool_name": tool_name}
            if part.tool_call_id is not None:
                data["tool_call_id"] = part.tool_call_id
            return data
        retry = {"cause": _retry_cause(part.content)}
        if tool_name is None or part.tool_call_id is None:
            return {"part_kind": "retry-feedback", "content": part.content, "retry": retry}
        return {
            "part_kind": "tool-return",
            "tool_name": tool_name,
            "content": part.content,
            "tool_call_id": part.tool_call_id,
            "outcome": "retried",
            "retry": retry,
        }
    if isinstance(part, OpaquePart):
        return {"part_kind": part.part_kind, **part.data}
    raise ValueError(f"a {part.part_kind} part cannot be in a request")


def _response_part_dict(part: Part) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"part_kind": "text", "content": part.content}
    if isinstance(part, ThoughtPart):
        return {
            "part_kind": "thinking",
            "content": part.content,
            "signature": part.signature,
            "provider_name": part.provider_name,
        }
    if isinstance(part, ToolCallPart):
        return {
            "part_kind": "tool-call",
            "tool_name": part.tool_name,
            "args": part.args,
            "tool_call_id": part.tool_call_id,
        }
    if isinstance(part, OpaquePart):
        return {"part_kind": part.part_kind, **part.data}
    raise ValueError(f"a {part.part_kind} part cannot be in a response")


def to_pydantic_ai_dicts(
    messages: Sequence[Message], *, retry_shape: RetryShape, start: int = 0
) -> list[dict[str, Any]]:
    """pydantic-ai message dicts for `ModelMessagesTypeAdapter.validate_python` of the era `retry_shape` names.

    With `start`, only `messages[start:]` are converted (the earlier ones still name the tools their calls used).
    A part that cannot stand in its message (a tool call in a request, a tool return in a response)
    raises `ValueError`: the canonical reader never produces one, so it is a bug in the caller.
    """
    tool_names: dict[str, str] = {}
    result: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.kind == "response":
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    tool_names[part.tool_call_id] = part.tool_name
            if index < start:
                continue
            parts = [_response_part_dict(p) for p in message.parts]
        elif index < start:
            continue
        else:
            parts = [_request_part_dict(p, tool_names, retry_shape) for p in message.parts]
        data: dict[str, Any] = {"kind": message.kind, "parts": parts}
        if message.run_id is not None:
            data["run_id"] = message.run_id
        if message.state is not None:
            data["state"] = message.state
        result.append(data)
    return result
