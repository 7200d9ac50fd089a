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
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

JsonValue: TypeAlias = Any
"""Anything orjson can write: str, int, float, bool, None, list and dict of those."""

ToolOutcome: TypeAlias = Literal["success", "failed", "denied", "interrupted"]
"""How a tool call ended, as recorded on its tool-return part (pydantic-ai's `ToolReturnPart.outcome`)."""

MessageKind: TypeAlias = Literal["request", "response"]

KNOWN_PART_KINDS: frozenset[str] = frozenset(
    {"text", "user-content", "tool-call", "tool-return", "retry-prompt", "system-prompt", "thought", "capability"}
)

UrlKind: TypeAlias = Literal["image-url", "document-url", "audio-url", "video-url"]
"""What a URL the user attached points at (pydantic-ai's `ImageUrl`, `DocumentUrl`, `AudioUrl`, `VideoUrl`)."""

URL_KINDS: tuple[UrlKind, ...] = ("image-url", "document-url", "audio-url", "video-url")


@dataclass(frozen=True, slots=True, kw_only=True)
class TextPart:
    """Text: the user's words in a request, the assistant's words in a response."""

    content: str
    """The text itself."""
    id: str | None = None
    """The provider's id of the text item (e.g. OpenAI Responses' `msg_...`); responses only."""
    provider_name: str | None = None
    """The provider that wrote the text; responses only."""
    provider_details: dict[str, JsonValue] | None = None
    """Whatever else the provider attached to the text; responses only."""
    citations: list[JsonValue] | None = None
    """The sources the provider cited for the text (pydantic-ai 2.68+ `TextPart.citations`), verbatim."""
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
    tool_kind: str | None = None
    """The tool's typed kind (pydantic-ai's `tool_kind`): `output` for an output tool's call (stamped by pydantic-ai
    2.78+, and by agentrig's engine on every version), a registered kind such as a tool search, or None."""
    ui_visibility: str | None = None
    """What a UI client is shown of the call: `public`, `redacted` or `private` (pydantic-ai 2.78+); None: the
    adapter's default."""
    id: str | None = None
    """The provider's id of the call item, when it has one apart from `tool_call_id`."""
    provider_name: str | None = None
    """The provider that wrote the call."""
    provider_details: dict[str, JsonValue] | None = None
    """Whatever else the provider attached to the call."""
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
    tool_kind: str | None = None
    """The tool's typed kind, as on its call (see `ToolCallPart.tool_kind`)."""
    ui_visibility: str | None = None
    """What a UI client is shown of the result: `public`, `redacted` (the call without its result) or `private`
    (neither); pydantic-ai 2.78+. None: the adapter's default."""
    metadata: JsonValue = None
    """Data the tool attached for the application (`ToolReturn(metadata=...)`), never sent to the model."""
    content_file_digests: list[str] | None = None
    """pydantic-ai's record of which mappings in `content` are its own file items (2.6x+ `content_file_digests`):
    only those are rebuilt as files when the history is loaded. None when pydantic-ai wrote no record."""
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
    cause: str | None = None
    """Why the retry was asked for, when it is not what the content says by its shape (`validation_error` for a
    list of error details, `model_retry` for a string): e.g. `no_output` (a response with nothing usable, sent to
    the model in the system voice), `unknown_tool`, `unavailable_tool` (pydantic-ai 2.60+ `RetryInfo.cause`)."""
    tool_kind: str | None = None
    """A tool retry's typed tool kind, as on its call."""
    ui_visibility: str | None = None
    """A tool retry's UI visibility, as on its call."""
    part_kind: Literal["retry-prompt"] = "retry-prompt"


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemPromptPart:
    """A system prompt. Allowed in a request being built, never in a persisted history."""

    content: str
    """The prompt text."""
    dynamic_ref: str | None = None
    """The dynamic system prompt function that wrote it, which pydantic-ai runs again on a new run."""
    context_id: str | None = None
    """The `<pyai:context>` element the prompt is sent as (pydantic-ai 2.68+), or None for the text as is."""
    scope: str | None = None
    """`request` when the model sees it only in its own request (pydantic-ai 2.68+); None: the conversation."""
    metadata: JsonValue = None
    """Data attached for the application, never sent to the model."""
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
class CapabilityPart:
    """Something a capability or the application told the model mid-conversation (pydantic-ai 2.78+
    `CapabilityPart`: data framed in a tag, or an instruction in the application's voice), enqueued with
    `ctx.enqueue`. pydantic-ai renders it before the model sees it; the application finds it again by `kind`."""

    kind: str
    """The part's kind, `namespace.name` (e.g. `myapp.weather`)."""
    content: JsonValue = None
    """What the model is shown: the text of an instruction, the data of a data part."""
    record_id: str | None = None
    """pydantic-ai's unique id of the record (a uuid7, new on every run: goldens leave it out)."""
    data: dict[str, JsonValue] = field(default_factory=dict[str, JsonValue])
    """Every other stored field, verbatim: `source`, `scope`, `capability_id`, `metadata`, `rendering` and the
    kind's own typed fields (e.g. `city`). Written back as keys of the part."""
    part_kind: Literal["capability"] = "capability"


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
    | CapabilityPart
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
    what makes the next run close the unanswered calls; `incomplete`: a response whose stream the provider ended
    early, 2.78+). None means complete."""
    conversation_id: str | None = None
    """The pydantic-ai conversation the message belongs to (2.54+), when known. Random per conversation: goldens
    and diffs leave it out, as they do `run_id`."""
    metadata: dict[str, JsonValue] | None = None
    """The message's metadata, verbatim: the application's, and pydantic-ai's own marks under `__pydantic_ai__`
    (2.78's `deferred_pause`: a request written when the run paused for deferred calls, which makes a resumed
    history pause again)."""
    failed_attempts: list[JsonValue] | None = None
    """A response's attempts that did not produce it (pydantic-ai 2.68+ `ModelResponse.failed_attempts`: fallbacks
    and retries), each with `model_name`, `provider_name`, `outcome`, `error`, `usage`, `kind` (`retry` or
    `fallback`, 2.78+) and `retry_after` (2.78+); their timestamps and durations are per-run and not kept."""
    workspace_ref: JsonValue = None
    """The workspace a response's run worked in (pydantic-ai 2.68+), so a run continuing the history reuses it."""

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
        return replace(self, parts=tuple(parts))

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


OPTIONAL_PART_FIELDS: dict[type, tuple[str, ...]] = {
    TextPart: ("id", "provider_name", "provider_details", "citations"),
    ToolCallPart: ("tool_kind", "ui_visibility", "id", "provider_name", "provider_details"),
    ToolReturnPart: ("tool_kind", "ui_visibility", "metadata", "content_file_digests"),
    RetryPromptPart: ("cause", "tool_kind", "ui_visibility"),
    SystemPromptPart: ("dynamic_ref", "context_id", "scope", "metadata"),
}
"""The fields of each part kind beyond the seed wire format: None unless pydantic-ai wrote a value, and then
written under their own name (left out of files when None, so histories that have none stay as they were)."""

OPTIONAL_MESSAGE_FIELDS: tuple[str, ...] = (
    "run_id",
    "state",
    "conversation_id",
    "metadata",
    "failed_attempts",
    "workspace_ref",
)
"""The fields of a message beside `kind` and `parts`, None unless set (written only when set)."""
