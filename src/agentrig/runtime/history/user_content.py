"""User content beyond text (files and URLs the user attached): media types, JSON in and out, and a short description.

The canonical JSON of a `user-content` part's items (docs/canonical-format.md):

    "a piece of text"
    {"kind": "binary", "media_type": "image/png", "sha256": "<hex>", "data": "<base64>"}
    {"kind": "image-url", "url": "https://...", "media_type": "image/png"}
    {"kind": "<anything else>", ...}                                   an item kept verbatim

with `identifier`, `vendor_metadata` and (URLs) `force_download` only when they hold something other than
pydantic-ai's default. The same reader takes pydantic-ai's own dump of a `UserPromptPart` list (which writes a
computed `identifier` and `media_type` on every item, and no `sha256`): an identifier equal to pydantic-ai's
default (the first six hex digits of the SHA-1 of the data, or of the URL, 2.38 and 2.68 alike) is not kept.

Media types are inferred from a file name or URL by one fixed table (`agentrig.media_types`), never by the
machine's `/etc/mime.types`, so a scenario gives the same history on every machine. Nothing here imports
pydantic-ai.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Sequence
from typing import Any

from agentrig.media_types import MEDIA_TYPES, guess_media_type
from agentrig.runtime.history.canonical import (
    URL_KINDS,
    FileContent,
    JsonValue,
    OpaqueContent,
    UrlContent,
    UrlKind,
    UserContent,
    UserPrompt,
)
from agentrig.runtime.history.wire_errors import BadField, json_type

__all__ = [
    "MEDIA_TYPES",
    "data_url",
    "decode_user_content",
    "default_identifier",
    "describe_prompt",
    "elide_base64_data",
    "encode_user_content",
    "guess_media_type",
    "parse_data_url",
    "prompt_text",
]


def default_identifier(value: bytes | str) -> str:
    """pydantic-ai's default identifier of an attachment: the first six hex digits of the SHA-1 of its data (a file)
    or of its URL (`_multi_modal_content_identifier`, the same in 2.38 and 2.68)."""
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return hashlib.sha1(raw, usedforsecurity=False).hexdigest()[:6]


def data_url(item: FileContent) -> str:
    """The file as a `data:` URL (how tinyagent carries an image's bytes)."""
    return f"data:{item.media_type};base64,{base64.b64encode(item.data).decode('ascii')}"


def parse_data_url(url: str) -> tuple[str, bytes] | None:
    """(media type, bytes) of a base64 `data:` URL; None for any other URL."""
    if not url.startswith("data:") or "," not in url:
        return None
    header, _, payload = url[5:].partition(",")
    media_type, _, encoding = header.partition(";")
    data = _base64_bytes(payload) if encoding == "base64" and media_type else None
    return None if data is None else (media_type, data)


# --- describing a prompt (reports, the event log) ---


def _describe_item(item: UserContent) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, FileContent):
        return f"<{item.media_type}, {len(item.data)} bytes, sha256:{item.sha256[:12]}>"
    if isinstance(item, UrlContent):
        return f"<{item.kind} {item.url if len(item.url) <= 80 else item.url[:77] + '...'}>"
    return f"<{item.kind}>"


def describe_prompt(prompt: UserPrompt | None) -> str | None:
    """A user prompt as one text: the text items as they are, each attachment as a short `<...>` label."""
    if prompt is None or isinstance(prompt, str):
        return prompt
    return "\n".join(_describe_item(item) for item in prompt)


# A `data` line of pretty JSON (the canonical form, a golden file) whose value is a long base64 run: an attachment's
# bytes. 64 characters are 48 bytes; shorter values are shown as they are.
_BASE64_DATA_LINE = re.compile(r'^(\s*"data": ")([A-Za-z0-9+/_-]{64,}={0,2})(",?)$', re.MULTILINE)


def _base64_label(match: re.Match[str]) -> str:
    payload = match.group(2)
    data = _base64_bytes(payload)
    if data is None:
        digest = hashlib.sha256(payload.encode()).hexdigest()[:12]
        label = f"<{len(payload)} characters like base64, sha256 of the text:{digest}>"
    else:
        label = f"<{len(data)} bytes in base64, sha256:{hashlib.sha256(data).hexdigest()[:12]}>"
    return match.group(1) + label + match.group(3)


def elide_base64_data(text: str) -> str:
    """Pretty JSON for a diff a person reads (a golden file against this run, a history against its baseline): each
    `"data": "<base64>"` line of 64 characters or more shows a label of the bytes' size and SHA-256 instead
    (`<73 bytes in base64, sha256:4c44f00a5f49>`, the hash reports label attachments with), so an attachment of a
    megabyte is one line and two different payloads still differ. Lines keep their numbers."""
    return _BASE64_DATA_LINE.sub(_base64_label, text)


def prompt_text(prompt: UserPrompt) -> str:
    """The text of a user prompt, attachments left out (what a model that reads only text would see)."""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(item for item in prompt if isinstance(item, str))


# --- JSON ---


def _encode_item(item: UserContent) -> JsonValue:
    if isinstance(item, str):
        return item
    if isinstance(item, FileContent):
        data: dict[str, Any] = {"kind": "binary", "media_type": item.media_type, "sha256": item.sha256}
        if item.identifier is not None:
            data["identifier"] = item.identifier
        if item.vendor_metadata is not None:
            data["vendor_metadata"] = item.vendor_metadata
        data["data"] = base64.b64encode(item.data).decode("ascii")
        return data
    if isinstance(item, UrlContent):
        data = {"kind": item.kind, "url": item.url}
        if item.media_type is not None:
            data["media_type"] = item.media_type
        if item.identifier is not None:
            data["identifier"] = item.identifier
        if item.force_download is not False:
            data["force_download"] = item.force_download
        if item.vendor_metadata is not None:
            data["vendor_metadata"] = item.vendor_metadata
        return data
    return {"kind": item.kind, **item.data}


def encode_user_content(items: Sequence[UserContent]) -> list[JsonValue]:
    """The canonical JSON of a `user-content` part's items."""
    return [_encode_item(item) for item in items]


def _optional_str(data: dict[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and type(value) is not str:
        raise BadField(f"{where}.{key}", f"expected a string or null, got {json_type(value)}")
    return value


def _optional_object(data: dict[str, Any], key: str, where: str) -> dict[str, JsonValue] | None:
    value = data.get(key)
    if value is not None and type(value) is not dict:
        raise BadField(f"{where}.{key}", f"expected an object or null, got {json_type(value)}")
    return value


def _decode_binary(data: dict[str, Any], where: str) -> FileContent:
    raw = data.get("data")
    if type(raw) is not str:
        raise BadField(f"{where}.data", f"expected base64 text, got {json_type(raw)}")
    payload = _base64_bytes(raw)
    if payload is None:
        raise BadField(f"{where}.data", "not valid base64")
    media_type = data.get("media_type")
    if type(media_type) is not str or not media_type:
        raise BadField(f"{where}.media_type", f"expected a media type, got {json_type(media_type)}")
    sha256 = _optional_str(data, "sha256", where)
    item = FileContent(
        data=payload,
        media_type=media_type,
        identifier=_explicit_identifier(_optional_str(data, "identifier", where), payload),
        vendor_metadata=_optional_object(data, "vendor_metadata", where),
    )
    if sha256 is not None and sha256 != item.sha256:
        raise BadField(f"{where}.sha256", f"does not match the data (its SHA-256 is {item.sha256})")
    return item


def _base64_bytes(text: str) -> bytes | None:
    """Standard or URL-safe base64 (pydantic writes bytes URL-safe in JSON mode), padding optional."""
    normalized = text.replace("-", "+").replace("_", "/")
    normalized += "=" * (-len(normalized) % 4)
    try:
        return base64.b64decode(normalized, validate=True)
    except (binascii.Error, ValueError):
        return None


def _decode_url(data: dict[str, Any], kind: UrlKind, where: str) -> UrlContent:
    url = data.get("url")
    if type(url) is not str:
        raise BadField(f"{where}.url", f"expected a string, got {json_type(url)}")
    force_download = data.get("force_download", False)
    if type(force_download) not in (bool, str):
        raise BadField(f"{where}.force_download", f"expected true, false or a mode, got {json_type(force_download)}")
    return UrlContent(
        url=url,
        kind=kind,
        media_type=_optional_str(data, "media_type", where),
        identifier=_explicit_identifier(_optional_str(data, "identifier", where), url),
        force_download=force_download,
        vendor_metadata=_optional_object(data, "vendor_metadata", where),
    )


def _explicit_identifier(identifier: str | None, source: bytes | str) -> str | None:
    """The identifier when it is not pydantic-ai's default one (which its dumps write on every item)."""
    return None if identifier is None or identifier == default_identifier(source) else identifier


def decode_user_content(items: object, where: str = "content") -> tuple[UserContent, ...]:
    """The items of a `user-content` part (or of a pydantic-ai `user-prompt` list); `BadField` names a bad one."""
    if type(items) is not list:
        raise BadField(where, f"expected an array, got {json_type(items)}")
    decoded: list[UserContent] = []
    for index, raw in enumerate(items):
        at = f"{where}[{index}]"
        if type(raw) is str:
            decoded.append(raw)
            continue
        if type(raw) is not dict or type(raw.get("kind")) is not str:
            raise BadField(at, f"expected text or an object with a kind, got {json_type(raw)}")
        kind: str = raw["kind"]
        if kind == "binary":
            decoded.append(_decode_binary(raw, at))
        elif kind in URL_KINDS:
            decoded.append(_decode_url(raw, kind, at))  # pyright: ignore[reportArgumentType]
        else:
            decoded.append(OpaqueContent(kind=kind, data={k: v for k, v in raw.items() if k != "kind"}))
    return tuple(decoded)
