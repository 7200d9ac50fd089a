"""The scenario format: what a YAML scenario file may say, as validated, frozen values.

These models are the single source of the format: the loader validates against them, `agentrig
schema` prints their JSON Schema, and `docs/scenarios.md` is generated from their field docs.
Imports pydantic (not pydantic-ai, not typer), so `agentrig validate` stays fast.

Every model forbids unknown keys: a typo in a scenario file is an error naming the line, not a
silently ignored setting.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from agentrig.scenarios._strict import Strict as _Strict
from agentrig.scenarios.composition_model import Composition
from agentrig.scenarios.control_expectations import ControlExpectations
from agentrig.scenarios.event_model import EventExpectations
from agentrig.scenarios.provider_settings import ProviderSettings as ProviderSettings  # re-exported, as ToolResult
from agentrig.scenarios.settings_model import CompactionSettings as CompactionSettings  # re-exported, as ToolResult
from agentrig.scenarios.settings_model import Settings
from agentrig.scenarios.tool_model import ToolResult as ToolResult  # re-exported: the format's models, one place
from agentrig.scenarios.tool_model import ToolSpec
from agentrig.scenarios.turn_controls import TurnControls
from agentrig.scenarios.ui_model import UiAnswerExpectation, UiEventsGolden, UiRequest

JsonValue = Any


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
    """The output parses as JSON and validates against this schema (a structured output is its JSON)."""
    json_equals: JsonValue = None
    """The output, as JSON (a structured output's JSON, or a str output parsed as JSON), equals this value;
    `null` for an `X | None` output that came back None."""
    json_subset: JsonValue = None
    """The output's JSON contains this value: every key of a mapping is present with a matching value
    (recursively); lists match element by element and must have the same length."""
    type: str | None = None
    """The output's type name: `str`, or the class of a structured output (`SupportOutput`, or qualified
    `myapp.models.SupportOutput`); for a union output it says which member came back (`NoneType` for None).
    A turn that pauses for the host has pydantic-ai's output `DeferredToolRequests`, as JSON
    `{calls: [...], approvals: [...]}` (each `{tool_call_id, tool_name, args}`; `metadata` when set)."""


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
    """Checks on the tool calls the model made in a turn (or the whole scenario): every call in its responses,
    output tool calls (`final_result`) and calls answered with a retry included, each attempt once."""

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
    """Function tool calls that ran and returned (pydantic-ai's `RunUsage.tool_calls`): a call answered with a retry
    or a failure, an output tool call and a deferred call are not counted. `tool_calls` expectations count every
    call the model made."""
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
    "request_rejected",
    "auth",
    "connection",
    "provider_timeout",
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


class TurnExpectations(ControlExpectations):
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
    ui: UiAnswerExpectation | None = None
    """Checks on the answer to a UI turn (`ui:`): its HTTP status and its encoded events."""


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
    ui_events: UiEventsGolden | None = None
    """Every UI turn's answer compared with a golden file (ids and timestamps masked), with the fields that differ
    between versions stated."""


# --------------------------------------------------------------------------------------------
# Turns, settings, the scenario
# --------------------------------------------------------------------------------------------


class ApprovalDecision(_Strict):
    """A decision on a call that asked for approval; exactly one of `deny` or `args`."""

    deny: str | None = None
    """Deny the call; the model is told this message."""
    args: dict[str, JsonValue] | None = None
    """Approve the call, running the tool with these arguments instead of the model's. Arguments the tool
    rejects fail the scenario (pydantic-ai only asks the model to retry), unless a `tool_calls` `status`
    names the call."""

    @model_validator(mode="after")
    def _one_decision(self) -> ApprovalDecision:
        if (self.deny is None) == (self.args is None):
            raise ValueError("an approval decision needs exactly one of deny or args")
        return self


class Turn(TurnControls):
    """One user request and the scripted model responses that answer it."""

    user: str | None = None
    """The user's message. Omitted: continue without a prompt (pending or deferred calls)."""
    model: tuple[ModelStep, ...] = ()
    """The scripted model responses, in order. Ignored when running against a real model."""
    deferred_results: dict[str, JsonValue] | None = None
    """Results for calls deferred in the previous turn (`CallDeferred`, external tools), by tool_call_id
    (continue without a prompt). Calls that asked for approval are answered under `approvals`."""
    approvals: dict[str, bool | ApprovalDecision] | None = None
    """Decisions on calls that asked for approval in the previous turn (`requires_approval`,
    `ApprovalRequired`), by tool_call_id (continue without a prompt): `true` approves (the real tool runs),
    `false` denies with pydantic-ai's default message, `{deny: message}` denies with that message,
    `{args: {...}}` approves with replaced arguments (which the tool must accept: see `args`)."""
    ui: UiRequest | None = None
    """The turn arrives as one request of a UI protocol (AG-UI, Vercel AI) to pydantic-ai's adapter, which reads
    the conversation from it and encodes the run as events (see `UiRequest`); no `user` then."""
    expect: TurnExpectations = Field(default_factory=TurnExpectations)
    """What must hold after this turn."""

    @model_validator(mode="after")
    def _resume_has_no_prompt(self) -> Turn:
        if self.approvals is not None and self.user is not None:
            raise ValueError("a turn with approvals continues the deferred calls: it takes no user prompt")
        if self.ui is not None:
            others = [name for name in ("user", "deferred_results", "approvals", "cancel") if getattr(self, name)]
            others += ["steer"] if self.steer else []
            if others:
                raise ValueError(f"a ui turn takes its conversation from the request: no {', '.join(others)}")
        return self


class SubAgentScript(_Strict):
    """The script of another agent the scenario's agent calls (a sub-agent a tool delegates to)."""

    model: tuple[ModelStep, ...] = Field(min_length=1)
    """The sub-agent's scripted responses, in order, across the whole scenario (every run of it takes the
    next steps)."""


_AGENT_SPEC = r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"


class Scenario(Composition):
    """One scenario: an agent, a script, and what must hold."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=100)
    """Unique name (at most 100 characters: it names the scenario's output directory and golden file); used for
    output directories and `-k` filters."""
    description: str = ""
    """What the scenario proves, in a sentence."""
    tags: tuple[str, ...] = ()
    """Labels for selecting scenarios (`agentrig run -k`) and grouping reports."""
    agent: str | None = Field(default=None, pattern=_AGENT_SPEC)
    """The user's own agent as `module:attribute` (an `Agent` or a zero-argument factory, called once per
    scenario). Its real tools run; its model is replaced by the script."""
    deps: str | None = Field(default=None, pattern=_AGENT_SPEC)
    """How to build the agent's deps, as `module:attribute` of a zero-argument callable (sync or async)
    returning them, or returning a (sync or async) context manager whose value is the deps and whose exit
    runs after the scenario. Default: `agentrig run --deps`, else None."""
    agents: dict[Annotated[str, Field(pattern=_AGENT_SPEC)], SubAgentScript] = Field(default_factory=dict)
    """Scripts for other agents, by `module:attribute` (e.g. a sub-agent a tool delegates to); each is run
    on its script through `agent.override(model=...)`. In a scripted run an agent with no script may not
    send a model request."""
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

    def referenced_files(self) -> dict[tuple[str | int, ...], str | None]:
        """The files the scenario names, by field path (each must exist next to the scenario file)."""
        files: dict[tuple[str | int, ...], str | None] = {
            ("system_prompt_file",): self.system_prompt_file,
            ("context_file",): self.context_file,
            ("initial_history",): self.initial_history,
        }
        for index, turn in enumerate(self.turns):
            if turn.ui is not None and turn.ui.input_file is not None:
                files["turns", index, "ui", "input_file"] = turn.ui.input_file
        return files

    @model_validator(mode="after")
    def _prompt_sources(self) -> Scenario:
        if self.system_prompt is not None and self.system_prompt_file is not None:
            raise ValueError("give system_prompt or system_prompt_file, not both")
        if self.agent is not None and self.tools:
            raise ValueError(
                "tools are declared by the agent named in `agent`; YAML tools are for self-contained agents"
            )
        if self.deps is not None and self.agent is None:
            raise ValueError("deps are for the agent named in `agent`; a self-contained agent has none")
        return self


ScenarioFile = Annotated[Scenario | list[Scenario], Field(description="One scenario, or a list of scenarios")]
