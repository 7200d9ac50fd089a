"""Canonical messages -> dicts that pydantic-ai's `ModelMessagesTypeAdapter.validate_python` accepts, for the
retry shape of a chosen era (no pydantic-ai import: the conversion layer validates the dicts)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from agentrig.runtime.history import tinyagent_format
from agentrig.runtime.history.canonical import (
    CapabilityPart,
    FileContent,
    Message,
    OpaquePart,
    Part,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
    UrlContent,
    UserContent,
    UserContentPart,
)
from agentrig.runtime.history.retry_causes import implied_cause

__all__ = ["RetryShape", "capability_dict", "to_pydantic_ai_dicts", "user_prompt_dict"]

RetryShape = Literal["retry-prompt", "retried"]
"""`retry-prompt`: pydantic-ai < 2.60 (`RetryPromptPart`); `retried`: 2.60+ (`ToolReturnPart(outcome='retried')`
for tool retries, `RetryFeedbackPart` for output retries)."""


def _with_set(data: dict[str, Any], part: object, names: tuple[str, ...]) -> dict[str, Any]:
    """`data` with each of `names` that `part` has set (None stays out: pydantic-ai's default)."""
    for name in names:
        value = getattr(part, name)
        if value is not None:
            data[name] = value
    return data


_TOOL_MARKS = ("tool_kind", "ui_visibility")
_RESPONSE_PART_EXTRAS = ("id", "provider_name", "provider_details")


def _user_content_item(item: UserContent) -> Any:
    """One item of a multi-modal `UserPromptPart`, for `validate_python` (bytes stay bytes: only `validate_json`
    decodes base64). The media type is always given: pydantic-ai 2.38 cannot dump a URL whose type it cannot infer."""
    if isinstance(item, str):
        return item
    if isinstance(item, FileContent):
        data: dict[str, Any] = {"kind": "binary", "data": item.data, "media_type": item.media_type}
        if item.identifier is not None:
            data["identifier"] = item.identifier
        if item.vendor_metadata is not None:
            data["vendor_metadata"] = item.vendor_metadata
        return data
    if isinstance(item, UrlContent):
        data = {"kind": item.kind, "url": item.url, "force_download": item.force_download}
        if item.media_type is not None:
            data["media_type"] = item.media_type
        if item.identifier is not None:
            data["identifier"] = item.identifier
        if item.vendor_metadata is not None:
            data["vendor_metadata"] = item.vendor_metadata
        return data
    return {"kind": item.kind, **item.data}


def user_prompt_dict(part: UserContentPart) -> dict[str, Any]:
    """pydantic-ai's `UserPromptPart` of a canonical user-content part."""
    return {"part_kind": "user-prompt", "content": [_user_content_item(item) for item in part.content]}


def _request_part_dict(part: Part, tool_names: dict[str, str], retry_shape: RetryShape) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"part_kind": "user-prompt", "content": part.content}
    if isinstance(part, UserContentPart):
        return user_prompt_dict(part)
    if isinstance(part, SystemPromptPart):
        system = {"part_kind": "system-prompt", "content": part.content}
        return _with_set(system, part, ("dynamic_ref", "context_id", "scope", "metadata"))
    if isinstance(part, ToolReturnPart):
        data: dict[str, Any] = {
            "part_kind": "tool-return",
            # pydantic-ai requires a tool name; the seed wire format may omit it, so take the call's.
            "tool_name": part.tool_name or tool_names.get(part.tool_call_id, ""),
            "content": part.content,
            "tool_call_id": part.tool_call_id,
            "outcome": part.outcome,
        }
        return _with_set(data, part, (*_TOOL_MARKS, "metadata", "content_file_digests"))
    if isinstance(part, RetryPromptPart):
        tool_name = part.tool_name or (tool_names.get(part.tool_call_id) if part.tool_call_id else None)
        if retry_shape == "retry-prompt":  # < 2.60: no cause, no tool kind
            data = {"part_kind": "retry-prompt", "content": part.content, "tool_name": tool_name}
            if part.tool_call_id is not None:
                data["tool_call_id"] = part.tool_call_id
            return data
        tool_bound = tool_name is not None and part.tool_call_id is not None
        retry = {"cause": part.cause or implied_cause(part.content, tool_bound=tool_bound)}
        if not tool_bound:
            return {"part_kind": "retry-feedback", "content": part.content, "retry": retry}
        data = {
            "part_kind": "tool-return",
            "tool_name": tool_name,
            "content": part.content,
            "tool_call_id": part.tool_call_id,
            "outcome": "retried",
            "retry": retry,
        }
        return _with_set(data, part, _TOOL_MARKS)
    if isinstance(part, CapabilityPart):
        return capability_dict(part)
    if isinstance(part, OpaquePart) and part.part_kind == tinyagent_format.IMAGE_PART_KIND:
        return tinyagent_format.image_to_pydantic_ai(part)
    if isinstance(part, OpaquePart):
        return {"part_kind": part.part_kind, **part.data}
    raise ValueError(f"a {part.part_kind} part cannot be in a request")


def capability_dict(part: CapabilityPart) -> dict[str, Any]:
    """pydantic-ai's `CapabilityPart` dict of a canonical one (2.78+; earlier releases cannot validate it). A part
    without a `record_id` gets a new one from pydantic-ai, as a newly created part does."""
    data: dict[str, Any] = {"part_kind": "capability", **part.data, "kind": part.kind}
    if part.content is not None:
        data["content"] = part.content
    if part.record_id is not None:
        data["record_id"] = part.record_id
    return data


def _response_part_dict(part: Part) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return _with_set({"part_kind": "text", "content": part.content}, part, (*_RESPONSE_PART_EXTRAS, "citations"))
    if isinstance(part, ThoughtPart):
        return {
            "part_kind": "thinking",
            "content": part.content,
            "signature": part.signature,
            "provider_name": part.provider_name,
            "id": part.id,
            "provider_details": part.provider_details,
        }
    if isinstance(part, ToolCallPart):
        call = {
            "part_kind": "tool-call",
            "tool_name": part.tool_name,
            "args": part.args,
            "tool_call_id": part.tool_call_id,
        }
        return _with_set(call, part, (*_TOOL_MARKS, *_RESPONSE_PART_EXTRAS))
    if isinstance(part, OpaquePart):
        return {"part_kind": part.part_kind, **part.data}
    raise ValueError(f"a {part.part_kind} part cannot be in a response")


def to_pydantic_ai_dicts(
    messages: Sequence[Message],
    *,
    retry_shape: RetryShape,
    start: int = 0,
    tool_kinds: frozenset[str] | None = None,
) -> list[dict[str, Any]]:
    """pydantic-ai message dicts for `ModelMessagesTypeAdapter.validate_python` of the era `retry_shape` names.

    With `start`, only `messages[start:]` are converted (the earlier ones still name the tools their calls used).
    `tool_kinds`: the `tool_kind` values the target release validates (None: any); another kind is left out, as
    that release never writes one (2.38 knows only its own two kinds, not 2.78's `output`).
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
        if tool_kinds is not None:
            parts = [_known_tool_kind(part, tool_kinds) for part in parts]
        data: dict[str, Any] = {"kind": message.kind, "parts": parts}
        _with_set(data, message, ("run_id", "state", "conversation_id", "metadata", "workspace_ref"))
        if message.failed_attempts is not None:
            data["failed_attempts"] = [_attempt_dict(attempt) for attempt in message.failed_attempts]
        result.append(data)
    return result


_EPOCH = "1970-01-01T00:00:00Z"


def _attempt_dict(attempt: Any) -> Any:
    """A failed attempt for pydantic-ai's `ModelRequestAttempt`, which requires the `timestamp` and `duration` the
    canonical form does not keep (they are per run): the epoch and zero stand in for them."""
    if type(attempt) is not dict:
        return attempt
    return {"timestamp": _EPOCH, "duration": 0, **attempt}


def _known_tool_kind(part: dict[str, Any], tool_kinds: frozenset[str]) -> dict[str, Any]:
    kind = part.get("tool_kind")
    if kind is None or kind in tool_kinds:
        return part
    return {key: value for key, value in part.items() if key != "tool_kind"}
