"""A canonical history cut into scenario turns: each user message a turn, each response a scripted step.

A history a scenario can replay has this shape: a request holding the user's text (system prompts allowed)
opens a turn; responses and requests of tool results alternate after it; each request of results answers
the calls of the response before it, in their order; the turn's last message is a response without calls
(with the user's agent, also the results of an output tool). A scripted step holds at most one thought, one
text and then tool calls, in that order (`models/scripted.py`).

Everything else is refused with `Unreplayable`, naming the message and why: multi-modal parts, a user message
sharing a request with tool results (a run resumed after an interruption or a failed tool), results the host
handed back (deferred calls, approvals), calls with no recorded result, interrupted or failed outcomes, and,
without the user's agent, what only the agent's own code produces (output-validator retries, validation
errors of its argument schemas).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentrig.errors import InputError
from agentrig.runtime.history.canonical import (
    Message,
    OpaquePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
    UserContentPart,
)
from agentrig.runtime.history.usage import Usage

__all__ = ["Answer", "ScriptTurn", "Unreplayable", "plan_turns"]

Answer = ToolReturnPart | RetryPromptPart


class Unreplayable(InputError):
    """The source holds something a scenario cannot replay; the message names the file, the message and why."""

    def __init__(self, path: Path, index: int, reason: str) -> None:
        # index -1: nothing in one message, the scenario as a whole
        super().__init__(f"{path}: messages[{index}]: {reason}" if index >= 0 else f"{path}: {reason}")
        self.index = index
        self.reason = reason


@dataclass(slots=True, kw_only=True)
class ScriptTurn:
    """One turn of the scenario being written."""

    user: str
    """The user's message."""
    message_index: int
    """Where the turn starts in the source."""
    steps: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """The scripted model steps, as scenario YAML mappings."""
    calls: list[ToolCallPart] = field(default_factory=list[ToolCallPart])
    """Every tool call the model made in the turn, in order."""
    answers: list[tuple[ToolCallPart, Answer]] = field(default_factory=list[tuple[ToolCallPart, Answer]])
    """How the source answered each call that got an answer."""
    usages: list[Usage | None] = field(default_factory=list[Usage | None])
    """The recorded usage of each step."""
    last_response: Message | None = None
    """The turn's final model response."""
    retry_streak: int = 0
    """The most model requests in a row that retried one tool (pydantic-ai's per-tool retry count)."""

    @property
    def usage(self) -> Usage | None:
        """The turn's summed usage, when every step's was recorded."""
        if not self.usages or any(u is None for u in self.usages):
            return None
        return Usage.total(u for u in self.usages if u is not None)


@dataclass(slots=True)
class _Walk:
    path: Path
    own_agent: bool
    turns: list[ScriptTurn] = field(default_factory=list[ScriptTurn])
    pending: list[ToolCallPart] = field(default_factory=list[ToolCallPart])
    pending_at: int = -1
    previous: str | None = None  # kind of the last message that counted
    streaks: dict[str, int] = field(default_factory=dict[str, int])  # the turn's consecutive retries, per tool


def plan_turns(
    messages: Sequence[Message], usages: Sequence[Usage | None], *, path: Path, own_agent: bool
) -> list[ScriptTurn]:
    """The turns that replay `messages`; `usages` holds one entry per response. Raises `Unreplayable`."""
    walk = _Walk(path=path, own_agent=own_agent)
    response_number = 0
    for index, message in enumerate(messages):
        if message.state is not None:
            raise Unreplayable(path, index, f"the message is {message.state!r}; a scripted run completes its messages")
        if message.kind == "response":
            usage = usages[response_number] if response_number < len(usages) else None
            response_number += 1
            _response(walk, index, message, usage)
        else:
            _request(walk, index, message)
    _close_turn(walk, len(messages))
    if not walk.turns:
        raise Unreplayable(path, 0, "the history holds no user message: nothing to replay")
    return walk.turns


def _request(walk: _Walk, index: int, message: Message) -> None:
    texts: list[str] = []
    results: list[Answer] = []
    for number, part in enumerate(message.parts):
        if isinstance(part, SystemPromptPart):
            continue  # the agent's own: the scenario's system_prompt, never part of a stored history
        if isinstance(part, OpaquePart | UserContentPart):
            raise Unreplayable(
                walk.path,
                index,
                f"part {number} is a {part.part_kind!r} part (an image, a file or another non-text part); a"
                " scenario's user message is text",
            )
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif isinstance(part, ToolReturnPart | RetryPromptPart):
            results.append(part)
    if texts and results:
        raise Unreplayable(
            walk.path,
            index,
            "the user's message shares a request with tool results (a run resumed after an interruption or a"
            " failed tool); a scenario turn starts with the user's message alone",
        )
    if len(texts) > 1:
        raise Unreplayable(walk.path, index, f"the request holds {len(texts)} user texts; a scenario turn has one")
    if texts:
        _close_turn(walk, index)
        walk.turns.append(ScriptTurn(user=texts[0], message_index=index))
        walk.streaks = {}
        walk.previous = "request"
    elif results:
        if walk.previous != "response":
            raise Unreplayable(
                walk.path,
                index,
                "tool results follow a request, not a model response (results the host handed back: deferred"
                " calls or approvals); scaffold cannot script them",
            )
        _results(walk, index, results)
        walk.previous = "request"


def _results(walk: _Walk, index: int, results: list[Answer]) -> None:
    turn = walk.turns[-1]
    calls = {call.tool_call_id: call for call in walk.pending}
    answered: list[str] = []
    for result in results:
        if result.tool_call_id is None:  # an output retry: the agent's output validator asked again
            if not walk.own_agent:
                raise Unreplayable(
                    walk.path,
                    index,
                    "an output retry (the agent's output validator rejected the answer); YAML tools cannot ask"
                    " for one: scaffold with --agent module:attribute",
                )
            continue
        call = calls.get(result.tool_call_id)
        if call is None:
            raise Unreplayable(
                walk.path, index, f"a result for {result.tool_call_id!r}, which the response before did not call"
            )
        _check_answer(walk, index, call, result)
        answered.append(result.tool_call_id)
        turn.answers.append((call, result))
    _count_retries(walk, turn, results)
    expected = [call.tool_call_id for call in walk.pending]
    if answered != expected:
        raise Unreplayable(
            walk.path,
            index,
            f"the results answer {answered} but the calls were {expected}; a run answers each call once, in order",
        )
    walk.pending = []


def _count_retries(walk: _Walk, turn: ScriptTurn, results: list[Answer]) -> None:
    """pydantic-ai counts, per tool, the run steps in a row in which it was retried (a step without a retry of
    it starts again from zero); a run fails once the count passes the tool's budget."""
    retried = {r.tool_name for r in results if isinstance(r, RetryPromptPart) and r.tool_call_id and r.tool_name}
    walk.streaks = {name: walk.streaks.get(name, 0) + 1 for name in retried}
    turn.retry_streak = max([turn.retry_streak, *walk.streaks.values()])


def _check_answer(walk: _Walk, index: int, call: ToolCallPart, result: Answer) -> None:
    what = f"call {call.tool_call_id!r} ({call.tool_name})"
    if isinstance(result, ToolReturnPart):
        if result.outcome != "success":
            raise Unreplayable(
                walk.path,
                index,
                f"{what} ended {result.outcome!r}; a scripted run replays completed calls and retries only",
            )
        if isinstance(call.args, str):
            raise Unreplayable(
                walk.path, index, f"{what} returned a result although its arguments are not a JSON object"
            )
        return
    if walk.own_agent:
        return  # the agent's own tool and its schema decide; the golden history checks the outcome
    if isinstance(result.content, list) and isinstance(call.args, dict):
        raise Unreplayable(
            walk.path,
            index,
            f"{what} was retried with validation errors of the agent's own argument schema; YAML tools do not"
            " validate arguments: scaffold with --agent module:attribute",
        )
    if isinstance(result.content, str) and isinstance(call.args, str):
        raise Unreplayable(
            walk.path,
            index,
            f"{what} has arguments that are not a JSON object, which pydantic-ai answers with validation"
            " errors, but the source holds a message",
        )


def _response(walk: _Walk, index: int, message: Message, usage: Usage | None) -> None:
    if not walk.turns:
        raise Unreplayable(walk.path, index, "the history starts with a model response; a turn starts with the user")
    if walk.previous == "response":
        raise Unreplayable(walk.path, index, "two model responses in a row; each step answers one request")
    if all(isinstance(part, TextPart) and not part.content.strip() for part in message.parts):
        raise Unreplayable(
            walk.path,
            index,
            "an empty response (no parts, or blank text only); agentrig's loop answers one with an empty-response"
            " intervention, so a replay cannot end the same way",
        )
    turn = walk.turns[-1]
    turn.steps.append(_step(walk.path, index, message, usage))
    turn.usages.append(usage)
    turn.calls.extend(message.tool_calls)
    turn.last_response = message
    walk.pending = list(message.tool_calls)
    walk.pending_at = index
    walk.previous = "response"


def _close_turn(walk: _Walk, index: int) -> None:
    """The turn before `index` ends here: its calls must have been answered, its end must be an answer."""
    if not walk.turns:
        return
    if walk.pending:
        names = ", ".join(repr(call.tool_call_id) for call in walk.pending)
        raise Unreplayable(
            walk.path,
            walk.pending_at,
            f"tool call(s) {names} have no recorded result (the conversation stopped before they ran); a"
            " scripted run would run them",
        )
    turn = walk.turns[-1]
    if turn.last_response is None:
        raise Unreplayable(walk.path, turn.message_index, "the user's message has no model response")
    if walk.previous == "request" and not walk.own_agent and turn.steps and turn.last_response.tool_calls:
        raise Unreplayable(
            walk.path,
            walk.pending_at,
            "the turn ends with tool results and no model answer (an output tool ended the run); a YAML agent"
            " answers in text: scaffold with --agent module:attribute",
        )


def _step(path: Path, index: int, message: Message, usage: Usage | None) -> dict[str, Any]:
    """The scripted step of one response; parts must come as thought, text, tool calls."""
    step: dict[str, Any] = {}
    calls: list[dict[str, Any]] = []
    stage = 0  # 0: nothing yet, 1: after the thought, 2: after the text, 3: among the tool calls
    allowed = {"thought": (0,), "text": (0, 1), "tool-call": (0, 1, 2, 3)}
    for number, part in enumerate(message.parts):
        if isinstance(part, OpaquePart):
            raise Unreplayable(path, index, f"part {number} is a {part.part_kind!r} part, which a step cannot script")
        kind = part.part_kind
        if stage not in allowed.get(kind, ()):
            raise Unreplayable(
                path,
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
