"""The scenario format's scripted model: one `ModelStep` per model response, in order, and what a step checks of
the input the model received (`expect_input`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from agentrig.scenarios._strict import JsonValue
from agentrig.scenarios._strict import Strict as _Strict
from agentrig.scenarios.content_model import Attachment

__all__ = [
    "MAX_SCRIPTED_TOKENS",
    "ModelInputCheck",
    "ModelStep",
    "ProviderErrorKind",
    "ScriptedError",
    "ScriptedThought",
    "ScriptedToolCall",
    "ScriptedUsage",
]


class ScriptedToolCall(_Strict):
    """A tool call in a scripted model response."""

    id: str
    """The tool_call_id."""
    name: str
    """The tool to call."""
    args: dict[str, JsonValue] | str = Field(default_factory=dict)
    """Arguments as a mapping, or as a raw string (to exercise malformed JSON)."""


MAX_SCRIPTED_TOKENS = 1_000_000_000_000
"""A trillion tokens per request, far past any model's window: the sums over a run's requests stay within the 64-bit
integers usage.json and report.json hold (a 30-digit count is a typo, refused at its line)."""


class ScriptedUsage(_Strict):
    """Token usage the scripted response reports. Give it on every step: pydantic-ai's estimate differs
    between versions, so scripts without usage cannot have version-independent usage expectations."""

    input_tokens: int = Field(default=0, ge=0, le=MAX_SCRIPTED_TOKENS)
    """Tokens the request consumed (prompt tokens)."""
    output_tokens: int = Field(default=0, ge=0, le=MAX_SCRIPTED_TOKENS)
    """Tokens the response produced (completion tokens)."""
    cache_read_tokens: int = Field(default=0, ge=0, le=MAX_SCRIPTED_TOKENS)
    """Input tokens served from the provider's prompt cache."""
    cache_write_tokens: int = Field(default=0, ge=0, le=MAX_SCRIPTED_TOKENS)
    """Input tokens written to the provider's prompt cache."""


ProviderErrorKind = Literal["context_length", "rate_limit", "server_error", "auth", "connection", "request_rejected"]

_STATUSES: dict[str, tuple[int, ...]] = {
    "context_length": (400, 413),
    "rate_limit": (429,),
    "auth": (401, 403),
    "request_rejected": tuple(s for s in range(400, 500) if s not in (401, 403, 408, 429)),
    "server_error": tuple(range(500, 600)),
}
"""The HTTP statuses a provider answers with for each kind of failure (a dropped connection has none)."""


class ScriptedError(_Strict):
    """The model call fails as a provider would."""

    kind: ProviderErrorKind
    """Which failure: context window exceeded, 429, 5xx, 401, a dropped connection, or any other 4xx the provider
    refused the request with (`request_rejected`: a bad request, an unknown model, a content filter)."""
    message: str = ""
    """The provider's message (a default per kind is used when empty)."""
    status: int | None = None
    """The HTTP status, when not the kind's usual one (400, 429, 500, 401; `request_rejected` 400): e.g. 503 for
    an overloaded server, 403 for a key without access, 404 for an unknown model. It must fit the kind."""

    @model_validator(mode="after")
    def _status_fits_kind(self) -> ScriptedError:
        if self.status is None:
            return self
        allowed = _STATUSES.get(self.kind, ())
        if self.status not in allowed:
            fits = "no status (it never got one)" if not allowed else f"{allowed[0]}..{allowed[-1]}"
            raise ValueError(f"status {self.status} does not fit kind {self.kind} ({fits})")
        return self


class ScriptedThought(_Strict):
    """A thought with what its provider attached: pydantic-ai's `ThinkingPart` with its signature and details."""

    content: str
    """The reasoning text."""
    signature: str | None = None
    """The provider's signature (Anthropic's, OpenAI's encrypted reasoning), sent back with the thought."""
    provider_name: str | None = None
    """The provider that wrote it (pydantic-ai sends a signed thought back only to the same provider)."""
    id: str | None = None
    """The provider's id of the reasoning item, e.g. OpenAI's `rs_...`."""
    provider_details: dict[str, JsonValue] | None = None
    """Anything else the provider attached to the thought."""


class ModelInputCheck(_Strict):
    """Checks on what the model received at this step (the messages pydantic-ai sent it)."""

    no_system_prompt_from_history: bool = False
    """No system prompt came from the stored history (only the agent's own may appear, in the first request)."""
    no_dangling_tool_calls: bool = False
    """Every tool call the model sees has a return or retry before the next request (a return pydantic-ai
    synthesized for a dangling call does not count: see `synthesized_returns`)."""
    synthesized_returns: tuple[str, ...] | None = None
    """Exactly these calls (tool_call_ids, in call order) reached the model answered only by a return pydantic-ai
    synthesized itself: its public history cleanup closes a dangling call as `interrupted` (`[]`: none). With
    `settings.prepare_history: false` this proves pydantic-ai's own cleanup."""
    message_count: int | None = None
    """Exactly this many messages were sent."""
    contains_text: tuple[str, ...] = ()
    """Each string appears in some text, tool-return or retry part the model saw, as the model reads it: a retry's
    message itself, not the `{"error": ...}` JSON that pydantic-ai 2.60+ wraps it in (so quotes match on every
    version)."""
    not_contains_text: tuple[str, ...] = ()
    """No text, tool-return or retry part the model saw contains any of these."""
    tools: tuple[str, ...] | None = None
    """Exactly these tool names were offered (order ignored): function tools and output tools (`final_result`), the
    tools `tool_calls` expectations count."""
    instructions_contain: tuple[str, ...] | str = ()
    """The instructions sent with this request (static and dynamic, as the agent built them) contain this text
    (or each of these texts)."""
    instructions_not_contain: tuple[str, ...] | str = ()
    """The instructions sent with this request contain none of these texts."""
    instructions: str | None = None
    """The instructions sent with this request are exactly this text (`""`: none). `agentrig scaffold --agent`
    writes it, so a changed prompt fails the replay."""
    system_prompt: str | None = None
    """The system prompt parts of this request (pydantic-ai's `system_prompt=`, sent with the first request of a
    conversation only), joined by blank lines, are exactly this text (`""`: none)."""
    attachments: tuple[Attachment, ...] | None = None
    """Exactly these attachments reached the model, in order, over every message it was sent (a file compared by
    its content and media type, a URL by its kind, URL and media type): e.g. `[{file: cat.png}]`."""


class ModelStep(_Strict):
    """One scripted model response, in order. A step may combine thought, text and tool calls (one
    response with those parts, in that order), or be `empty`, an `error`, an `abort` point or a
    compaction `summary`; a response may be `cut` short by the provider."""

    text: str | None = None
    """Text the model answers. A tool call written inside text (`<tool_call>{...}</tool_call>`) exercises
    fallback parsing."""
    chunks: tuple[str, ...] | None = None
    """How a streamed run delivers `text`: these deltas, in order (they must join to `text`). Omitted: up to
    three deltas, cut at word boundaries."""
    thought: str | ScriptedThought | None = None
    """Reasoning emitted before the text and calls: its text, or the thought with its provider's signature and
    details (`{content: ..., signature: ...}`)."""
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    """Tool calls in this response; several calls run in parallel."""
    usage: ScriptedUsage | None = None
    """The usage this response reports."""
    empty: bool = False
    """The model answers with no parts at all (exercises empty-response intervention)."""
    error: ScriptedError | None = None
    """The model call fails with a provider error instead of answering."""
    delay: float = Field(default=0.0, ge=0)
    """Seconds to wait before answering (exercises timeouts)."""
    abort: bool = False
    """Abort the run here, as Ctrl-C would: `text` (if any) is the partial text kept in `[INTERRUPTED]`."""
    cut: bool = False
    """The provider ends this response early, as a stream whose body closes before its last event: `text` (and
    `thought`) arrive, then the turn fails with a provider error of kind `incomplete_response` and `text` is kept in
    `[INTERRUPTED]` (streamed or not). `expect: {error: {kind: incomplete_response}}` expects it."""
    summary: str | None = None
    """Answer a compaction summarize request with this summary."""
    expect_input: ModelInputCheck | None = None
    """Checks on what the model received at this step."""

    @property
    def scripted_thought(self) -> ScriptedThought | None:
        """`thought` as a `ScriptedThought` (text alone has no signature)."""
        if isinstance(self.thought, str):
            return ScriptedThought(content=self.thought)
        return self.thought

    @model_validator(mode="after")
    def _coherent(self) -> ModelStep:
        has_content = self.text is not None or self.thought is not None or bool(self.tool_calls)
        specials = [
            n
            for n, on in (
                ("empty", self.empty),
                ("error", self.error is not None),
                ("summary", self.summary is not None),
            )
            if on
        ]
        if len(specials) > 1 or (specials and has_content):
            raise ValueError(f"a step is either a response (text/thought/tool_calls) or one of {specials}, not both")
        if not has_content and not specials and not self.abort:
            raise ValueError("a step needs text, thought, tool_calls, empty, error, summary or abort")
        if self.cut and (self.text is None or self.tool_calls or self.abort):
            raise ValueError("a cut step needs text (what arrived before the stream ended), no tool_calls or abort")
        if self.chunks is not None and "".join(self.chunks) != (self.text or ""):
            raise ValueError("chunks must join to text")
        return self
