"""The media type of a file or URL by its extension: one fixed table, the same on every machine.

Python's `mimetypes` reads the machine's `/etc/mime.types` (and its defaults change between Python versions), so a
scenario's history would depend on where it runs. Shared by the scenario format (which checks that a URL's type can
be told) and the canonical layer (which records it); standard library only, so both may import it.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from urllib.parse import urlsplit

__all__ = ["DEFAULT_FILE_MEDIA_TYPE", "MEDIA_TYPES", "guess_media_type"]

DEFAULT_FILE_MEDIA_TYPE = "application/octet-stream"
"""The media type of an attached file whose extension the table does not know (a URL has none: it must say)."""

MEDIA_TYPES: dict[str, str] = {
    # images
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".svg": "image/svg+xml",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".heic": "image/heic",
    # documents
    ".pdf": "application/pdf",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".csv": "text/csv",
    ".html": "text/html",
    ".htm": "text/html",
    ".json": "application/json",
    ".xml": "application/xml",
    ".rtf": "application/rtf",
    ".doc": "application/msword",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xls": "application/vnd.ms-excel",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    # audio
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
    ".m4a": "audio/mp4",
    ".aac": "audio/aac",
    # video
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".mov": "video/quicktime",
    ".mkv": "video/x-matroska",
}
"""The media type of a file or URL by its (lower-cased) extension: a fixed table, the same on every machine."""


def guess_media_type(name: str) -> str | None:
    """The media type of a file name or URL by its extension (`MEDIA_TYPES`); None when the table has none."""
    path = urlsplit(name).path if "://" in name else name
    return MEDIA_TYPES.get(PurePosixPath(path).suffix.lower())
