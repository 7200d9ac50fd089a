"""The canonical history: message and part types that outlive any pydantic-ai version.

This is the removal contract's data model. It imports nothing from pydantic-ai (a test proves
it), so an application's stored state stays readable whether pydantic-ai is upgraded, pinned
back, or gone.

A history is a list of `Message`s. Each message is a `request` (what was sent to the model:
user text, tool returns, retry prompts, system prompts) or a `response` (what the model said:
text, thoughts, tool calls). `parts` is the single source of truth: there is no separate list
of tool calls, and the order of parts is kept.

Values are frozen, slotted, keyword-only dataclasses. Operations return new values instead of
mutating, so a history handed to a report can never change under it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

JsonValue: TypeAlias = Any
"""Anything orjson can write: str, int, float, bool, None, list and dict of those."""

ToolOutcome: TypeAlias = Literal["success", "failed", "denied", "interrupted"]
"""How a tool call ended, as recorded on its tool-return part (pydantic-ai's `ToolReturnPart.outcome`)."""

MessageKind: TypeAlias = Literal["request", "response"]

KNOWN_PART_KINDS: frozenset[str] = frozenset(
    {"text", "user-content", "tool-call", "tool-return", "retry-prompt", "system-prompt", "thought"}
)

UrlKind: TypeAlias = Literal["image-url", "document-url", "audio-url", "video-url"]
"""What a URL the user attached points at (pydantic-ai's `ImageUrl`, `DocumentUrl`, `AudioUrl`, `VideoUrl`)."""

URL_KINDS: tuple[UrlKind, ...] = ("image-url", "document-url", "audio-url", "video-url")


@dataclass(frozen=True, slots=True, kw_only=True)
class TextPart:
    """Text: the user's words in a request, the assistant's words in a response."""

    content: str
    """The text itself."""
    part_kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class FileContent:
    """A file the user attached, carried in the message itself (an image, a document, audio, any bytes):
    pydantic-ai's `BinaryContent`. Written with its media type and the SHA-256 of its bytes."""

    data: bytes
    """The file's bytes (base64 in JSON)."""
    media_type: str
    """The MIME type, e.g. `image/png`, `application/pdf`."""
    identifier: str | None = None
    """The name the model may refer to it by, when one was set explicitly; None for pydantic-ai's default (the
    first six hex digits of the data's SHA-1)."""
    vendor_metadata: dict[str, JsonValue] | None = None
    """Provider-specific options (e.g. OpenAI's image `detail`)."""
    kind: Literal["binary"] = "binary"

    @property
    def sha256(self) -> str:
        """The SHA-256 of `data`, as hex: how checks and diffs name the content."""
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class UrlContent:
    """A URL the user attached (pydantic-ai's `ImageUrl`, `DocumentUrl`, ...): the model's provider fetches it,
    agentrig never does."""

    url: str
    """The URL as given (`https:`, `data:`, a provider's file URL)."""
    kind: UrlKind
    """What it points at: `image-url`, `document-url`, `audio-url` or `video-url`."""
    media_type: str | None = None
    """The MIME type; None when it was neither given nor inferable from the URL."""
    identifier: str | None = None
    """The name the model may refer to it by, when set explicitly (pydantic-ai's default: SHA-1 of the URL)."""
    force_download: JsonValue = False
    """Download the URL and send its bytes instead (pydantic-ai's `force_download`); False by default."""
    vendor_metadata: dict[str, JsonValue] | None = None
    """Provider-specific options."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OpaqueContent:
    """An item of user content the canonical model does not know (a cache point, an uploaded file id), kept verbatim:
    written back as `{"kind": kind, **data}`."""

    kind: str
    """The item's kind as it appeared in the input."""
    data: dict[str, JsonValue]
    """Every other key of the item, untouched."""


UserContent: TypeAlias = str | FileContent | UrlContent | OpaqueContent
"""One item of a user message that holds more than text: a piece of text or an attachment."""

UserPrompt: TypeAlias = str | tuple[UserContent, ...]
"""What the user sends in a turn: text, or text and attachments in order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UserContentPart:
    """The user's message when it holds more than one text: text pieces and attachments, in order (pydantic-ai's
    `UserPromptPart` with a list as content; tinyagent's user message with image blocks)."""

    content: tuple[UserContent, ...]
    """Strings are text; the other items are files and URLs."""
    part_kind: Literal["user-content"] = "user-content"

    @property
    def attachments(self) -> tuple[FileContent | UrlContent | OpaqueContent, ...]:
        """The items that are not text."""
        return tuple(item for item in self.content if not isinstance(item, str))

    @property
    def text(self) -> str:
        """The text items, joined by a newline."""
        return "\n".join(item for item in self.content if isinstance(item, str))


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallPart:
    """The model asks for a tool to be run."""

    tool_call_id: str
    """Links the call to its tool-return or retry-prompt part. Required."""
    tool_name: str
    """The tool's name as the model wrote it."""
    args: dict[str, JsonValue] | str = field(default_factory=dict[str, JsonValue])
    """Arguments: a JSON object as a dict, or the raw string the model wrote when it is not a JSON object
    (malformed JSON, a list, a bare string). A raw string is kept verbatim so its meaning is never lost."""
    part_kind: Literal["tool-call"] = "tool-call"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolReturnPart:
    """The result of a tool call, sent back to the model."""

    tool_call_id: str
    """The id of the call this answers. Required."""
    content: JsonValue
    """What the tool returned, as JSON."""
    tool_name: str | None = None
    """The tool's name (pydantic-ai records it; the seed wire format may omit it)."""
    outcome: ToolOutcome = "success"
    """How the call ended; `interrupted` for calls closed by cleanup or cancellation."""
    part_kind: Literal["tool-return"] = "tool-return"


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPromptPart:
    """The model is asked to try again: a tool raised ModelRetry, arguments failed validation,
    or the output failed validation.

    pydantic-ai wrote this as `RetryPromptPart` before 2.60 and as `ToolReturnPart(outcome='retried')`
    (tool retries) or `RetryFeedbackPart` (output retries) from 2.60 on; all three are this one part.
    """

    content: str | list[dict[str, JsonValue]]
    """The retry message, or the list of validation error details."""
    tool_name: str | None = None
    """The tool that is retried; None for an output retry."""
    tool_call_id: str | None = None
    """The call that is retried; None for an output retry (pydantic-ai < 2.60 gave those a random id
    that references no call; 2.60+ gives none, so the canonical form keeps none)."""
    part_kind: Literal["retry-prompt"] = "retry-prompt"


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemPromptPart:
    """A system prompt. Allowed in a request being built, never in a persisted history."""

    content: str
    """The prompt text."""
    part_kind: Literal["system-prompt"] = "system-prompt"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThoughtPart:
    """The model's reasoning (pydantic-ai's `ThinkingPart`)."""

    content: str
    """The reasoning text."""
    signature: str | None = None
    """Provider signature that some APIs require to send the thought back."""
    provider_name: str | None = None
    """The provider that wrote it; pydantic-ai sends a signed thought back only to the same provider."""
    id: str | None = None
    """The provider's id of the reasoning item (e.g. OpenAI's `rs_...`), needed to send it back."""
    provider_details: dict[str, JsonValue] | None = None
    """Whatever else the provider attached to the thought (e.g. encrypted or raw reasoning content)."""
    part_kind: Literal["thought"] = "thought"


@dataclass(frozen=True, slots=True, kw_only=True)
class OpaquePart:
    """A part kind the canonical model does not know, kept verbatim so it is never dropped silently.

    Written back exactly as it was read: `{"part_kind": part_kind, **data}`.
    """

    part_kind: str
    """The kind as it appeared in the input (e.g. `file`, `builtin-tool-call`, `user-prompt` with images)."""
    data: dict[str, JsonValue]
    """Every other key of the part, untouched."""


Part: TypeAlias = (
    TextPart
    | UserContentPart
    | ToolCallPart
    | ToolReturnPart
    | RetryPromptPart
    | SystemPromptPart
    | ThoughtPart
    | OpaquePart
)


def prompt_part(prompt: UserPrompt) -> TextPart | UserContentPart:
    """The request part of a user prompt: text as a `text` part, text and attachments as a `user-content` part."""
    return TextPart(content=prompt) if isinstance(prompt, str) else UserContentPart(content=prompt)


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One message of a history: a request to the model or a response from it."""

    kind: MessageKind
    """`request` (sent to the model) or `response` (written by the model)."""
    parts: tuple[Part, ...] = ()
    """Ordered parts; the single source of truth for text, tool calls and returns."""
    run_id: str | None = None
    """The pydantic-ai run that produced the message, when known. Cleared by `sanitize_history_for_resume`."""
    state: str | None = None
    """pydantic-ai's message `state` when it is not `complete` (e.g. `interrupted` after a cancelled run: it is
    what makes the next run close the unanswered calls). None means complete."""

    @staticmethod
    def request(*parts: Part, run_id: str | None = None) -> Message:
        """A request message built from parts."""
        return Message(kind="request", parts=tuple(parts), run_id=run_id)

    @staticmethod
    def response(*parts: Part, run_id: str | None = None) -> Message:
        """A response message built from parts."""
        return Message(kind="response", parts=tuple(parts), run_id=run_id)

    def with_parts(self, parts: Iterable[Part]) -> Message:
        """The same message with other parts."""
        return Message(kind=self.kind, parts=tuple(parts), run_id=self.run_id, state=self.state)

    @property
    def text(self) -> str:
        """All text parts joined with no separator (pydantic-ai's `ModelResponse.text`)."""
        return "".join(p.content for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool-call parts of this message, in order."""
        return [p for p in self.parts if isinstance(p, ToolCallPart)]


History: TypeAlias = Sequence[Message]


# --- helpers the UI side needs (verification checklist: "UI can still extract the latest assistant
# --- response without depending on ModelResponse")


def latest_response_text(history: History) -> str | None:
    """Text of the latest response that has any text, or None when no response has text."""
    for message in reversed(history):
        if message.kind == "response":
            text = message.text
            if text:
                return text
    return None


def iter_parts(history: History) -> Iterator[tuple[int, int, Part]]:
    """Every part with its message index and part index."""
    for message_index, message in enumerate(history):
        for part_index, part in enumerate(message.parts):
            yield message_index, part_index, part


def tool_call_ids(history: History) -> list[str]:
    """Ids of every tool call, in history order (duplicates kept, so a checker can see them)."""
    return [p.tool_call_id for _, _, p in iter_parts(history) if isinstance(p, ToolCallPart)]


def tool_return_ids(history: History) -> list[str]:
    """Ids answered by tool-return parts, in history order."""
    return [p.tool_call_id for _, _, p in iter_parts(history) if isinstance(p, ToolReturnPart)]


def tool_retry_ids(history: History) -> list[str]:
    """Ids answered by tool-bound retry prompts, in history order."""
    return [
        p.tool_call_id
        for _, _, p in iter_parts(history)
        if isinstance(p, RetryPromptPart) and p.tool_call_id is not None
    ]
