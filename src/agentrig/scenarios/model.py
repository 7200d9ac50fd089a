"""The scenario format: what a YAML scenario file may say, as validated, frozen values.

These models are the single source of the format: the loader validates against them, `agentrig
schema` prints their JSON Schema, and `docs/scenarios.md` is generated from their field docs.
Imports pydantic (not pydantic-ai, not typer), so `agentrig validate` stays fast.

Every model forbids unknown keys: a typo in a scenario file is an error naming the line, not a
silently ignored setting.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentrig.scenarios.event_model import EventExpectations
from agentrig.scenarios.field_docs import add_field_descriptions

JsonValue = Any


class _Strict(BaseModel):
    # The docstring under each field becomes its JSON Schema description (`agentrig schema`, editor
    # hovers) and its line in docs/scenarios.md. Added when a schema is generated, not at import:
    # pydantic's `use_attribute_docstrings` would double the import time of this module (see field_docs).
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, json_schema_extra=add_field_descriptions
    )


# --------------------------------------------------------------------------------------------
# Tools declared in YAML (self-contained agents)
# --------------------------------------------------------------------------------------------


class ToolResult(_Strict):
    """One canned outcome of a YAML tool. Rules are tried in order; the first that matches the call is used.
    Exactly one of `return`, `retry`, `fail` or `defer` says what happens; `delay` may be added to any."""

    when: dict[str, JsonValue] | None = None
    """Match only calls whose args contain these key/values (subset match)."""
    call: int | None = Field(default=None, ge=1)
    """Match only the Nth call of this tool in the scenario (1-based)."""
    return_: JsonValue = Field(default=None, alias="return")
    """The value the tool returns."""
    retry: str | None = None
    """Raise `ModelRetry` with this message: the model is asked to try again."""
    fail: str | None = None
    """Raise a non-retryable error with this message: the run fails with a tool error."""
    defer: bool = False
    """Defer the call to the host (`CallDeferred`); the turn ends with pending calls."""
    delay: float = Field(default=0.0, ge=0)
    """Seconds to wait before the outcome (exercises timeouts, parallelism and abort)."""

    @model_validator(mode="after")
    def _one_outcome(self) -> ToolResult:
        chosen = [
            name
            for name, present in (
                ("return", "return_" in self.model_fields_set),
                ("retry", self.retry is not None),
                ("fail", self.fail is not None),
                ("defer", self.defer),
            )
            if present
        ]
        if len(chosen) != 1:
            raise ValueError(f"a tool result needs exactly one of return, retry, fail, defer (got {chosen or 'none'})")
        return self


class ToolSpec(_Strict):
    """A tool of a self-contained agent, with canned outcomes instead of real code."""

    description: str = ""
    """What the tool does, as the model sees it."""
    parameters: dict[str, JsonValue] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON Schema of the tool's arguments."""
    results: tuple[ToolResult, ...] = ()
    """Canned outcomes, tried in order; a call no rule matches fails the scenario with a clear message."""
    retries: int | None = Field(default=None, ge=0)
    """How many retries this tool allows (pydantic-ai's per-tool `retries`); default: the scenario setting."""
    sequential: bool = False
    """Run this tool alone, never in parallel with others."""


# --------------------------------------------------------------------------------------------
# The scripted model
# --------------------------------------------------------------------------------------------


class ScriptedToolCall(_Strict):
    """A tool call in a scripted model response."""

    id: str
    """The tool_call_id."""
    name: str
    """The tool to call."""
    args: dict[str, JsonValue] | str = Field(default_factory=dict)
    """Arguments as a mapping, or as a raw string (to exercise malformed JSON)."""


class ScriptedUsage(_Strict):
    """Token usage the scripted response reports. Give it on every step: pydantic-ai's estimate differs
    between versions, so scripts without usage cannot have version-independent usage expectations."""

    input_tokens: int = Field(default=0, ge=0)
    """Tokens the request consumed (prompt tokens)."""
    output_tokens: int = Field(default=0, ge=0)
    """Tokens the response produced (completion tokens)."""
    cache_read_tokens: int = Field(default=0, ge=0)
    """Input tokens served from the provider's prompt cache."""
    cache_write_tokens: int = Field(default=0, ge=0)
    """Input tokens written to the provider's prompt cache."""


ProviderErrorKind = Literal["context_length", "rate_limit", "server_error", "auth", "connection"]


class ScriptedError(_Strict):
    """The model call fails as a provider would."""

    kind: ProviderErrorKind
    """Which failure: context window exceeded, 429, 5xx, 401, or a dropped connection."""
    message: str = ""
    """The provider's message (a default per kind is used when empty)."""


class ModelInputCheck(_Strict):
    """Checks on what the model received at this step (the messages pydantic-ai sent it)."""

    no_system_prompt_from_history: bool = False
    """No system prompt came from the stored history (only the agent's own may appear, in the first request)."""
    no_dangling_tool_calls: bool = False
    """Every tool call the model sees has a return or retry before the next request."""
    message_count: int | None = None
    """Exactly this many messages were sent."""
    contains_text: tuple[str, ...] = ()
    """Each string appears in some text, tool-return or retry part the model saw."""
    not_contains_text: tuple[str, ...] = ()
    """No text, tool-return or retry part the model saw contains any of these."""
    tools: tuple[str, ...] | None = None
    """Exactly these tool names were offered (order ignored)."""


class ModelStep(_Strict):
    """One scripted model response, in order. A step may combine thought, text and tool calls (one
    response with those parts, in that order), or be `empty`, an `error`, an `abort` point or a
    compaction `summary`."""

    text: str | None = None
    """Text the model answers. A tool call written inside text (`<tool_call>{...}</tool_call>`) exercises
    fallback parsing."""
    chunks: tuple[str, ...] | None = None
    """How a streamed run delivers `text`: these deltas, in order (they must join to `text`). Omitted: up to
    three deltas, cut at word boundaries."""
    thought: str | None = None
    """Reasoning emitted before the text and calls."""
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
    summary: str | None = None
    """Answer a compaction summarize request with this summary."""
    expect_input: ModelInputCheck | None = None
    """Checks on what the model received at this step."""

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
        if self.chunks is not None and "".join(self.chunks) != (self.text or ""):
            raise ValueError("chunks must join to text")
        return self


# --------------------------------------------------------------------------------------------
# Expectations
# --------------------------------------------------------------------------------------------


class OutputExpectation(_Strict):
    """Checks on the turn's (or the last turn's) output text."""

    equals: str | None = None
    """The output is exactly this text."""
    contains: tuple[str, ...] | str = ()
    """The output contains this text (or each of these texts)."""
    not_contains: tuple[str, ...] | str = ()
    """The output contains none of these texts."""
    regex: str | None = None
    """A Python regular expression searched in the output."""
    json_schema: dict[str, JsonValue] | None = None
    """The output parses as JSON and validates against this schema."""


class ToolCallMatcher(_Strict):
    """One expected tool call."""

    name: str
    """The tool name."""
    args: dict[str, JsonValue] | None = None
    """Expected arguments; compared per `args_match`. Omitted: any args."""
    args_match: Literal["exact", "subset"] = "subset"
    """exact: the arguments equal `args`; subset: every key of `args` is present with that value."""
    id: str | None = None
    """Expected tool_call_id."""


ToolCallStatus = Literal["registered", "running", "completed", "failed", "cancelled"]


class ToolCallsExpectation(_Strict):
    """Checks on the tool calls made in a turn (or the whole scenario)."""

    used: tuple[str, ...] = ()
    """These tools were called at least once."""
    not_used: tuple[str, ...] = ()
    """These tools were never called."""
    sequence: tuple[ToolCallMatcher, ...] = ()
    """Expected calls, compared per `order`."""
    order: Literal["exact", "in_order", "any_order"] = "exact"
    """exact: the calls are exactly `sequence`; in_order: `sequence` is a subsequence; any_order: each matcher
    matches a distinct call."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Exact number of calls per tool name."""
    status: dict[str, ToolCallStatus] = Field(default_factory=dict)
    """Final registry status per tool_call_id."""


class Bounds(_Strict):
    """An inclusive range."""

    min: int | None = None
    """The smallest accepted value."""
    max: int | None = None
    """The largest accepted value."""


UsageValue = int | Bounds


class UsageExpectation(_Strict):
    """Exact values or bounds on the normalized usage of the turn (or scenario)."""

    requests: UsageValue | None = None
    """Model requests made."""
    tool_calls: UsageValue | None = None
    """Tool calls executed."""
    input_tokens: UsageValue | None = None
    """Input tokens, summed over requests."""
    output_tokens: UsageValue | None = None
    """Output tokens, summed over requests."""
    cache_read_tokens: UsageValue | None = None
    """Cache-read input tokens, summed over requests."""
    cache_write_tokens: UsageValue | None = None
    """Cache-write input tokens, summed over requests."""
    total_tokens: UsageValue | None = None
    """Input plus output tokens."""


RunErrorKind = Literal[
    "context_length",
    "rate_limit",
    "server_error",
    "auth",
    "connection",
    "usage_limit",
    "max_iterations",
    "timeout",
    "tool_failed",
    "unexpected_model_behavior",
    "script_exhausted",
    "script_mismatch",
    "replay_mismatch",
    "agent_error",
]
"""Every `agentrig.runtime.history.run_records.RunErrorKind` (a test keeps the two lists equal)."""


class ErrorExpectation(_Strict):
    """The turn is expected to end with this error."""

    kind: RunErrorKind
    """The classified cause of the error."""
    contains: str | None = None
    """The error message contains this text."""


CompactionStatus = Literal["compacted", "skipped", "failed"]


class CompactionExpectation(_Strict):
    """Checks on the compaction outcome of a turn."""

    status: CompactionStatus
    """What the compaction check did before the turn's requests."""
    reason: str | None = None
    """e.g. below_threshold, no_valid_boundary, summary_failed."""
    compacted_messages: int | None = None
    """How many messages the summary replaced."""


class TurnExpectations(_Strict):
    """What must hold after one turn."""

    output: OutputExpectation | None = None
    """Checks on the output text."""
    tool_calls: ToolCallsExpectation | None = None
    """Checks on the tool calls made."""
    usage: UsageExpectation | None = None
    """Exact values or bounds on the usage."""
    error: ErrorExpectation | None = None
    """The run is expected to end with this error (without it, any error fails the scenario)."""
    interrupted: bool | None = None
    """The turn was aborted and ended with an `[INTERRUPTED]` response."""
    compaction: CompactionExpectation | None = None
    """Checks on the compaction outcome."""


InvariantName = Literal[
    "no_dangling_tool_calls",
    "no_orphaned_tool_returns",
    "no_consecutive_requests",
    "no_persisted_system_prompt",
    "no_duplicate_tool_call_ids",
    "registry_matches_parts",
]


class ScenarioExpectations(TurnExpectations):
    """What must hold after the whole scenario: turn checks applied to the final state, plus these."""

    invariants: Literal["all", "none"] | tuple[InvariantName, ...] = "all"
    """History invariants to check on the exported history (all by default)."""
    golden: str | None = None
    """Path (relative to the scenario file) of the golden canonical history, compared exactly."""
    events: EventExpectations = Field(default_factory=EventExpectations)
    """Checks on the event log (docs/events.md); its built-in rules run unless `rules: none`."""


# --------------------------------------------------------------------------------------------
# Turns, settings, the scenario
# --------------------------------------------------------------------------------------------


class Turn(_Strict):
    """One user request and the scripted model responses that answer it."""

    user: str | None = None
    """The user's message. Omitted: continue without a prompt (pending or deferred calls)."""
    model: tuple[ModelStep, ...] = ()
    """The scripted model responses, in order. Ignored when running against a real model."""
    deferred_results: dict[str, JsonValue] | None = None
    """Results for calls deferred in the previous turn, by tool_call_id (continue without a prompt)."""
    expect: TurnExpectations = Field(default_factory=TurnExpectations)
    """What must hold after this turn."""


class CompactionSettings(_Strict):
    """Context compaction for long sessions (see docs/compaction.md)."""

    context_window: int = Field(ge=1)
    """The model's context window in tokens (`max_tokens` of the controller)."""
    reserve: int = Field(default=0, ge=0)
    """Tokens kept free for the model's answer."""
    keep_recent: int = Field(default=0, ge=0)
    """Tokens of recent history never summarized."""

    @model_validator(mode="after")
    def _leaves_room(self) -> CompactionSettings:
        # The threshold is context_window - reserve - keep_recent: it must leave room for a history.
        if self.context_window <= self.reserve + self.keep_recent:
            raise ValueError(
                f"context_window ({self.context_window}) must exceed reserve ({self.reserve}) + keep_recent "
                f"({self.keep_recent})"
            )
        return self


class Settings(_Strict):
    """Run settings that change behaviour."""

    max_iterations: int = Field(default=20, ge=1)
    """Model requests per turn before the run is stopped."""
    tool_retries: int = Field(default=1, ge=0)
    """Retries allowed per tool (pydantic-ai's default is 1)."""
    output_retries: int = Field(default=1, ge=0)
    """Retries allowed when the output fails validation."""
    timeout: float | None = Field(default=None, gt=0)
    """Seconds per turn before the run is interrupted."""
    request_limit: int | None = Field(default=None, ge=1)
    """pydantic-ai `UsageLimits.request_limit`: model requests per turn before a `usage_limit` error."""
    tool_calls_limit: int | None = Field(default=None, ge=0)
    """pydantic-ai `UsageLimits.tool_calls_limit`: tool calls per turn before a `usage_limit` error."""
    input_tokens_limit: int | None = Field(default=None, ge=0)
    """pydantic-ai `UsageLimits.input_tokens_limit`."""
    output_tokens_limit: int | None = Field(default=None, ge=0)
    """pydantic-ai `UsageLimits.output_tokens_limit`."""
    total_tokens_limit: int | None = Field(default=None, ge=0)
    """pydantic-ai `UsageLimits.total_tokens_limit`."""
    prune_keep_recent_tool_outputs: int | None = Field(default=None, ge=0)
    """Prune the content of all but the N most recent tool returns before each request."""
    compaction: CompactionSettings | None = None
    """Compact the history when it nears the context window. Omitted: no compaction."""


class Scenario(_Strict):
    """One scenario: an agent, a script, and what must hold."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    """Unique name; used for output directories and `-k` filters."""
    description: str = ""
    """What the scenario proves, in a sentence."""
    tags: tuple[str, ...] = ()
    """Labels for selecting scenarios (`agentrig run -k`) and grouping reports."""
    agent: str | None = Field(default=None, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
    """The user's own agent as `module:attribute` (an `Agent` or a zero-argument factory). Its real tools run;
    its model is replaced by the script."""
    system_prompt: str | None = None
    """System prompt of a self-contained agent (inline)."""
    system_prompt_file: str | None = None
    """System prompt read from a file (relative to the scenario file)."""
    context_file: str | None = None
    """A guide such as AGENTS.md, appended to the system prompt under `<user_context>`."""
    tools: dict[str, ToolSpec] = Field(default_factory=dict)
    """Self-contained tools with canned outcomes, by name."""
    initial_history: str | None = None
    """A canonical, legacy, session or pydantic-ai dump file (relative to the scenario file) the run resumes from."""
    settings: Settings = Field(default_factory=Settings)
    """Run settings: limits, retries, timeout, pruning, compaction."""
    stream: bool = False
    """Run every turn through pydantic-ai's streaming API (`agentrig run --stream` sets it for every scenario)."""
    turns: tuple[Turn, ...] = Field(min_length=1)
    """The conversation, one user request per turn, run in order on one session."""
    expect: ScenarioExpectations = Field(default_factory=ScenarioExpectations)
    """What must hold after the last turn."""

    @model_validator(mode="after")
    def _prompt_sources(self) -> Scenario:
        if self.system_prompt is not None and self.system_prompt_file is not None:
            raise ValueError("give system_prompt or system_prompt_file, not both")
        if self.agent is not None and self.tools:
            raise ValueError(
                "tools are declared by the agent named in `agent`; YAML tools are for self-contained agents"
            )
        return self


ScenarioFile = Annotated[Scenario | list[Scenario], Field(description="One scenario, or a list of scenarios")]
