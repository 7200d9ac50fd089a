"""Decoding one JSON message of any accepted vocabulary into a canonical `Message` (see `wire.py`); the parts are
decoded by `wire_decoding.py`.

The fast path (`decode_plain_message`) fills the message's slots directly, as the part decoders do, and gives up
on anything unusual (`NotPlain`); the checked path (`decode_message`) gives the same result or an error naming the
field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.canonical import Message, SystemPromptPart, TextPart
from agentrig.runtime.history.wire_decoding import PART_DECODERS, decode_opaque, decode_part
from agentrig.runtime.history.wire_errors import BadField, json_type

__all__ = ["NotPlain", "decode_legacy", "decode_message", "decode_plain_message"]

_LEGACY_ROLES = frozenset({"user", "assistant", "system"})
_new = object.__new__
_decoder_for = PART_DECODERS.get


def _slot_setter(field: str) -> Any:
    """The slot descriptor's setter of a `Message` field: it bypasses the frozen `__setattr__`."""
    return vars(Message)[field].__set__


_set_message_kind = _slot_setter("kind")
_set_message_parts = _slot_setter("parts")
_set_message_run_id = _slot_setter("run_id")
_set_message_state = _slot_setter("state")
_set_message_conversation = _slot_setter("conversation_id")
_set_message_metadata = _slot_setter("metadata")
_set_message_attempts = _slot_setter("failed_attempts")
_set_message_workspace = _slot_setter("workspace_ref")


def _raise_part_error(raw_parts: list[Any], where: str, source: str | Path | None) -> NoReturn:
    """Decode the parts again one by one to name the part that failed (the fast path does not track it)."""
    for index, raw in enumerate(raw_parts):
        field = f"{where}.parts[{index}]"
        if type(raw) is not dict:
            raise HistoryFormatError(f"expected a part object, got {json_type(raw)}", path=source, field=field)
        kind = raw.get("part_kind")
        if type(kind) is not str:
            message = "missing" if kind is None else f"expected a string, got {json_type(kind)}"
            raise HistoryFormatError(message, path=source, field=f"{field}.part_kind")
        try:
            decode_part(raw)
        except BadField as bad:
            raise HistoryFormatError(bad.message, path=source, field=f"{field}.{bad.field}") from None
    raise AssertionError("unreachable: every part decoded on the second pass")  # pragma: no cover


class NotPlain(Exception):
    """The fast path met something it does not handle: a legacy entry or a wrong shape."""


def decode_plain_message(item: dict[str, Any]) -> Message:
    """The fast path for a canonical or pydantic-ai message; anything unusual raises for the checked path."""
    kind = item["kind"]
    if kind != "request" and kind != "response":
        raise NotPlain
    raw_parts = item["parts"]
    if type(raw_parts) is not list:
        raise NotPlain
    decoder_for, opaque = _decoder_for, decode_opaque
    parts = tuple([decoder_for(raw["part_kind"], opaque)(raw) for raw in raw_parts])
    run_id = item.get("run_id")
    if run_id is not None and type(run_id) is not str:
        raise NotPlain
    state = item.get("state")
    if state is not None and type(state) is not str:
        raise NotPlain
    conversation_id, metadata = item.get("conversation_id"), item.get("metadata")
    attempts, workspace = item.get("failed_attempts"), item.get("workspace_ref")
    if (
        (conversation_id is not None and type(conversation_id) is not str)
        or (metadata is not None and type(metadata) is not dict)
        or (attempts is not None and type(attempts) is not list)
    ):
        raise NotPlain
    message = _new(Message)
    _set_message_kind(message, kind)
    _set_message_parts(message, parts)
    _set_message_run_id(message, run_id)
    # pydantic-ai writes `state: "complete"` on every message; only the exceptions are worth keeping.
    _set_message_state(message, None if state == "complete" else state)
    _set_message_conversation(message, conversation_id)
    _set_message_metadata(message, metadata)
    _set_message_attempts(message, None if attempts is None else [_kept_attempt(attempt) for attempt in attempts])
    _set_message_workspace(message, workspace)
    return message


_PER_RUN_ATTEMPT_KEYS = frozenset({"timestamp", "duration"})


def _kept_attempt(attempt: Any) -> Any:
    """A failed attempt without its per-run `timestamp` and `duration` (pydantic-ai 2.68+ `ModelRequestAttempt`)."""
    if type(attempt) is not dict:
        return attempt
    return {key: value for key, value in attempt.items() if key not in _PER_RUN_ATTEMPT_KEYS}


def decode_message(item: dict[str, Any], where: str, source: str | Path | None) -> Message:
    """The checked path: the same result as the fast path, or an error naming the field."""
    kind = item["kind"]
    if kind != "request" and kind != "response":
        raise HistoryFormatError(f"expected 'request' or 'response', got {kind!r}", path=source, field=f"{where}.kind")
    raw_parts = item.get("parts")
    if type(raw_parts) is not list:
        raise HistoryFormatError(f"expected a list, got {json_type(raw_parts)}", path=source, field=f"{where}.parts")
    for key in ("run_id", "state", "conversation_id"):
        value = item.get(key)
        if value is not None and type(value) is not str:
            raise HistoryFormatError(
                f"expected a string or null, got {json_type(value)}", path=source, field=f"{where}.{key}"
            )
    for key, kind, name in (("metadata", dict, "an object"), ("failed_attempts", list, "a list")):
        value = item.get(key)
        if value is not None and type(value) is not kind:
            raise HistoryFormatError(
                f"expected {name} or null, got {json_type(value)}", path=source, field=f"{where}.{key}"
            )
    try:
        return decode_plain_message(item)
    except (BadField, KeyError, TypeError):
        _raise_part_error(raw_parts, where, source)


def decode_legacy(item: dict[str, Any], where: str, source: str | Path | None) -> Message:
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
        raise HistoryFormatError(f"expected a string, got {json_type(content)}", path=source, field=f"{where}.content")
    if role == "assistant":
        return Message(kind="response", parts=(TextPart(content=content),))
    if role == "system":
        return Message(kind="request", parts=(SystemPromptPart(content=content),))
    return Message(kind="request", parts=(TextPart(content=content),))
