"""A user's message with files and URLs, as a scenario turn's `user` list: each file written beside the scenario
(`attachments/NAME/N.EXT`, the extension from its media type), each URL kept as a URL (never fetched).

A file is written once however often it was sent (by its content), and it is one of the scenario's files: written
with the YAML and the golden history, all or none, and listed in `.agentrig-scaffold.json`. Its `media_type` is
written when the extension does not say it; an `identifier` the source set explicitly, provider options
(`vendor_metadata`) and a URL's `force_download` are kept as the scenario's attachment fields.
"""

from __future__ import annotations

from typing import Any

from agentrig.media_types import DEFAULT_FILE_MEDIA_TYPE, MEDIA_TYPES, guess_media_type
from agentrig.runtime.history.canonical import FileContent, OpaqueContent, UrlContent, UserPrompt

__all__ = ["AttachmentFiles"]

_URL_KEYS = {
    "image-url": "image_url",
    "document-url": "document_url",
    "audio-url": "audio_url",
    "video-url": "video_url",
}


class AttachmentFiles:
    """The attachment files of one scenario, by content, as (path relative to the scenario file, bytes)."""

    def __init__(self, name: str) -> None:
        self.folder = f"attachments/{name}"
        self.files: dict[str, tuple[str, bytes]] = {}  # sha256 -> (path, bytes)

    def user(self, prompt: UserPrompt) -> Any:
        """The turn's `user`: the text, or the list of text pieces and attachments."""
        if isinstance(prompt, str):
            return prompt
        return [item if isinstance(item, str) else self._attachment(item) for item in prompt]

    def _attachment(self, item: FileContent | UrlContent | OpaqueContent) -> dict[str, Any]:
        if isinstance(item, OpaqueContent):  # refused by the planner; never reaches here
            raise ValueError(f"a {item.kind!r} item has no scenario form")
        if isinstance(item, UrlContent):
            entry: dict[str, Any] = {_URL_KEYS[item.kind]: item.url}
            if item.media_type is not None and item.media_type != guess_media_type(item.url):
                entry["media_type"] = item.media_type
            if item.force_download is not False:
                entry["force_download"] = item.force_download
        else:
            path = self._path(item)
            entry = {"file": path}
            if (guess_media_type(path) or DEFAULT_FILE_MEDIA_TYPE) != item.media_type:
                entry["media_type"] = item.media_type
        if item.identifier is not None:
            entry["identifier"] = item.identifier
        if item.vendor_metadata is not None:
            entry["vendor_metadata"] = item.vendor_metadata
        return entry

    def _path(self, item: FileContent) -> str:
        known = self.files.get(item.sha256)
        if known is not None:
            return known[0]
        extension = next((ext for ext, kind in MEDIA_TYPES.items() if kind == item.media_type), ".bin")
        path = f"{self.folder}/{len(self.files) + 1}{extension}"
        self.files[item.sha256] = (path, item.data)
        return path
