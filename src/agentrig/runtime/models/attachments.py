"""A scenario's attachments as canonical user content: what a turn's user sends, and what `expect_input.attachments`
says the model must have received. Framework-free: both engines and both scripted models use it.

A file is read when the turn runs, with the checks the loader made (`referenced_files.read_attachment`: a
regular file, bounded, inside the scenario's folder unless `outside: true`) made again, since the file may have
changed in between, on the descriptor it is then read from; a problem is a `ScenarioError` naming the file, line and
field. A URL is never fetched.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path

from agentrig.errors import ScenarioError
from agentrig.media_types import DEFAULT_FILE_MEDIA_TYPE
from agentrig.runtime.history.canonical import (
    FileContent,
    Message,
    OpaqueContent,
    UrlContent,
    UserContent,
    UserContentPart,
    UserPrompt,
)
from agentrig.runtime.history.run_records import Check
from agentrig.runtime.history.user_content import describe_prompt
from agentrig.scenarios.content_model import Attachment, UserMessage
from agentrig.scenarios.loader import LoadedScenario
from agentrig.scenarios.referenced_files import AttachmentProblem, read_attachment

__all__ = ["attachment_check", "attachment_content", "attachments_seen", "turn_prompt", "user_prompt"]


def attachment_content(attachment: Attachment, base_dir: Path, *, where: str = "") -> FileContent | UrlContent:
    """The canonical item an attachment stands for (a file read from `base_dir`)."""
    url, kind = attachment.url, attachment.url_kind
    if url is not None and kind is not None:
        return UrlContent(
            url=url,
            kind=kind,
            media_type=attachment.resolved_media_type,
            identifier=attachment.identifier,
            force_download=attachment.force_download,
            vendor_metadata=attachment.vendor_metadata,
        )
    if attachment.data is not None:
        data = base64.b64decode(attachment.data)
    else:
        try:
            data = read_attachment(attachment, base_dir)
        except AttachmentProblem as problem:
            raise ScenarioError(str(problem), field=f"{where}.file" if where else "file") from None
    return FileContent(
        data=data,
        media_type=attachment.resolved_media_type or DEFAULT_FILE_MEDIA_TYPE,
        identifier=attachment.identifier,
        vendor_metadata=attachment.vendor_metadata,
    )


def user_prompt(user: UserMessage | None, base_dir: Path, *, where: str = "user") -> UserPrompt | None:
    """A turn's `user` as the canonical prompt: text, or text and attachments (files read now)."""
    if user is None or isinstance(user, str):
        return user
    return tuple(
        item if isinstance(item, str) else attachment_content(item, base_dir, where=f"{where}[{index}]")
        for index, item in enumerate(user)
    )


def turn_prompt(loaded: LoadedScenario, index: int) -> UserPrompt | None:
    """Turn `index`'s prompt; a file that can no longer be sent is a `ScenarioError` at its line."""
    user = loaded.scenario.turns[index].user
    if user is None or isinstance(user, str):
        return user
    items: list[UserContent] = []
    for position, item in enumerate(user):
        if isinstance(item, str):
            items.append(item)
            continue
        field = f"turns[{index}].user[{position}]"
        try:
            items.append(attachment_content(item, loaded.base_dir, where=field))
        except ScenarioError as error:
            line = loaded.line_of("turns", index, "user", position, "file")
            raise ScenarioError(error.reason, path=loaded.path, line=line, field=error.field) from None
    return tuple(items)


def attachments_seen(messages: Sequence[Message]) -> list[FileContent | UrlContent | OpaqueContent]:
    """Every attachment of the user content in `messages` (canonical), in order."""
    return [
        item
        for message in messages
        if message.kind == "request"
        for part in message.parts
        if isinstance(part, UserContentPart)
        for item in part.attachments
    ]


def _matches(expected: Attachment, wanted: FileContent | UrlContent, seen: UserContent) -> bool:
    if isinstance(wanted, FileContent):
        same = isinstance(seen, FileContent) and (seen.sha256, seen.media_type) == (wanted.sha256, wanted.media_type)
    else:
        same = isinstance(seen, UrlContent) and (seen.kind, seen.url, seen.media_type) == (
            wanted.kind,
            wanted.url,
            wanted.media_type,
        )
    if not same or isinstance(seen, str | OpaqueContent):
        return False
    optional = [("identifier", expected.identifier), ("vendor_metadata", expected.vendor_metadata)]
    return all(value is None or getattr(seen, name) == value for name, value in optional)


def attachment_check(
    expected: Sequence[Attachment], seen: Sequence[UserContent], base_dir: Path, *, prefix: str
) -> Check:
    """`expect_input.attachments`: exactly these attachments reached the model, in order."""
    wanted = [attachment_content(item, base_dir, where=f"{prefix}.attachments") for item in expected]
    passed = len(wanted) == len(seen) and all(
        _matches(spec, item, got) for spec, item, got in zip(expected, wanted, seen, strict=True)
    )
    return Check(
        name=f"{prefix}.attachments",
        passed=passed,
        expected=[describe_prompt((item,)) for item in wanted],
        actual=[describe_prompt((item,)) for item in seen],
    )
