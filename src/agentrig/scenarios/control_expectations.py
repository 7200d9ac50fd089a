"""Expectations on what the host did during a turn: steering deliveries, a cancellation's snapshot, and the
calls still waiting for the host. `TurnExpectations` (in `model.py`) inherits `ControlExpectations`.

Where pydantic-ai versions really differ, a scenario says so with per-version values (`when_pydantic_ai`),
so the difference is stated, checked and shown on the compatibility page instead of hidden.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentrig.scenarios._strict import Strict, VersionSpec

__all__ = [
    "CancellationExpectation",
    "SteeringExpectation",
    "StoredPlacement",
    "StoredPlacementWhen",
]

StoredPlacement = Literal["own_request", "with_tool_return"]
"""Where pydantic-ai's own history keeps a steering message: a request of its own, or inside the request that
carries the tool results."""


class StoredPlacementWhen(Strict):
    """The placement expected on the pydantic-ai versions `when_pydantic_ai` selects."""

    when_pydantic_ai: VersionSpec
    """Which installed versions this applies to: comparisons joined by commas, e.g. `<2.60` or `>=2.40,<2.60`."""
    placement: StoredPlacement
    """`own_request` or `with_tool_return` on those versions."""


class SteeringExpectation(Strict):
    """Checks on one steering message of the turn (matched by its text). Every steering message is checked to
    reach the model at most once per request and to be stored once, whether or not it is listed here."""

    text: str
    """The steering message's text, as written under `steer`."""
    request: int | None = Field(default=None, ge=1)
    """The turn's model request that carried it (1-based; a message carried over from a cancelled turn rides
    with the next turn's first request)."""
    pending: bool = False
    """It was not delivered: the turn was cancelled before a request carrying it was answered, so it stays queued
    for the next turn and the turn's saved history leaves it out."""
    stored: StoredPlacement | tuple[StoredPlacementWhen, ...] | None = None
    """Where pydantic-ai's own history (`pydantic_ai_dump.json`) keeps it: one placement, or per-version
    placements (the first whose `when_pydantic_ai` matches the installed version applies; none matching is a
    failure). agentrig's canonical history merges the requests either way."""


class CancellationExpectation(Strict):
    """Checks on pydantic-ai's snapshot of the cancelled run (`RunCancelled.new_messages()` and `.usage`)."""

    kept_results: tuple[str, ...] | None = None
    """Exactly these calls (tool_call_ids, in order) have results in the snapshot: they finished before the
    cancellation."""
    unresolved_calls: tuple[str, ...] | None = None
    """Exactly these calls have no result in the snapshot; the saved turn closes them as `interrupted`."""
    partial_text: str | None = None
    """The snapshot keeps a partial response with this text (a streamed run; skipped with the reason on a plain
    run, whose request never returns)."""
    requests: int | None = Field(default=None, ge=0)
    """`RunCancelled.usage.requests`: model requests answered, in whole or in part, before the cancellation (a
    response cut by `during_response` counts, plain or streamed, on every version: docs/streaming.md)."""
    input_tokens: int | None = Field(default=None, ge=0)
    """`RunCancelled.usage.input_tokens` (a cut response's tokens included, on every version)."""
    output_tokens: int | None = Field(default=None, ge=0)
    """`RunCancelled.usage.output_tokens` (a cut response's tokens included, on every version)."""
