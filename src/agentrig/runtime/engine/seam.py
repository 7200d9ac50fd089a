"""The engine seam: what the request orchestrator asks of an agent framework, in canonical terms.

The `RequestOrchestrator` owns the removal contract's loop (request id, reset, history preparation,
compaction, finalize, abort handling, the tool registry); it knows no agent framework. For the one step
that needs one, running the agent over the prepared history, it calls `Engine.attempt`:

    orchestrator ── AttemptRequest ──> Engine.attempt ── Attempt ──> orchestrator
                  <── TurnObserver callbacks (each model request / response, as canonical messages) ──

An engine drives its framework (`PydanticAIEngine`: pydantic-ai's `Agent.iter`, node by node), reports
every model request and response to the observer as it happens (the observer keeps the registry, the
counters and the thoughts, and may stop the run), and returns the run's whole history as canonical
messages. A new engine (a streamed run, another framework) implements `attempt` and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentrig.runtime.history.canonical import Message, UserPrompt
from agentrig.runtime.history.run_records import RunError
from agentrig.runtime.history.turn_controls import CancellationSnapshot, SteeringDelivery
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models.stops import RunStopped
from agentrig.scenarios.model import Settings
from agentrig.scenarios.turn_controls import CancelPoint, SteeringMessage

__all__ = ["Attempt", "AttemptRequest", "CompactedInput", "Engine", "ProtocolRequest", "TurnObserver"]


class ProtocolRequest(Protocol):
    """A turn that arrived as one request of a UI protocol (`ui:`): the conversation is the one the request
    carries, handed to the framework as its adapter hands it (no history preparation), and the engine runs it as
    the adapter would (`engine/pydantic_ai_engine/ui_turn.py`)."""

    @property
    def history(self) -> Sequence[Message]:
        """The request's conversation, canonical: what the run starts from."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactedInput:
    """A compaction's change to what the model is sent (never to what is stored)."""

    replaced_count: int
    """How many leading messages of the history the summary replaces."""
    messages: tuple[Message, ...]
    """What the model sees instead of them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AttemptRequest:
    """One agent run, as the orchestrator prepared it."""

    prompt: UserPrompt | None
    """The user's prompt (text, or text and attachments); None continues pending or deferred calls."""
    history: list[Message]
    """The prepared, authoritative history the run starts from."""
    compacted_input: CompactedInput | None = None
    """Set when compaction shortened what the model is sent."""
    deferred_results: Mapping[str, Any] | None = None
    """Results for calls an earlier run deferred to the host, by tool_call_id (approval decisions are
    pydantic-ai's `ToolApproved` / `ToolDenied` values)."""
    settings: Settings = field(default_factory=Settings)
    steering: tuple[SteeringMessage, ...] = ()
    """Steering messages the host enqueues during the run (messages carried over from a cancelled turn come
    first, as `after_request: 0`)."""
    carried_steering: int = 0
    """How many of `steering`, from the front, were carried over from the previous turn."""
    cancel: CancelPoint | None = None
    """Where the host cancels the run; None: it is not cancelled."""
    protocol_request: ProtocolRequest | None = None
    """Set for a UI turn: the request the engine runs as the protocol's adapter does."""


@dataclass(slots=True, kw_only=True)
class Attempt:
    """What one agent run produced."""

    messages: list[Message]
    """The run's whole history (the input and what the run added), canonical."""
    output: Any = None
    """The run's output: a str, a structured value, or None."""
    pending_deferred: bool = False
    """The run ended with calls deferred to the host; they stay open in the history."""
    usage: Usage = field(default_factory=Usage)
    error: RunError | None = None
    interrupted: bool = False
    """Aborted, timed out or cancelled from outside: the history gets an `[INTERRUPTED]` response."""
    partial_text: str | None = None
    """Text the model had produced when the run was interrupted."""
    failed_call_id: str | None = None
    """The call whose failure ended the run (closed with a `failed` return)."""
    reraise: BaseException | None = None
    """Raised again once the turn is finalized and saved (Ctrl-C, task cancellation)."""
    instructions: str | None = None
    """The instructions sent with the run's last model request (static and dynamic, as the agent built them)."""
    native_dump: bytes | None = None
    """The messages this run added, as the framework itself serialized them (a JSON array); None when the
    engine has no native form."""
    steering: tuple[SteeringDelivery, ...] = ()
    """How each of the request's steering messages travelled, in the request's order."""
    cancellation: CancellationSnapshot | None = None
    """The framework's snapshot when the run was cancelled at the request's `cancel` point."""


class TurnObserver(Protocol):
    """What an engine reports while the agent runs; a returned `RunStopped` ends the run with that error."""

    def on_node(self) -> None:
        """A step of the run began (the contract's current_iteration)."""
        ...

    def on_model_request(self, request: Message) -> RunStopped | None:
        """A model request is about to be sent; `request` is the newest request message."""
        ...

    def on_model_response(self, response: Message) -> RunStopped | None:
        """The model answered; its tool calls are about to run."""
        ...


class Engine(Protocol):
    """Runs an agent over a prepared history (see the module docstring)."""

    @property
    def label(self) -> str:
        """The agent, as named in messages (`module:attr` or the scenario's tools)."""
        ...

    @property
    def model_name(self) -> str | None:
        """`provider:name` of the model the engine runs, when it was given one."""
        ...

    async def attempt(self, request: AttemptRequest, observer: TurnObserver) -> Attempt:
        """Run the agent once; failures are returned in `Attempt.error`, never raised (except `reraise`)."""
        ...
