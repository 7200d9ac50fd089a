"""`expect.events`: what a scenario requires of its event log (docs/events.md), as validated values.

Kept apart from `model.py` (which imports it) so the scenario format's core stays readable; the same rules
apply: unknown keys are errors, and field docstrings become the schema's descriptions.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from agentrig.scenarios.field_docs import add_field_descriptions

__all__ = ["EVENT_RULES", "EventCount", "EventExpectations", "EventMatcher", "EventRule", "EventTypeName"]

EventTypeName: TypeAlias = Literal[
    "agent_start",
    "turn_start",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_end",
    "turn_end",
    "agent_end",
    "request_retry",
]

EventRule: TypeAlias = Literal[
    "well_formed",
    "tool_execution_ends",
    "complete_args_at_start",
    "one_final_result",
    "no_repeated_final_text",
    "text_deltas_join",
]
EVENT_RULES: tuple[EventRule, ...] = (
    "well_formed",
    "tool_execution_ends",
    "complete_args_at_start",
    "one_final_result",
    "no_repeated_final_text",
    "text_deltas_join",
)


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, json_schema_extra=add_field_descriptions
    )


class EventMatcher(_Strict):
    """An event of a given type, optionally with given field values."""

    type: EventTypeName
    """The event type."""
    run: int | None = Field(default=None, ge=1)
    """The agent run (scenario turn), from 1."""
    tool_call_id: str | None = None
    """For tool events and tool-call updates: the call."""
    tool_name: str | None = None
    """For tool events: the tool."""
    part_kind: Literal["text", "thought", "tool-call"] | None = None
    """For `message_update`: what the delta belongs to."""
    outcome: str | None = None
    """For `tool_execution_end` and `agent_end`: how it ended."""


class EventCount(_Strict):
    """How many events of a type (matching the optional fields) the log holds: exactly, or within bounds."""

    event: EventTypeName | EventMatcher
    """The events counted."""
    equals: int | None = Field(default=None, ge=0)
    """Exactly this many."""
    min: int | None = Field(default=None, ge=0)
    """At least this many."""
    max: int | None = Field(default=None, ge=0)
    """At most this many."""


class EventExpectations(_Strict):
    """Checks on the scenario's event log (`events.jsonl`); see docs/events.md."""

    rules: Literal["all", "none"] | tuple[EventRule, ...] = "all"
    """Built-in rules checked on every run of the log: `well_formed` (events nest as documented),
    `tool_execution_ends` (every tool start has one end, no end without a start), `complete_args_at_start`
    (a start carries the call's complete arguments, equal to the message's and to its joined fragments),
    `one_final_result` (one `agent_end` per run; a completed run names its last message as the final result),
    `no_repeated_final_text` (the final text is not the text of an earlier message of the run), and
    `text_deltas_join` (a message's text deltas join to its text). `all` by default."""
    order: tuple[EventTypeName | EventMatcher, ...] = ()
    """Events that must appear in this order (others may come between them)."""
    counts: tuple[EventCount, ...] = ()
    """How many events of a kind the log holds."""
