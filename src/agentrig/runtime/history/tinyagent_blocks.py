"""tinyagent content blocks: reading and writing a user message's blocks, and the helpers every block reader shares.

Part of the tinyagent format (`tinyagent_format.py` has the whole picture). A user message holds text and image
blocks; its parts are retry prompts (text blocks marked `{"retry": true}`), text parts, and `user-content` parts:
a writer marks the first block of each user-content part with `{"user_content": n}` (n blocks), except when the
message is that one part and holds an image, as tunacode's own messages with a screenshot are; unmarked text and
image blocks next to each other are one user-content part when an image is among them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.canonical import (
    FileContent,
    JsonValue,
    OpaquePart,
    Part,
    RetryPromptPart,
    TextPart,
    UrlContent,
    UserContent,
    UserContentPart,
)
from agentrig.runtime.history.user_content import data_url, parse_data_url
from agentrig.runtime.history.wire_errors import BadField, json_type
from agentrig.runtime.runfolder import jsonio

__all__ = [
    "IMAGE_PART_KIND",
    "MARKER",
    "blocks_of",
    "image_content",
    "image_to_pydantic_ai",
    "mark_user_content",
    "marker_of",
    "retry_content",
    "retry_text",
    "str_or_none",
    "text_block",
    "text_of",
    "user_blocks",
    "user_parts",
]

MARKER = "agentrig"
"""The extra key holding what the tinyagent format cannot express (see `tinyagent_format`)."""

IMAGE_PART_KIND = "image"
"""The `part_kind` agentrig before user-content parts gave a tinyagent image block (an opaque part); such a part in
a canonical file is read as a `user-content` part holding the image."""


def str_or_none(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and type(value) is not str:
        raise BadField(key, f"expected a string or null, got {json_type(value)}")
    return value


def marker_of(data: Mapping[str, Any]) -> dict[str, Any]:
    marker = data.get(MARKER, {})
    if type(marker) is not dict:
        raise BadField(MARKER, f"expected an object, got {json_type(marker)}")
    return marker


def blocks_of(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = data.get("content", [])
    if type(content) is not list:
        raise BadField("content", f"expected an array of content blocks, got {json_type(content)}")
    for index, block in enumerate(content):
        if block is not None and (type(block) is not dict or type(block.get("type")) is not str):
            raise BadField(f"content[{index}]", "expected a content block object with a type")
    return [block for block in content if block is not None]


def text_of(block: dict[str, Any], index: int) -> str:
    text = block.get("text")
    if text is not None and type(text) is not str:
        raise BadField(f"content[{index}].text", f"expected a string, got {json_type(text)}")
    return text or ""


def image_content(block: Mapping[str, Any], where: str = "") -> FileContent | UrlContent:
    """The canonical item of an image block: a `data:` URL is the file's bytes, any other URL stays a URL."""
    url = block.get("url")
    if type(url) is not str:
        raise BadField(f"{where}url", f"expected a string, got {json_type(url)}")
    media_type = str_or_none(block, "mime_type")
    extras = marker_of(block)
    identifier = str_or_none(extras, "identifier")
    vendor_metadata = extras.get("vendor_metadata")
    inline = parse_data_url(url)
    if inline is not None:
        return FileContent(
            data=inline[1],
            media_type=media_type or inline[0],
            identifier=identifier,
            vendor_metadata=vendor_metadata,
        )
    return UrlContent(
        url=url,
        kind="image-url",
        media_type=media_type,
        identifier=identifier,
        force_download=extras.get("force_download", False),
        vendor_metadata=vendor_metadata,
    )


def user_parts(data: dict[str, Any]) -> list[Part]:
    """A user message's parts: retry prompts, text parts, and `user-content` parts.

    Blocks a writer marked `{"user_content": n}` start a user-content part of n blocks; unmarked text and image
    blocks next to each other form one when an image is among them (tunacode's own messages), else text parts."""
    parts: list[Part] = []
    run: list[UserContent] = []  # unmarked text and image blocks, not yet placed

    def flush() -> None:
        if any(not isinstance(item, str) for item in run):
            parts.append(UserContentPart(content=tuple(run)))
        else:
            parts.extend(TextPart(content=item) for item in run if isinstance(item, str))
        run.clear()

    blocks = blocks_of(data)
    index = 0
    while index < len(blocks):
        block = blocks[index]
        kind = block["type"]
        marker = marker_of(block)
        if kind == "text" and marker.get("retry"):
            flush()
            content = retry_content(marker, text_of(block, index))
            parts.append(RetryPromptPart(content=content, tool_name=str_or_none(marker, "tool_name")))
        elif "user_content" in marker:
            flush()
            count = marker["user_content"]
            if type(count) is not int or count < 0 or index + max(count, 1) > len(blocks):
                raise BadField(f"content[{index}].{MARKER}.user_content", "expected the number of blocks that follow")
            parts.append(UserContentPart(content=tuple(_item(blocks, i) for i in range(index, index + count))))
            index += max(count, 1)  # an empty part is written as one empty text block
            continue
        elif kind in ("text", "image"):
            run.append(_item(blocks, index))
        else:
            raise BadField(f"content[{index}].type", f"a user message holds text and image blocks, not {kind!r}")
        index += 1
    flush()
    return parts


def _item(blocks: list[dict[str, Any]], index: int) -> UserContent:
    block = blocks[index]
    if block["type"] == "text":
        return text_of(block, index)
    if block["type"] == "image":
        return image_content(block, f"content[{index}].")
    raise BadField(f"content[{index}].type", f"a user message holds text and image blocks, not {block['type']!r}")


def retry_content(marker: Mapping[str, Any], text: str) -> str | list[dict[str, JsonValue]]:
    """The retry message: the text block, or the validation error details the marker keeps."""
    content = marker.get("content", text)
    if type(content) is str or (type(content) is list and all(type(item) is dict for item in content)):
        return content
    raise BadField(f"{MARKER}.content", f"expected a string or a list of error objects, got {json_type(content)}")


def text_block(text: str, marker: dict[str, Any] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if marker:
        block[MARKER] = marker
    return block


def retry_text(content: str | list[dict[str, JsonValue]]) -> str:
    return content if isinstance(content, str) else jsonio.dumps(content).decode()


def user_blocks(part: Part, where: str) -> list[dict[str, Any]]:
    if isinstance(part, TextPart):
        return [text_block(part.content)]
    if isinstance(part, RetryPromptPart):  # an output retry: tinyagent sends it to the model as user text
        marker: dict[str, Any] = {"retry": True}
        if part.tool_name is not None:
            marker["tool_name"] = part.tool_name
        if not isinstance(part.content, str):
            marker["content"] = part.content
        return [text_block(retry_text(part.content), marker)]
    if isinstance(part, UserContentPart):
        if not part.content:  # an empty part: one empty text block stands for it (marked, see mark_user_content)
            return [text_block("")]
        return [_content_block(item, f"{where}.content[{index}]") for index, item in enumerate(part.content)]
    if isinstance(part, OpaquePart) and part.part_kind == IMAGE_PART_KIND:
        return [{"type": "image", **part.data}]
    if isinstance(part, OpaquePart) and part.part_kind == "user-prompt":
        blocks = _pydantic_ai_user_content(part.data.get("content"))
        if blocks is not None:
            return blocks
    raise HistoryFormatError(f"a {part.part_kind} part has no tinyagent form", field=where)


def _content_block(item: UserContent, where: str) -> dict[str, Any]:
    """The tinyagent block of one user-content item: text, or an image (its bytes as a `data:` URL)."""
    if isinstance(item, str):
        return text_block(item)
    if isinstance(item, FileContent) and item.media_type.startswith("image/"):
        block: dict[str, Any] = {"type": "image", "url": data_url(item), "mime_type": item.media_type}
    elif isinstance(item, UrlContent) and item.kind == "image-url":
        block = {"type": "image", "url": item.url}
        if item.media_type is not None:
            block["mime_type"] = item.media_type
        if item.force_download is not False:
            block[MARKER] = {"force_download": item.force_download}
    else:
        what = item.media_type if isinstance(item, FileContent) else item.kind
        raise HistoryFormatError(
            f"a {what} attachment has no tinyagent form (tinyagent's user messages hold text and images)", field=where
        )
    extras = {"identifier": item.identifier, "vendor_metadata": item.vendor_metadata}
    extras = {key: value for key, value in extras.items() if value is not None}
    if extras:
        block[MARKER] = {**block.get(MARKER, {}), **extras}
    return block


def _pydantic_ai_user_content(content: object) -> list[dict[str, Any]] | None:
    """tinyagent blocks for a pydantic-ai multi-modal prompt of text and image URLs; None for anything else."""
    if not isinstance(content, list):
        return None
    blocks: list[dict[str, Any]] = []
    for item in content:
        if isinstance(item, str):
            blocks.append(text_block(item))
        elif isinstance(item, dict) and item.get("kind") == "image-url" and isinstance(item.get("url"), str):
            image: dict[str, Any] = {"type": "image", "url": item["url"]}
            if isinstance(item.get("media_type"), str):
                image["mime_type"] = item["media_type"]
            blocks.append(image)
        else:
            return None  # documents, audio, binary content: no tinyagent block holds them
    return blocks


def image_to_pydantic_ai(part: OpaquePart) -> dict[str, Any]:
    """pydantic-ai's form of a tinyagent image: a user prompt holding an `ImageUrl` (data: URLs included)."""
    image: dict[str, Any] = {"kind": "image-url", "url": part.data.get("url")}
    if part.data.get("mime_type") is not None:
        image["media_type"] = part.data["mime_type"]
    return {"part_kind": "user-prompt", "content": [image]}


def mark_user_content(pieces: list[tuple[Part, list[dict[str, Any]]]]) -> None:
    """Mark where each user-content part's blocks start and how many there are, unless the user message is one such
    part holding an image (which a reader takes as one part anyway: tunacode's own messages look like that)."""
    contents = [(part, blocks) for part, blocks in pieces if isinstance(part, UserContentPart)]
    if not contents or (len(pieces) == 1 and contents[0][0].attachments):
        return
    for part, blocks in contents:
        blocks[0][MARKER] = {**blocks[0].get(MARKER, {}), "user_content": len(part.content)}
