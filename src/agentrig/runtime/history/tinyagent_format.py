"""The tinyagent message format (package `tiny-agent-os`, used by tunacode) <-> canonical messages.

tinyagent stores a conversation as a flat list of message dicts (its pydantic models dumped with
`model_dump(exclude_none=True)`):

- `{"role": "user", "content": [blocks]}`: blocks of `{"type": "text", "text"}` and `{"type": "image", "url",
  "mime_type"}` (a `data:` URL carries the image's bytes);
- `{"role": "assistant", "content": [blocks], "usage": {...}, "stop_reason", "model", ...}`: blocks of
  `text`, `{"type": "thinking", "thinking", "thinking_signature"}` and `{"type": "tool_call", "id", "name",
  "arguments"}`;
- `{"role": "tool_result", "tool_call_id", "tool_name", "content": [blocks], "details", "is_error"}`.

The canonical history groups them: an assistant message is a response; every run of other messages
between two assistant messages is one request (tool results, then any user text, as pydantic-ai sends
them), except that a user message right after a user message starts a new request, so two prompts in a
row stay two requests and `agentrig check` can report them. A user message holding an image is one
`user-content` part (its text and images in order; an image's `data:` URL becomes the file's bytes), as
pydantic-ai holds a prompt with images in one `UserPromptPart`.

What the tinyagent format cannot express is written, only when needed, under an `agentrig` key that
tinyagent keeps (its models allow extra keys) and ignores: a retry prompt (tinyagent has error results
instead), a tool outcome other than success/failed, tool-return content that is not text blocks, a
thought's provider, id and provider details, a message's `run_id`, `state`, `conversation_id`, `metadata`,
`failed_attempts` and `workspace_ref`, a part's fields beyond the seed format (`fields`: a tool's `tool_kind` and
`ui_visibility`, a tool result's `metadata`, a retry's `cause`, a text's provider id, ...), and where a request
starts when two requests follow each other. With it, canonical -> tinyagent -> canonical gives back the same history.
System prompts become `{"role": "system"}` messages, which tinyagent loads as custom messages and never
sends to a model.

Per-message metadata (`usage`, `model`, `provider`, `api`, `stop_reason`, `timestamp`, `error_message`,
a tool result's `details`, text signatures) has no place in a canonical message and is not kept in it;
`tinyagent_sessions.usage_of_messages` sums the usage into agentrig's `Usage`. A user message's blocks (text,
images, the user-content markers) are read and written by `tinyagent_blocks.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.canonical import (
    OPTIONAL_MESSAGE_FIELDS,
    OPTIONAL_PART_FIELDS,
    JsonValue,
    Message,
    Part,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
)
from agentrig.runtime.history.tinyagent_blocks import (
    IMAGE_PART_KIND,
    MARKER,
    blocks_of,
    image_content,
    image_to_pydantic_ai,
    mark_user_content,
    marker_of,
    retry_content,
    retry_text,
    str_or_none,
    text_block,
    text_of,
    user_blocks,
    user_parts,
)
from agentrig.runtime.history.wire_errors import BadField, json_type
from agentrig.runtime.runfolder import jsonio

__all__ = [
    "IMAGE_PART_KIND",
    "MARKER",
    "image_content",
    "image_to_pydantic_ai",
    "looks_like_tinyagent",
    "messages_from_tinyagent",
    "messages_to_tinyagent",
]

ROLES = frozenset({"user", "assistant", "tool_result", "system"})
_MESSAGE_KEYS = OPTIONAL_MESSAGE_FIELDS
"""The message-level values a marker may carry."""
_PART_FIELDS = OPTIONAL_PART_FIELDS
"""The optional fields of each part kind that tinyagent has no place for: a marker's `fields`."""


def _fields_marker(part: Part) -> dict[str, Any]:
    """`{"fields": {...}}` with the part's optional fields that are set, or {} when none is."""
    names = _PART_FIELDS.get(type(part), ())
    values = {name: getattr(part, name) for name in names if getattr(part, name) is not None}
    return {"fields": values} if values else {}


def _with_fields(part: Any, marker: Mapping[str, Any]) -> Any:
    """The part with the optional fields its marker's `fields` holds (the ones its kind has)."""
    values = marker.get("fields")
    if type(values) is not dict or not values:
        return part
    names = _PART_FIELDS.get(type(part), ())
    known = {name: value for name, value in values.items() if name in names}
    return replace(part, **known) if known else part


_OUTCOMES = frozenset({"success", "failed", "denied", "interrupted"})


def looks_like_tinyagent(items: object) -> bool:
    """Whether a JSON list is tinyagent messages: a dict with a role and a list `content`, or a tool result.

    Legacy dict messages have a string `content`; canonical and pydantic-ai messages have `kind`.
    """
    if type(items) is not list:
        return False
    return any(
        type(item) is dict
        and "kind" not in item
        and "role" in item
        and (item["role"] == "tool_result" or type(item.get("content")) is list)
        for item in items
    )


# --- reading ---


def _assistant_parts(data: dict[str, Any]) -> list[Part]:
    parts: list[Part] = []
    for index, block in enumerate(blocks_of(data)):
        kind = block["type"]
        if kind == "text":
            parts.append(_with_fields(TextPart(content=text_of(block, index)), marker_of(block)))
        elif kind == "thinking":
            thinking = block.get("thinking")
            if thinking is not None and type(thinking) is not str:
                raise BadField(f"content[{index}].thinking", f"expected a string, got {json_type(thinking)}")
            try:
                signature = str_or_none(block, "thinking_signature")
            except BadField as bad:
                raise BadField(f"content[{index}].{bad.field}", bad.message) from None
            extras = marker_of(block)
            parts.append(
                ThoughtPart(
                    content=thinking or "",
                    signature=signature,
                    provider_name=extras.get("provider_name"),
                    id=extras.get("id"),
                    provider_details=extras.get("provider_details"),
                )
            )
        elif kind == "tool_call":
            parts.append(_with_fields(_tool_call(block, f"content[{index}]"), marker_of(block)))
        else:
            raise BadField(
                f"content[{index}].type", f"an assistant message holds text, thinking and tool_call, not {kind!r}"
            )
    return parts


def _tool_call(block: dict[str, Any], where: str) -> ToolCallPart:
    call_id, name = block.get("id"), block.get("name")
    if type(call_id) is not str or not call_id:
        raise BadField(f"{where}.id", f"expected a non-empty string, got {json_type(call_id)}")
    if type(name) is not str:
        raise BadField(f"{where}.name", f"expected a string, got {json_type(name)}")
    arguments = block.get("arguments", {})
    if type(arguments) is not dict:
        raise BadField(f"{where}.arguments", f"expected an object, got {json_type(arguments)}")
    raw = block.get("partial_json")
    # tinyagent keeps only JSON-object arguments; agentrig writes arguments that are not one (malformed JSON,
    # a list) as `partial_json` beside empty arguments, so they come back verbatim.
    args: dict[str, JsonValue] | str = arguments
    if not arguments and type(raw) is str and raw and not _is_json_object(raw):
        args = raw
    return ToolCallPart(tool_call_id=call_id, tool_name=name, args=args)


def _is_json_object(text: str) -> bool:
    try:
        return type(jsonio.loads(text)) is dict
    except HistoryFormatError:
        return False


def _tool_result_part(data: dict[str, Any]) -> Part:
    call_id = data.get("tool_call_id")
    if type(call_id) is not str or not call_id:
        raise BadField("tool_call_id", f"expected a non-empty string, got {json_type(call_id)}")
    tool_name = str_or_none(data, "tool_name")
    is_error = data.get("is_error", False)
    if type(is_error) is not bool:
        raise BadField("is_error", f"expected true or false, got {json_type(is_error)}")
    blocks = blocks_of(data)
    marker = marker_of(data)
    if marker.get("retry"):
        text = "".join(text_of(block, i) for i, block in enumerate(blocks) if block["type"] == "text")
        retry = RetryPromptPart(content=retry_content(marker, text), tool_name=tool_name, tool_call_id=call_id)
        return _with_fields(retry, marker)
    outcome = marker.get("outcome", "failed" if is_error else "success")
    if outcome not in _OUTCOMES:
        raise BadField(f"{MARKER}.outcome", f"unknown tool outcome {outcome!r}")
    content = marker["content"] if "content" in marker else _content_from_blocks(blocks)
    part = ToolReturnPart(tool_call_id=call_id, tool_name=tool_name, content=content, outcome=outcome)
    return _with_fields(part, marker)


def _content_from_blocks(blocks: list[dict[str, Any]]) -> JsonValue:
    """One plain text block is its text; anything else (several blocks, images) stays the list of blocks."""
    if len(blocks) == 1 and blocks[0]["type"] == "text" and set(blocks[0]) <= {"type", "text"}:
        return blocks[0].get("text") or ""
    return blocks


def messages_from_tinyagent(
    items: list[Any], *, field: str = "", source: str | Path | None = None
) -> tuple[list[Message], list[str]]:
    """Canonical messages, and legacy `{"thought": ...}` entries, from a list of tinyagent message dicts."""
    messages: list[Message] = []
    thoughts: list[str] = []
    request: list[Part] | None = None  # the request being gathered
    request_meta: dict[str, str | None] = {}
    previous_role: str | None = None

    def close_request() -> None:
        nonlocal request
        if request is not None:
            messages.append(_with_meta(Message(kind="request", parts=tuple(request)), request_meta))
        request = None

    for index, item in enumerate(items):
        where = f"{field}[{index}]"
        if type(item) is dict and "thought" in item and "role" not in item:
            if type(item["thought"]) is not str:
                got = json_type(item["thought"])
                raise HistoryFormatError(f"expected a string, got {got}", path=source, field=f"{where}.thought")
            thoughts.append(item["thought"])
            continue
        if type(item) is not dict:
            raise HistoryFormatError(f"expected a message object, got {json_type(item)}", path=source, field=where)
        role = item.get("role")
        if type(role) is not str or role not in ROLES:
            known = ", ".join(sorted(ROLES))
            raise HistoryFormatError(f"unknown role {role!r} (known: {known})", path=source, field=f"{where}.role")
        try:
            marker = marker_of(item)
            if role == "assistant":
                close_request()
                response = Message(kind="response", parts=tuple(_assistant_parts(item)))
                messages.append(_with_meta(response, _meta(marker)))
            else:
                if request is None or marker.get("new_request") or (role == "user" and previous_role == "user"):
                    close_request()
                    request, request_meta = [], _meta(marker)
                if role == "user":
                    request.extend(user_parts(item))
                elif role == "tool_result":
                    request.append(_tool_result_part(item))
                else:
                    texts = [p.content for p in user_parts(item) if isinstance(p, TextPart)]
                    request.extend(_with_fields(SystemPromptPart(content=text), marker) for text in texts)
        except BadField as bad:
            raise HistoryFormatError(bad.message, path=source, field=f"{where}.{bad.field}") from None
        previous_role = role
    close_request()
    return messages, thoughts


def _meta(marker: Mapping[str, Any]) -> dict[str, Any]:
    """The message-level values a marker carries, checked."""
    try:
        meta: dict[str, Any] = {key: str_or_none(marker, key) for key in ("run_id", "state", "conversation_id")}
    except BadField as bad:
        raise BadField(f"{MARKER}.{bad.field}", bad.message) from None
    for key, kind in (("metadata", dict), ("failed_attempts", list)):
        value = marker.get(key)
        if value is not None and type(value) is not kind:
            raise BadField(f"{MARKER}.{key}", f"expected {'an object' if kind is dict else 'a list'} or null")
        meta[key] = value
    meta["workspace_ref"] = marker.get("workspace_ref")
    return meta


def _with_meta(message: Message, meta: Mapping[str, Any]) -> Message:
    values = {key: value for key, value in meta.items() if value is not None}
    return replace(message, **values) if values else message


# --- writing ---


def _is_block(item: object) -> bool:
    """A value tinyagent's `TextContent` or `ImageContent` validates."""
    if not isinstance(item, dict):
        return False
    block: dict[str, Any] = item
    keys = ("text",) if block.get("type") == "text" else ("url", "mime_type") if block.get("type") == "image" else None
    return keys is not None and all(block.get(key) is None or type(block[key]) is str for key in keys)


def _blocks_for_content(content: JsonValue) -> tuple[list[dict[str, Any]], bool]:
    """Content blocks for a tool return's content, and whether reading them back gives other content."""
    if isinstance(content, str):
        blocks = [text_block(content)]
    elif isinstance(content, list) and all(_is_block(item) for item in content):
        blocks = list(content)
    else:
        blocks = [text_block(jsonio.dumps(content).decode())]
    # Compare as JSON text: Python's == calls True equal to 1, JSON does not.
    return blocks, jsonio.dumps(_content_from_blocks(blocks)) != jsonio.dumps(content)


def _tool_result(part: ToolReturnPart | RetryPromptPart) -> dict[str, Any]:
    data: dict[str, Any] = {"role": "tool_result", "tool_call_id": part.tool_call_id}
    if part.tool_name is not None:
        data["tool_name"] = part.tool_name
    marker: dict[str, Any] = {}
    # `details` is the tool's structured output for the host, never sent to a model; canonical has none to give.
    data["details"] = {}
    if isinstance(part, RetryPromptPart):
        data["content"] = [text_block(retry_text(part.content))]
        data["is_error"] = True
        marker["retry"] = True
        if not isinstance(part.content, str):
            marker["content"] = part.content
    else:
        blocks, differs = _blocks_for_content(part.content)
        data["content"] = blocks
        data["is_error"] = part.outcome != "success"
        if differs:
            marker["content"] = part.content
        if part.outcome not in ("success", "failed"):
            marker["outcome"] = part.outcome
    marker.update(_fields_marker(part))
    if marker:
        data[MARKER] = marker
    return data


def _request_messages(message: Message, where: str) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = []
    user: dict[str, Any] | None = None
    pieces: list[tuple[Part, list[dict[str, Any]]]] = []  # the parts of the current user message and their blocks
    for index, part in enumerate(message.parts):
        if isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_call_id is not None:
            mark_user_content(pieces)
            user, pieces = None, []
            result.append(_tool_result(part))
        elif isinstance(part, SystemPromptPart):
            mark_user_content(pieces)
            user, pieces = None, []
            system: dict[str, Any] = {"role": "system", "content": [text_block(part.content)]}
            if extras := _fields_marker(part):
                system[MARKER] = extras
            result.append(system)
        else:
            if user is None:
                user = {"role": "user", "content": []}
                result.append(user)
            blocks = user_blocks(part, f"{where}.parts[{index}]")
            pieces.append((part, blocks))
            user["content"].extend(blocks)
    mark_user_content(pieces)
    return result or [{"role": "user", "content": []}]


def _assistant_message(message: Message, where: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for index, part in enumerate(message.parts):
        if isinstance(part, TextPart):
            text = text_block(part.content)
            if extras := _fields_marker(part):
                text[MARKER] = extras
            content.append(text)
        elif isinstance(part, ThoughtPart):
            block: dict[str, Any] = {"type": "thinking", "thinking": part.content}
            if part.signature is not None:
                block["thinking_signature"] = part.signature
            extras = {"provider_name": part.provider_name, "id": part.id, "provider_details": part.provider_details}
            extras = {key: value for key, value in extras.items() if value is not None}
            if extras:
                block[MARKER] = extras
            content.append(block)
        elif isinstance(part, ToolCallPart):
            call: dict[str, Any] = {"type": "tool_call", "id": part.tool_call_id, "name": part.tool_name}
            if isinstance(part.args, str):
                call["arguments"] = {}
                call["partial_json"] = part.args
            else:
                call["arguments"] = part.args
            if extras := _fields_marker(part):
                call[MARKER] = extras
            content.append(call)
        else:
            raise HistoryFormatError(
                f"a {part.part_kind} part has no tinyagent form in a response", field=f"{where}.parts[{index}]"
            )
    return {"role": "assistant", "content": content}


def messages_to_tinyagent(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """tinyagent message dicts for a canonical history; tinyagent's `model_validate` and tunacode's loader accept them.

    A part with no tinyagent form (an opaque part other than an image, a tool call in a request) raises
    `HistoryFormatError` naming it.
    """
    result: list[dict[str, Any]] = []
    previous_kind: str | None = None
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if message.kind == "response":
            converted = [_assistant_message(message, where)]
        else:
            converted = _request_messages(message, where)
        marker: dict[str, Any] = {}
        if message.kind == "request" and previous_kind == "request":
            marker["new_request"] = True
        for key in _MESSAGE_KEYS:
            value = getattr(message, key)
            if value is not None:
                marker[key] = value
        if marker:  # a tool result's own marker (retry, outcome, content) may be there already: the keys differ
            converted[0][MARKER] = {**converted[0].get(MARKER, {}), **marker}
        result.extend(converted)
        previous_kind = message.kind
    return result
