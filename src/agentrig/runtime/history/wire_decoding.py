"""Decoding one JSON part or message of any accepted vocabulary into canonical values (see `wire.py`).

Loading must stay several times faster than pydantic-ai's own `validate_json` (bench/bench_history.py), which is
why the hot part kinds are built by filling slots directly rather than through the dataclass constructors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from agentrig.runtime.history.canonical import (
    CapabilityPart,
    JsonValue,
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
from agentrig.runtime.history.retry_causes import stored_cause
from agentrig.runtime.history.tinyagent_blocks import image_content
from agentrig.runtime.history.user_content import decode_user_content
from agentrig.runtime.history.wire_errors import BadField, json_type

__all__ = ["PART_DECODERS", "BadField", "decode_opaque", "decode_part", "json_type"]

_TOOL_OUTCOMES = frozenset({"success", "failed", "denied", "interrupted"})


def _required_str(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if type(value) is not str:
        raise BadField(key, f"expected a string, got {json_type(value)}")
    return value


def _optional_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and type(value) is not str:
        raise BadField(key, f"expected a string or null, got {json_type(value)}")
    return value


def _optional_dict(data: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = data.get(key)
    if value is not None and type(value) is not dict:
        raise BadField(key, f"expected an object or null, got {json_type(value)}")
    return value


def _optional_list(data: dict[str, Any], key: str) -> list[Any] | None:
    value = data.get(key)
    if value is not None and type(value) is not list:
        raise BadField(key, f"expected a list or null, got {json_type(value)}")
    return value


def _provider_fields(data: dict[str, Any]) -> tuple[str | None, str | None, dict[str, Any] | None]:
    """A response part's `id`, `provider_name` and `provider_details` (all None in most histories)."""
    part_id, provider_name, details = data.get("id"), data.get("provider_name"), data.get("provider_details")
    if part_id is None and provider_name is None and details is None:
        return None, None, None
    return _optional_str(data, "id"), _optional_str(data, "provider_name"), _optional_dict(data, "provider_details")


def _tool_marks(data: dict[str, Any]) -> tuple[str | None, str | None]:
    """A tool part's `tool_kind` and `ui_visibility` (pydantic-ai 2.38+ and 2.78+; usually both None)."""
    tool_kind, visibility = data.get("tool_kind"), data.get("ui_visibility")
    if tool_kind is None and visibility is None:
        return None, None
    return _optional_str(data, "tool_kind"), _optional_str(data, "ui_visibility")


def _retry_content(data: dict[str, Any]) -> str | list[dict[str, JsonValue]]:
    content = data.get("content")
    if type(content) is str:
        return content
    if type(content) is list and all(type(item) is dict for item in content):
        return _with_shared_inputs(content)
    raise BadField("content", f"expected a string or a list of error objects, got {json_type(content)}")


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
        if not (isinstance(loc, list | tuple) and len(loc) <= 1):
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
# Loading must be >= 5x faster than pydantic-ai's `validate_json` (bench/bench_history.py).
# The frozen dataclasses' generated `__init__` costs about twice as much as filling the slots
# directly, so the hot part kinds are built here by setting their slot descriptors. The values are
# equal to those the constructors build; tests/runtime/test_wire.py proves it for every field.

_new = object.__new__


def _slot_setter(cls: type, field: str) -> Callable[[object, Any], None]:
    """The slot descriptor's setter of a dataclass field: it bypasses the frozen `__setattr__`."""
    return vars(cls)[field].__set__


_set_text_content = _slot_setter(TextPart, "content")
_set_text_id = _slot_setter(TextPart, "id")
_set_text_provider = _slot_setter(TextPart, "provider_name")
_set_text_details = _slot_setter(TextPart, "provider_details")
_set_text_citations = _slot_setter(TextPart, "citations")
_set_text_kind = _slot_setter(TextPart, "part_kind")
_set_call_id = _slot_setter(ToolCallPart, "tool_call_id")
_set_call_name = _slot_setter(ToolCallPart, "tool_name")
_set_call_args = _slot_setter(ToolCallPart, "args")
_set_call_tool_kind = _slot_setter(ToolCallPart, "tool_kind")
_set_call_visibility = _slot_setter(ToolCallPart, "ui_visibility")
_set_call_part_id = _slot_setter(ToolCallPart, "id")
_set_call_provider = _slot_setter(ToolCallPart, "provider_name")
_set_call_details = _slot_setter(ToolCallPart, "provider_details")
_set_call_kind = _slot_setter(ToolCallPart, "part_kind")
_set_return_id = _slot_setter(ToolReturnPart, "tool_call_id")
_set_return_name = _slot_setter(ToolReturnPart, "tool_name")
_set_return_content = _slot_setter(ToolReturnPart, "content")
_set_return_outcome = _slot_setter(ToolReturnPart, "outcome")
_set_return_tool_kind = _slot_setter(ToolReturnPart, "tool_kind")
_set_return_visibility = _slot_setter(ToolReturnPart, "ui_visibility")
_set_return_metadata = _slot_setter(ToolReturnPart, "metadata")
_set_return_digests = _slot_setter(ToolReturnPart, "content_file_digests")
_set_return_kind = _slot_setter(ToolReturnPart, "part_kind")
_set_thought_content = _slot_setter(ThoughtPart, "content")
_set_thought_signature = _slot_setter(ThoughtPart, "signature")
_set_thought_provider = _slot_setter(ThoughtPart, "provider_name")
_set_thought_id = _slot_setter(ThoughtPart, "id")
_set_thought_details = _slot_setter(ThoughtPart, "provider_details")
_set_thought_kind = _slot_setter(ThoughtPart, "part_kind")


def _decode_text(data: dict[str, Any]) -> Part:
    content = data.get("content")
    if type(content) is not str:
        raise BadField("content", f"expected a string, got {json_type(content)}")
    part = _new(TextPart)
    _set_text_content(part, content)
    part_id, provider_name, details = _provider_fields(data)
    _set_text_id(part, part_id)
    _set_text_provider(part, provider_name)
    _set_text_details(part, details)
    _set_text_citations(part, _optional_list(data, "citations"))
    _set_text_kind(part, "text")
    return part


def _decode_user_prompt(data: dict[str, Any]) -> Part:
    # pydantic-ai `UserPromptPart`: plain text is canonical text; a list (text, images, documents, audio) is the
    # canonical user content. agentrig before 0.x kept such a list as an opaque `user-prompt` part: those files
    # hold the same dict and read the same way.
    if type(data.get("content")) is str:
        return _decode_text(data)
    return UserContentPart(content=decode_user_content(data.get("content")))


def _decode_user_content(data: dict[str, Any]) -> Part:
    return UserContentPart(content=decode_user_content(data.get("content")))


def _decode_image(data: dict[str, Any]) -> Part:
    # agentrig before user-content parts kept a tinyagent image block as an opaque `image` part ({url, mime_type}).
    return UserContentPart(content=(image_content(data),))


def _decode_system_prompt(data: dict[str, Any]) -> Part:
    scope = _optional_str(data, "scope")
    return SystemPromptPart(
        content=_required_str(data, "content"),
        dynamic_ref=_optional_str(data, "dynamic_ref"),
        context_id=_optional_str(data, "context_id"),
        scope=None if scope == "conversation" else scope,  # pydantic-ai 2.68+ writes its default on every prompt
        metadata=data.get("metadata"),
    )


def _decode_thought(data: dict[str, Any]) -> Part:
    content = data.get("content")
    signature = data.get("signature")
    provider_name = data.get("provider_name")
    thought_id = data.get("id")
    details = data.get("provider_details")
    if (
        type(content) is not str
        or (signature is not None and type(signature) is not str)
        or (provider_name is not None and type(provider_name) is not str)
        or (thought_id is not None and type(thought_id) is not str)
        or (details is not None and type(details) is not dict)
    ):
        content = _required_str(data, "content")  # raises, naming the field
        signature = _optional_str(data, "signature")
        provider_name = _optional_str(data, "provider_name")
        thought_id = _optional_str(data, "id")
        raise BadField("provider_details", f"expected an object or null, got {json_type(details)}")
    part = _new(ThoughtPart)
    _set_thought_content(part, content)
    _set_thought_signature(part, signature)
    _set_thought_provider(part, provider_name)
    _set_thought_id(part, thought_id)
    _set_thought_details(part, details)
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
    raise BadField("args", f"expected an object or a string, got {json_type(raw)}")


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
    tool_kind, visibility = _tool_marks(data)
    _set_call_tool_kind(part, tool_kind)
    _set_call_visibility(part, visibility)
    part_id, provider_name, details = _provider_fields(data)
    _set_call_part_id(part, part_id)
    _set_call_provider(part, provider_name)
    _set_call_details(part, details)
    _set_call_kind(part, "tool-call")
    return part


def _decode_tool_return(data: dict[str, Any]) -> Part:
    outcome = data.get("outcome") or "success"
    if outcome == "retried":
        # pydantic-ai >= 2.60 writes a tool retry as a tool return with outcome 'retried'.
        content = _retry_content(data)
        tool_kind, visibility = _tool_marks(data)
        return RetryPromptPart(
            content=content,
            tool_name=_optional_str(data, "tool_name"),
            tool_call_id=_required_str(data, "tool_call_id"),
            cause=stored_cause(data.get("retry"), content, tool_bound=True),
            tool_kind=tool_kind,
            ui_visibility=visibility,
        )
    if outcome not in _TOOL_OUTCOMES:
        raise BadField("outcome", f"unknown tool outcome {outcome!r} (known: {', '.join(sorted(_TOOL_OUTCOMES))})")
    if "content" not in data:
        raise BadField("content", "missing")
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
    tool_kind, visibility = _tool_marks(data)
    _set_return_tool_kind(part, tool_kind)
    _set_return_visibility(part, visibility)
    _set_return_metadata(part, data.get("metadata"))
    # An empty record and none load the same way (no mapping is rebuilt as a file), and 2.68+ writes `[]` for any
    # structured content: only a record that names files is kept.
    digests = data.get("content_file_digests")
    _set_return_digests(part, _string_list(data, "content_file_digests") if digests else None)
    _set_return_kind(part, "tool-return")
    return part


def _string_list(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key)
    if type(value) is not list or not all(type(item) is str for item in value):
        raise BadField(key, f"expected a list of strings, got {json_type(value)}")
    return value


def _decode_retry_prompt(data: dict[str, Any]) -> Part:
    tool_name = _optional_str(data, "tool_name")
    content = _retry_content(data)
    # The canonical vocabulary writes a cause its content does not imply as `cause`; pydantic-ai < 2.60 none.
    cause = _optional_str(data, "cause")
    if tool_name is None:
        # An output retry. pydantic-ai < 2.60 gave it a random tool_call_id that references no call;
        # the canonical form keeps none (2.60+ `RetryFeedbackPart` has none either).
        return RetryPromptPart(content=content, cause=cause)
    tool_kind, visibility = _tool_marks(data)
    return RetryPromptPart(
        content=content,
        tool_name=tool_name,
        tool_call_id=_required_str(data, "tool_call_id"),
        cause=cause,
        tool_kind=tool_kind,
        ui_visibility=visibility,
    )


def _decode_retry_feedback(data: dict[str, Any]) -> Part:
    # pydantic-ai >= 2.60 `RetryFeedbackPart`: an output retry, bound to no tool call.
    content = _retry_content(data)
    return RetryPromptPart(content=content, cause=stored_cause(data.get("retry"), content, tool_bound=False))


_CAPABILITY_NOT_DATA = frozenset({"part_kind", "kind", "content", "record_id", "timestamp"})


def _decode_capability(data: dict[str, Any]) -> Part:
    # pydantic-ai >= 2.78 `CapabilityPart`: its timestamp is per run and not kept (docs/canonical-format.md).
    record_id = _optional_str(data, "record_id")
    rest = {key: value for key, value in data.items() if key not in _CAPABILITY_NOT_DATA}
    return CapabilityPart(kind=_required_str(data, "kind"), content=data.get("content"), record_id=record_id, data=rest)


def _decode_opaque(data: dict[str, Any]) -> Part:
    return OpaquePart(part_kind=data["part_kind"], data={k: v for k, v in data.items() if k != "part_kind"})


_PART_DECODERS: dict[str, Callable[[dict[str, Any]], Part]] = {
    "text": _decode_text,
    "user-prompt": _decode_user_prompt,
    "user-content": _decode_user_content,
    "image": _decode_image,
    "system-prompt": _decode_system_prompt,
    "thought": _decode_thought,
    "thinking": _decode_thought,
    "tool-call": _decode_tool_call,
    "tool-return": _decode_tool_return,
    "retry-prompt": _decode_retry_prompt,
    "retry-feedback": _decode_retry_feedback,
    "capability": _decode_capability,
}


def decode_part(data: dict[str, Any]) -> Part:
    """One part of either vocabulary (an unknown kind becomes an `OpaquePart`); `BadField` names a wrong value."""
    return _PART_DECODERS.get(data["part_kind"], _decode_opaque)(data)


PART_DECODERS: Mapping[str, Callable[[dict[str, Any]], Part]] = _PART_DECODERS
"""The decoder of each part kind the canonical model knows, in both vocabularies (`decode_opaque` for the rest)."""

decode_opaque = _decode_opaque
