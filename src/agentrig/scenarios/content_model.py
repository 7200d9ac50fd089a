"""The scenario format's user content beyond text: files and URLs attached to a user message.

One vocabulary for what a user sends and for what a step expects the model to have received (`expect_input`):
a turn's `user` is text, or a list of text pieces and `Attachment`s in order, as pydantic-ai's `UserPromptPart`
holds them. A file is read from disk relative to the scenario file (never from outside its folder unless the
attachment says `outside: true`) and sent as its bytes; a URL is sent as a URL and never fetched by agentrig.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Annotated, Literal

from pydantic import Discriminator, Tag, model_validator

from agentrig.media_types import guess_media_type
from agentrig.scenarios._strict import JsonValue
from agentrig.scenarios._strict import Strict as _Strict

__all__ = ["MAX_ATTACHMENT_BYTES", "Attachment", "UserContentItem", "UserMessage"]

MAX_ATTACHMENT_BYTES = 32 * 1024 * 1024
"""The largest file an attachment may name (32 MiB, the size providers accept for a PDF): a bigger file, or a
device such as `/dev/zero`, is an error at its line rather than a run that fills the memory."""

_MEDIA_TYPE = re.compile(r"^[\w.+-]+/[\w.+-]+$")
_URL_FIELDS = ("image_url", "document_url", "audio_url", "video_url")


class Attachment(_Strict):
    """A file or URL attached to the user's message: pydantic-ai's `BinaryContent` (`file`, `data`) or
    `ImageUrl`, `DocumentUrl`, `AudioUrl`, `VideoUrl`. Exactly one of `file`, `data`, `image_url`, `document_url`,
    `audio_url` or `video_url`. In `expect_input.attachments` the same keys name what the model must have received
    (a file is compared by its content)."""

    file: str | None = None
    """A file (relative to the scenario file) sent as its bytes: an image, a document, audio, any file. Its media
    type comes from its extension (`application/octet-stream` when unknown) unless `media_type` says."""
    data: str | None = None
    """The file's bytes inline, as base64 (give `media_type`)."""
    image_url: str | None = None
    """The URL of an image; the model's provider fetches it, agentrig never does."""
    document_url: str | None = None
    """The URL of a document (a PDF, a text file)."""
    audio_url: str | None = None
    """The URL of an audio file."""
    video_url: str | None = None
    """The URL of a video."""
    media_type: str | None = None
    """The MIME type, e.g. `image/png`. Needed for `data`, and for a URL whose extension does not tell it."""
    identifier: str | None = None
    """The name the model may refer to the attachment by (pydantic-ai's `identifier`); default: pydantic-ai's own."""
    vendor_metadata: dict[str, JsonValue] | None = None
    """Provider options sent with it, e.g. `{detail: high}` for an OpenAI image."""
    force_download: bool | Literal["allow-local"] = False
    """For a URL: pydantic-ai downloads it and sends the bytes. Only a real model does; a scripted run fetches
    nothing."""
    outside: bool = False
    """For a file: it lies outside the scenario file's folder on purpose. Without it such a path is an error, so a
    scenario cannot read (and write into its history) a file elsewhere on the machine unless it says so."""

    @model_validator(mode="after")
    def _one_source(self) -> Attachment:
        sources = [name for name in ("file", "data", *_URL_FIELDS) if getattr(self, name) is not None]
        if len(sources) != 1:
            raise ValueError(
                "an attachment needs exactly one of file, data, image_url, document_url, audio_url, video_url"
                f" (got {', '.join(sources) or 'none'})"
            )
        source = sources[0]
        if self.media_type is not None and not _MEDIA_TYPE.match(self.media_type):
            raise ValueError(f"media_type {self.media_type!r} is not a MIME type such as image/png")
        if source == "data":
            if self.media_type is None:
                raise ValueError("inline data needs a media_type")
            if _base64_size(self.data or "") is None:
                raise ValueError("data is not valid base64")
        if self.url is not None and self.media_type is None and guess_media_type(self.url) is None:
            raise ValueError(f"cannot tell the media type of {self.url!r} from its extension: give media_type")
        if self.outside and source != "file":
            raise ValueError("outside is for a file")
        if self.force_download is not False and self.url is None:
            raise ValueError("force_download is for a URL")
        return self

    @property
    def url(self) -> str | None:
        """The URL, for a URL attachment."""
        return next((value for name in _URL_FIELDS if (value := getattr(self, name)) is not None), None)

    @property
    def url_kind(self) -> Literal["image-url", "document-url", "audio-url", "video-url"] | None:
        """pydantic-ai's kind of a URL attachment (`image-url`, ...); None for a file."""
        for name, kind in zip(_URL_FIELDS, ("image-url", "document-url", "audio-url", "video-url"), strict=True):
            if getattr(self, name) is not None:
                return kind  # pyright: ignore[reportReturnType]
        return None

    @property
    def resolved_media_type(self) -> str | None:
        """`media_type`, else what the file's or URL's extension says (None for a file the table does not know)."""
        name = self.file or self.url
        return self.media_type or (guess_media_type(name) if name is not None else None)


def _base64_size(text: str) -> int | None:
    try:
        return len(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError):
        return None


def _item_kind(value: object) -> str:
    """Which member validates a user-message item: a mapping is an attachment, anything else text (so a typo in
    an attachment is reported against the attachment's fields, not as "not a string")."""
    return "Attachment" if isinstance(value, dict | Attachment) else "str"


UserContentItem = Annotated[
    Annotated[str, Tag("str")] | Annotated[Attachment, Tag("Attachment")], Discriminator(_item_kind)
]
"""One item of a user message: a piece of text or an attachment."""

UserMessage = str | tuple[UserContentItem, ...]
"""What a turn's `user` holds: text, or text and attachments in order."""
