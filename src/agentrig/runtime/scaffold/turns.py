"""A canonical history cut into scenario turns: each user message a turn, each response a scripted step, and
each answer the host gave to paused calls (approvals, deferred results) a turn of its own.

A history a scenario can replay has this shape: a request holding the user's text (system prompts allowed)
opens a turn; responses and requests of tool results alternate after it; each request of results answers
the calls of the response before it, in their order; the turn's last message is a response without calls
(with the user's agent, also the results of an output tool, which may share a request with the next user
message, as agentrig's own session files store a multi-turn structured-output run). Calls the host answers
(a tool that asks for approval, an external tool, a deferred call) pause the turn; their results open the
next one (`turn_results.py`). A scripted step holds at most one thought, one text and then tool calls, in
that order (`models/scripted.py`).

Everything else is refused with `Unreplayable`, naming the message and why: multi-modal parts, a user message
sharing a request with results of a turn that did not end (a run resumed after an interruption or a failed
tool), calls with no recorded result, interrupted or failed outcomes, and, without the user's agent, what only
the agent's own code produces (output-validator retries, validation errors of its argument schemas, approvals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentrig.errors import InputError
from agentrig.runtime.history.canonical import (
    Message,
    OpaquePart,
    RetryPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
)
from agentrig.runtime.history.usage import Usage

__all__ = [
    "Answer",
    "HostTools",
    "ScriptTurn",
    "Unreplayable",
    "Walk",
    "close_turn",
    "is_output_tool_call",
    "response_step",
    "take_response",
]

Answer = ToolReturnPart | RetryPromptPart


class Unreplayable(InputError):
    """The source holds something a scenario cannot replay; the message names the file, the message and why."""

    def __init__(self, path: Path, index: int, reason: str) -> None:
        # index -1: nothing in one message, the scenario as a whole
        super().__init__(f"{path}: messages[{index}]: {reason}" if index >= 0 else f"{path}: {reason}")
        self.index = index
        self.reason = reason


@dataclass(frozen=True, slots=True, kw_only=True)
class HostTools:
    """The user's agent's tools whose calls pause the run for the host (`AgentFacts`, framework-free)."""

    approval: frozenset[str] = frozenset()
    """Tools that ask for approval before they run."""
    external: frozenset[str] = frozenset()
    """Tools the host runs itself."""


def is_output_tool_call(call: ToolCallPart) -> bool:
    """Whether the call is pydantic-ai's output tool (its default name, `final_result` or `final_result_<type>`)."""
    return call.tool_name == "final_result" or call.tool_name.startswith("final_result_")


@dataclass(slots=True, kw_only=True)
class ScriptTurn:
    """One turn of the scenario being written."""

    user: str | None
    """The user's message; None for a turn that continues paused calls with the host's answers."""
    message_index: int
    """Where the turn starts in the source."""
    approvals: dict[str, Any] | None = None
    """The host's decisions on calls that asked for approval (`true`, `{deny: message}`), by call id."""
    deferred_results: dict[str, Any] | None = None
    """The host's results for deferred calls, by call id."""
    steps: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """The scripted model steps, as scenario YAML mappings."""
    calls: list[ToolCallPart] = field(default_factory=list[ToolCallPart])
    """Every tool call the model made in the turn, in order."""
    answers: list[tuple[ToolCallPart, Answer]] = field(default_factory=list[tuple[ToolCallPart, Answer]])
    """How the source answered each call that got an answer."""
    deferred_calls: set[str] = field(default_factory=set[str])
    """Calls of this turn the host answered later (a YAML tool defers them)."""
    usages: list[Usage | None] = field(default_factory=list[Usage | None])
    """The recorded usage of each step."""
    last_response: Message | None = None
    """The turn's final model response."""
    paused: bool = False
    """The turn ended with calls the host answers (the run's output is pydantic-ai's `DeferredToolRequests`)."""
    retry_streak: int = 0
    """The most model requests in a row that retried one tool (pydantic-ai's per-tool retry count)."""
    output_retries: int = 0
    """Output retries in the turn (the output validator or an output tool's arguments rejected)."""

    @property
    def usage(self) -> Usage | None:
        """The turn's summed usage, when every step's was recorded."""
        if not self.usages or any(u is None for u in self.usages):
            return None
        return Usage.total(u for u in self.usages if u is not None)


@dataclass(slots=True)
class Walk:
    """The planner's state while it walks the source's messages."""

    path: Path
    own_agent: bool
    host_tools: HostTools | None
    turns: list[ScriptTurn] = field(default_factory=list[ScriptTurn])
    pending: list[ToolCallPart] = field(default_factory=list[ToolCallPart])
    """Calls of the last response no result has answered yet."""
    pending_at: int = -1
    previous: str | None = None  # kind of the last message that counted
    response_run_id: str | None = None
    streaks: dict[str, int] = field(default_factory=dict[str, int])  # the turn's consecutive retries, per tool

    def refuse(self, index: int, reason: str) -> Unreplayable:
        return Unreplayable(self.path, index, reason)


def take_response(walk: Walk, index: int, message: Message, usage: Usage | None) -> None:
    if not walk.turns:
        raise walk.refuse(index, "the history starts with a model response; a turn starts with the user")
    if walk.previous == "response":
        raise walk.refuse(index, "two model responses in a row; each step answers one request")
    if all(isinstance(part, TextPart) and not part.content.strip() for part in message.parts):
        raise walk.refuse(
            index,
            "an empty response (no parts, or blank text only); agentrig's loop answers one with an empty-response"
            " intervention, so a replay cannot end the same way",
        )
    turn = walk.turns[-1]
    turn.steps.append(response_step(walk, index, message, usage))
    turn.usages.append(usage)
    turn.calls.extend(message.tool_calls)
    turn.last_response = message
    walk.pending = list(message.tool_calls)
    walk.pending_at = index
    walk.previous = "response"
    walk.response_run_id = message.run_id


def close_turn(walk: Walk, index: int) -> None:
    """The turn before `index` ends here: its calls must have been answered, its end must be an answer."""
    if not walk.turns:
        return
    turn = walk.turns[-1]
    if walk.pending and not turn.paused:
        names = ", ".join(repr(call.tool_call_id) for call in walk.pending)
        raise walk.refuse(
            walk.pending_at,
            f"tool call(s) {names} have no recorded result (the conversation stopped before they ran); a"
            " scripted run would run them",
        )
    if turn.last_response is None:
        raise walk.refuse(turn.message_index, "the user's message has no model response")
    if turn.paused or walk.previous != "request" or not turn.steps or not turn.last_response.tool_calls:
        return
    if not any(is_output_tool_call(call) for call in turn.last_response.tool_calls):
        raise walk.refuse(
            walk.pending_at,
            "the turn ends with tool results and no model answer, and no output tool was called: the run stopped"
            " after its tools ran (an error or a limit), which a scripted turn cannot end with",
        )
    if not walk.own_agent:
        raise walk.refuse(
            walk.pending_at,
            "the turn ends with tool results and no model answer (an output tool ended the run); a YAML agent"
            " answers in text: scaffold with --agent module:attribute",
        )


def response_step(walk: Walk, index: int, message: Message, usage: Usage | None) -> dict[str, Any]:
    """The scripted step of one response; parts must come as thought, text, tool calls."""
    step: dict[str, Any] = {}
    calls: list[dict[str, Any]] = []
    stage = 0  # 0: nothing yet, 1: after the thought, 2: after the text, 3: among the tool calls
    allowed = {"thought": (0,), "text": (0, 1), "tool-call": (0, 1, 2, 3)}
    for number, part in enumerate(message.parts):
        if isinstance(part, OpaquePart):
            raise walk.refuse(index, f"part {number} is a {part.part_kind!r} part, which a step cannot script")
        kind = part.part_kind
        if stage not in allowed.get(kind, ()):
            raise walk.refuse(
                index,
                f"part {number} ({kind}) comes where a scripted step cannot hold it: a step holds at most one"
                " thought, then one text, then tool calls",
            )
        stage = {"thought": 1, "text": 2}.get(kind, 3)
        if isinstance(part, ThoughtPart):
            step["thought"] = part.content
        elif isinstance(part, TextPart):
            step["text"] = part.content
        elif isinstance(part, ToolCallPart):
            calls.append({"id": part.tool_call_id, "name": part.tool_name, "args": part.args})
    if calls:
        step["tool_calls"] = calls
    if usage is not None:
        step["usage"] = _usage_json(usage)
    return step


def _usage_json(usage: Usage) -> dict[str, int]:
    values = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    if usage.cache_read_tokens:
        values["cache_read_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        values["cache_write_tokens"] = usage.cache_write_tokens
    return values
