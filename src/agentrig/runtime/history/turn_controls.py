"""What the host's actions during a turn left behind, in canonical terms: each steering message's delivery and a
cancelled run's snapshot. Engines fill them in; `checks/control_checks.py` judges them. Framework-free."""

from __future__ import annotations

from dataclasses import dataclass

from agentrig.runtime.history.canonical import Message

__all__ = ["CancellationSnapshot", "SteeringDelivery"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SteeringDelivery:
    """How one steering message travelled through the turn."""

    text: str
    """The message."""
    request: int | None
    """The turn's model request (1-based) that carried it and was answered; None: not delivered (pending)."""
    input_counts: tuple[int, ...]
    """How often it appeared in the input of each model request the turn sent, in order."""
    stored_count: int
    """How often the framework's own history of the run holds it."""
    stored_as: str | None
    """Where that history holds it: `own_request` or `with_tool_return` (None when it does not)."""
    carried_over: bool = False
    """It was pending after the previous turn and was enqueued again before this turn's first request."""
    framework_version: tuple[int, int, int] | None = None
    """The installed pydantic-ai (per-version expectations are matched against it); None for another engine."""
    is_text: bool = True
    """The message was user text; False for a capability part (`text` is then its label, `capability KIND`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CancellationSnapshot:
    """pydantic-ai's snapshot of a cancelled run (`RunCancelled.new_messages()` and `.usage`), canonical."""

    messages: tuple[Message, ...]
    """The messages the cancelled run added, as the framework kept them."""
    requests: int
    """Model requests the snapshot's usage counts."""
    input_tokens: int
    output_tokens: int
    streamed: bool
    """The run streamed its responses (only then can a partial response exist)."""
