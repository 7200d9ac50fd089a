"""The scenario format's expectations: what must hold after a turn (`TurnExpectations`) and after the whole scenario
(`ScenarioExpectations`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentrig.scenarios._strict import JsonValue
from agentrig.scenarios._strict import Strict as _Strict
from agentrig.scenarios.control_expectations import CancellationExpectation, SteeringExpectation
from agentrig.scenarios.event_model import EventExpectations
from agentrig.scenarios.judge_model import JudgeExpectation
from agentrig.scenarios.ui_model import UiAnswerExpectation, UiEventsGolden

__all__ = [
    "Bounds",
    "CompactionExpectation",
    "CompactionStatus",
    "ErrorExpectation",
    "InvariantName",
    "OutputExpectation",
    "RunErrorKind",
    "ScenarioExpectations",
    "ToolCallMatcher",
    "ToolCallStatus",
    "ToolCallsExpectation",
    "TurnExpectations",
    "UsageExpectation",
    "UsageValue",
]


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
    "incomplete_response",
    "usage_limit",
    "max_iterations",
    "timeout",
    "tool_failed",
    "unexpected_model_behavior",
    "script_exhausted",
    "script_mismatch",
    "replay_mismatch",
    "unsupported",
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
    steering: tuple[SteeringExpectation, ...] = ()
    """Checks on the turn's steering messages (see `SteeringExpectation`)."""
    cancelled: CancellationExpectation | None = None
    """Checks on the snapshot of a turn cancelled at its `cancel` point."""
    pending_calls: tuple[str, ...] | None = None
    """The calls still waiting for the host after this turn, in call order (the first is the one handed over
    next); `[]`: none."""
    ui: UiAnswerExpectation | None = None
    """Checks on the answer to a UI turn (`ui:`): its HTTP status and its encoded events."""
    judge: JudgeExpectation | tuple[JudgeExpectation, ...] = ()
    """Rubrics a judge model grades the output or the conversation against (one, or a list): each a check with the
    verdict's score and reason (docs/evaluation.md)."""


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
    max_latency_s: float | None = Field(default=None, gt=0)
    """The scenario's measured wall time, in seconds, is at most this: from its start to its last turn's end (its
    checks not counted), on whichever model ran it; a replay from a recording is measured too (and is fast)."""
    max_cost_usd: float | None = Field(default=None, ge=0)
    """What the scenario's model requests cost, in US dollars (its `cost.usd`, priced as the run prices them: live
    and replayed requests alike), is at most this. A scripted run costs 0; a real model with no price fails the
    check, saying so."""
    max_requests: int | None = Field(default=None, ge=0)
    """The scenario made at most this many model requests (its `usage.requests`, every turn's; a request retried
    after a provider error counts once)."""
    min_score: float | None = Field(default=None, ge=0, le=1)
    """The scenario's score is at least this: the mean of its judged checks' scores (turns' and the scenario's; a
    judged check without a verdict counts 0), checked as `scenario: score` (docs/evaluation.md)."""
