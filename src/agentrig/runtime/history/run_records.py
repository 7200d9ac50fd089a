"""What a run produces, as plain values: the contract between the orchestrator (which fills them)
and the expectation checker, the reports and the CLI (which read them). No pydantic-ai here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from agentrig.runtime.history.canonical import JsonValue, Message, ToolCallPart
from agentrig.runtime.history.provider_attempts import ProviderAttempts
from agentrig.runtime.history.turn_controls import CancellationSnapshot, SteeringDelivery
from agentrig.runtime.history.ui_exchange import UiExchange
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.warning_records import WarningRecord

RunErrorKind: TypeAlias = Literal[
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
"""Why a turn ended in error. Provider kinds map to exit code 3 when nothing expected them."""

PROVIDER_ERROR_KINDS: frozenset[str] = frozenset(
    {
        "context_length",
        "rate_limit",
        "server_error",
        "request_rejected",
        "auth",
        "connection",
        "provider_timeout",
        "incomplete_response",
    }
)
"""Kinds that say the provider failed (exit code 3); `provider_timeout`: a request got no answer in time;
`incomplete_response`: the provider ended a response before it finished it (a stream closed before its last event)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunError:
    """A turn that did not complete normally."""

    kind: RunErrorKind
    """The classified cause."""
    message: str
    """One line, safe to print (no secrets)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionOutcome:
    """What the compaction check did before a request."""

    status: Literal["compacted", "skipped", "failed"]
    reason: str
    """e.g. `threshold_exceeded`, `context_overflow`, `below_threshold`, `no_valid_boundary`, `summary_failed`."""
    compacted_messages: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    detail: str = ""
    """Why, in words, when the reason code alone does not say it (e.g. the summarizer's error)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStatusRecord:
    """The final registry state of one tool call."""

    tool_call_id: str
    tool_name: str
    status: Literal["registered", "running", "completed", "failed", "cancelled"]


SimulationEnd: TypeAlias = Literal["max_turns", "done", "stop", "error"]
"""Why a simulated conversation ended: its `max_turns` ran, the user model said it was done, an answer met its
`stop` condition, or a turn ended in error (or paused for the host)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulatedTurn:
    """How a turn of a simulated conversation (`simulate:`) came about: an ordinary turn, marked."""

    turn: int
    """The scenario's turn (0-based, in its `turns`) whose `simulate:` ran this one."""
    exchange: int
    """This turn's place in that conversation, from 1."""
    user: str
    """Who wrote the user message: `scenario` (the turn's own `user:`), `script`, or the user model's name."""
    ended: SimulationEnd | None = None
    """Set on the conversation's last turn: why it ended."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnRecord:
    """Everything one turn (one orchestrator request) produced."""

    index: int
    """0-based turn number."""
    request_id: str
    """8 hex chars (uuid4 prefix) assigned by the orchestrator."""
    prompt: str | None
    output: str | None
    """The final output text (a structured output's compact JSON); None when the turn failed before producing one."""
    output_json: JsonValue = None
    """A structured (non-str) output as JSON; None for a str output."""
    output_type: str | None = None
    """`str`, or the qualified type name of a structured output (which member of a union came back)."""
    instructions: str | None = None
    """The instructions sent with the turn's last model request (static and dynamic)."""
    new_messages: tuple[Message, ...]
    """Canonical messages this turn added to the session history."""
    tool_calls: tuple[ToolCallPart, ...]
    """Every tool call the model made during the turn, in order."""
    tool_statuses: tuple[ToolCallStatusRecord, ...]
    """The registry at the end of the turn."""
    usage: Usage
    error: RunError | None = None
    interrupted: bool = False
    """The turn was aborted or timed out and ended with an `[INTERRUPTED]` response."""
    compaction: CompactionOutcome | None = None
    model_input_checks: tuple[Check, ...] = ()
    """Results of the script's `expect_input` checks on what the model received at each step."""
    steering: tuple[SteeringDelivery, ...] = ()
    """How each steering message of the turn travelled (`turn_controls`)."""
    cancellation: CancellationSnapshot | None = None
    """The framework's snapshot when the turn was cancelled at its `cancel` point."""
    pending_calls: tuple[str, ...] = ()
    """Calls still waiting for the host after the turn, in call order."""
    ui: UiExchange | None = None
    """A UI turn's answer: the adapter's HTTP status and encoded events (`ui_exchange`)."""
    simulated: SimulatedTurn | None = None
    """Set on a turn a simulated conversation ran (`simulate:`); None on a turn the scenario wrote."""
    duration_s: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """One expectation, checked."""

    name: str
    """What was checked, e.g. `turn 2: output.contains`."""
    passed: bool
    expected: JsonValue = None
    actual: JsonValue = None
    detail: str = ""
    """A diff or explanation where one helps."""
    skipped_reason: str | None = None
    """Set when the check does not apply (e.g. script-only expectations on a real model)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Cost:
    """What a scenario's model requests cost in money (US dollars), priced request by request."""

    usd: float | None
    """The price of every request the scenario made, live or replayed; None when there is no price (`note`)."""
    spent_usd: float | None
    """The part actually sent to the provider in this run (a replayed request costs nothing); None without a price."""
    model: str | None
    """The `provider:name` priced; None for a scripted run."""
    priced_by: str | None = None
    """Where the price came from: `genai-prices X.Y.Z`, or the `--prices` file."""
    note: str | None = None
    """Why there is no price (`no price for openai:my-model`, `scripted run: no provider, no price`)."""


ScenarioStatus: TypeAlias = Literal["passed", "failed", "error", "skipped"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioScore:
    """A scenario's score (`checks/judge_checks.scenario_score`): the mean of its judged checks' scores, a judged
    check without a verdict (the judge failed, nothing to judge) counted as 0; `threshold` is its `min_score`."""

    value: float
    judged: tuple[tuple[str, float | None], ...]
    """Each judged check's name and its verdict's score (None: no verdict), in the order they were asked."""
    threshold: float | None = None

    def to_json(self) -> dict[str, JsonValue]:
        """report.json's `score` of a scenario entry."""
        judged: dict[str, JsonValue] = dict(self.judged)
        return {"value": self.value, "threshold": self.threshold, "judged": judged}


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioResult:
    """The outcome of one scenario."""

    name: str
    path: str
    """The scenario file."""
    status: ScenarioStatus
    """passed; failed (an expectation failed); error (infrastructure/provider error nothing expected); skipped."""
    turns: tuple[TurnRecord, ...] = ()
    checks: tuple[Check, ...] = ()
    history: tuple[Message, ...] = ()
    """The final canonical session history (empty in a suite result once written to the output directory's
    history.json)."""
    usage: Usage = field(default_factory=Usage)
    error: RunError | None = None
    duration_s: float = 0.0
    tags: tuple[str, ...] = ()
    cost: Cost | None = None
    """What its model requests cost; None when nothing priced it (a scenario that did not run)."""
    attempts: ProviderAttempts | None = None
    """How its requests went on the wire (attempts, retries, waits); None when it sent none to a provider."""
    warnings: tuple[WarningRecord, ...] = ()
    """The warnings shown while it ran (pydantic-ai's, its SDKs', the agent's), one per distinct warning, counted
    (`engine/warning_capture`)."""
    score: ScenarioScore | None = None
    """Its judged checks' score; None when it has no judged check."""
    files: tuple[str, ...] = ()
    """The files its output folder holds, relative to that folder (`subagents/...` for a sub-agent's), once
    written (`scenario_files.write_scenario_outputs`); () when no folder was written. report.json's `files`."""
