"""Canonical messages -> dicts that pydantic-ai's `ModelMessagesTypeAdapter.validate_python` accepts, for the
retry shape of a chosen era (no pydantic-ai import: the conversion layer validates the dicts)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from agentrig.runtime.history import tinyagent_format
from agentrig.runtime.history.canonical import (
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

__all__ = ["RetryShape", "to_pydantic_ai_dicts", "user_prompt_dict"]

RetryShape = Literal["retry-prompt", "retried"]
"""`retry-prompt`: pydantic-ai < 2.60 (`RetryPromptPart`); `retried`: 2.60+ (`ToolReturnPart(outcome='retried')`
for tool retries, `RetryFeedbackPart` for output retries)."""


def _retry_cause(content: object) -> str:
    # A list of error details comes from a ValidationError; a string from ModelRetry.
    return "validation_error" if isinstance(content, list) else "model_retry"


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
    if isinstance(part, OpaquePart) and part.part_kind == tinyagent_format.IMAGE_PART_KIND:
        return tinyagent_format.image_to_pydantic_ai(part)
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
            "id": part.id,
            "provider_details": part.provider_details,
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
