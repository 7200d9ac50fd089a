"""A canonical history cut into scenario turns: each user message a turn, each response a scripted step, and
each answer the host gave to paused calls (approvals, deferred results) a turn of its own.

A history a scenario can replay has this shape: a request holding the user's message (text, or text and
attachments; system prompts allowed) opens a turn; responses and requests of tool results alternate after it;
each request of results answers the calls of the response before it, in their order; the turn's last message is
a response without calls, or the results of an output tool (which may share a request with the next user
message, as agentrig's own session files store a multi-turn structured-output run). Calls the host answers
(a tool that asks for approval, an external tool, a deferred call) pause the turn; their results open the
next one (`turn_results.py`). A scripted step holds at most one thought, one text and then tool calls, in
that order (`models/scripted.py`).

A turn may also end as agentrig ends a turn that went wrong (`endings.py`): a tool that failed, a cancellation
(`[INTERRUPTED]`), a request the model never answered. Everything else is refused with `Unreplayable`, naming the
message and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from agentrig.errors import InputError
from agentrig.runtime.history.canonical import (
    Message,
    OpaquePart,
    RetryPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
    UserPrompt,
)
from agentrig.runtime.history.tool_kinds import OUTPUT_TOOL_KIND
from agentrig.runtime.history.usage import Usage

__all__ = [
    "AGENT_HINT",
    "EDIT_HINT",
    "INTERRUPTED_MARKER",
    "Answer",
    "GoldenEdits",
    "HostTools",
    "OutputEvent",
    "Refuse",
    "ScriptTurn",
    "Unreplayable",
    "Walk",
    "interrupted_marker",
    "is_output_tool_call",
    "response_step",
    "take_response",
]

Answer = ToolReturnPart | RetryPromptPart

EDIT_HINT = "agentrig convert SOURCE -o FILE.json writes the history to edit"
"""How a user edits a history scaffold refused: its canonical form, which scaffold reads back."""

AGENT_HINT = "scaffold with --agent module:attribute (your agent's real tools and output type replay it)"
"""The hint of a refusal only the user's own agent can replay."""

INTERRUPTED_MARKER = "[INTERRUPTED]"
"""The response agentrig's loop ends a cancelled turn with (`engine/orchestrator.py`), the partial text after it."""


class Unreplayable(InputError):
    """The source holds something a scenario cannot replay; the message names the file, the message, why, and then
    what to do so the next try works (`hint`: the flag to pass, the file to scaffold instead, the edit to make)."""

    def __init__(self, path: Path, index: int, reason: str, *, hint: str) -> None:
        # index -1: nothing in one message, the scenario as a whole
        text = f"{reason}: {hint}"
        super().__init__(f"{path}: messages[{index}]: {text}" if index >= 0 else f"{path}: {text}")
        self.index = index
        self.reason = text
        self.hint = hint


class Refuse(Protocol):
    """How a planning step refuses the source as a whole (no one message): the reason and what to do."""

    def __call__(self, reason: str, *, hint: str) -> Unreplayable: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class HostTools:
    """The user's agent's tools whose calls pause the run for the host (`AgentFacts`, framework-free)."""

    approval: frozenset[str] = frozenset()
    """Tools that ask for approval before they run."""
    external: frozenset[str] = frozenset()
    """Tools the host runs itself."""


def is_output_tool_call(call: ToolCallPart) -> bool:
    """Whether the call is an output tool's: marked so (`tool_kind: output`, which 2.78 and agentrig's histories
    write, and `source.py` for a dump of an earlier release), whatever its name (`ToolOutput(..., name=...)`); an
    unmarked call by pydantic-ai's default name (`final_result`, `final_result_<type>`)."""
    if call.tool_kind is not None:
        return call.tool_kind == OUTPUT_TOOL_KIND
    return call.tool_name == "final_result" or call.tool_name.startswith("final_result_")


@dataclass(frozen=True, slots=True)
class OutputEvent:
    """An answer that may have been the run's output, in the order the run judged them: a text answer, or the
    first output tool call of a response; and how the run took it."""

    kind: str
    """`text` or `tool`."""
    verdict: str
    """`accepted`; `retry` (the output validator asked again, `message`); `invalid` (the schema rejected it,
    `errors`)."""
    call: ToolCallPart | None = None
    message: str | None = None
    errors: tuple[Any, ...] = ()
    value: Any = None
    """A text answer's JSON value (None when the text is no JSON): what a schema judging the text saw."""


@dataclass(slots=True, kw_only=True)
class ScriptTurn:
    """One turn of the scenario being written."""

    user: UserPrompt | None
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
    approval_calls: set[str] = field(default_factory=set[str])
    """Calls of this turn the host denied later (a YAML tool asks for approval: `ask_approval`)."""
    usages: list[Usage | None] = field(default_factory=list[Usage | None])
    """The recorded usage of each step."""
    last_response: Message | None = None
    """The turn's final model response."""
    paused: bool = False
    """The turn ended with calls the host answers (the run's output is pydantic-ai's `DeferredToolRequests`)."""
    retry_streak: int = 0
    """The most model requests that retried one tool in the turn's run (pydantic-ai's per-tool retry count)."""
    output_retries: int = 0
    """Output retries in the turn (the output validator or an output tool's arguments rejected)."""
    exhausted_output_retries: int | None = None
    """The output retries the turn used before it ran out of them (pydantic-ai's `Exceeded maximum output retries
    (N)`): the budget that stopped it, `settings.output_retries`."""
    exhausted_output: ToolCallPart | None = None
    """The output call rejected last when the turn ran out of output retries: rejected, with errors the source does
    not hold (the run ended instead of sending them)."""
    tool_calls_limit: int | None = None
    """The `settings.tool_calls_limit` that stopped the turn (the calls it ran), when a limit stopped it."""
    ending: dict[str, Any] | None = None
    """How the turn ended when it went wrong: its expectation (`{error: {kind: ...}}`, `{interrupted: true}`)."""
    rules: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    """YAML tool outcomes that are not the recorded answer, by call id (`fail`, `abort`, ...)."""
    outputs: list[OutputEvent] = field(default_factory=list[OutputEvent])
    """The answers the run judged as its output, in order."""
    steer: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """What the host enqueued during the turn, as `steer` entries (a capability part a tool enqueued)."""

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
    streaks: dict[str, int] = field(default_factory=dict[str, int])  # the run's retried steps so far, per tool
    interrupted_at: int | None = None
    """The request in state `interrupted` (a run cancelled while its tools ran) the current turn stopped at."""
    edits: GoldenEdits = field(default_factory=lambda: GoldenEdits())

    def refuse(self, index: int, reason: str, *, hint: str) -> Unreplayable:
        return Unreplayable(self.path, index, reason, hint=hint)


@dataclass(slots=True)
class GoldenEdits:
    """What agentrig's loop adds to a turn that went wrong and a pydantic-ai dump does not hold (the dump keeps
    pydantic-ai's own messages only): the golden history gets them, as the replay's history will."""

    closed: dict[int, tuple[str | None, str]] = field(default_factory=dict[int, tuple[str | None, str]])
    """Response index -> (the failed call, its failure): its calls left without a result are closed after it."""
    interrupted: set[int] = field(default_factory=set[int])
    """Requests in state `interrupted`: the calls they leave unanswered are closed in them, `[INTERRUPTED]` follows."""
    dropped: set[int] = field(default_factory=set[int])
    """Requests of a user's message that got no answer (a provider error): agentrig's loop drops them."""
    exhausted: set[int] = field(default_factory=set[int])
    """The response whose output calls ran out of output retries, or the empty request `interrupted` after it
    (2.78): the calls it leaves unanswered are closed `interrupted` after it (in it), with no `[INTERRUPTED]`."""


def take_response(walk: Walk, index: int, message: Message, usage: Usage | None) -> None:
    if not walk.turns:
        raise walk.refuse(
            index,
            "the history starts with a model response; a turn starts with the user",
            hint="scaffold the run's session.json or history.json, which start with the user, or add the user's"
            f" message before it ({EDIT_HINT})",
        )
    if walk.previous == "response":
        raise walk.refuse(
            index,
            "two model responses in a row; each step answers one request",
            hint=f"merge them into one response or drop one ({EDIT_HINT})",
        )
    turn = walk.turns[-1]
    if turn.ending is not None:
        raise walk.refuse(
            index,
            "a model response after the turn was interrupted; the next turn starts with the user",
            hint=f"drop the response or add the user's message before it ({EDIT_HINT})",
        )
    if all(isinstance(part, TextPart) and not part.content.strip() for part in message.parts):
        raise walk.refuse(
            index,
            "an empty response (no parts, or blank text only); agentrig's loop answers one with an empty-response"
            " intervention, so a replay cannot end the same way",
            hint=f"drop the empty response ({EDIT_HINT})",
        )
    turn.steps.append(response_step(walk, index, message, usage))
    turn.usages.append(usage)
    turn.calls.extend(message.tool_calls)
    turn.last_response = message
    if not message.tool_calls and any(isinstance(part, TextPart) for part in message.parts):
        turn.outputs.append(OutputEvent(kind="text", verdict="accepted", value=_json_value(message.text)))
    walk.pending = list(message.tool_calls)
    walk.pending_at = index
    walk.previous = "response"
    walk.response_run_id = message.run_id


def _json_value(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def interrupted_marker(message: Message) -> str | None:
    """The partial text of agentrig's `[INTERRUPTED]` response (`""`: none), or None for any other message."""
    if message.kind != "response" or len(message.parts) != 1 or not isinstance(message.parts[0], TextPart):
        return None
    text = message.parts[0].content
    if text == INTERRUPTED_MARKER:
        return ""
    return text[len(INTERRUPTED_MARKER) + 1 :] if text.startswith(INTERRUPTED_MARKER + " ") else None


def response_step(walk: Walk, index: int, message: Message, usage: Usage | None) -> dict[str, Any]:
    """The scripted step of one response; parts must come as thought, text, tool calls."""
    step: dict[str, Any] = {}
    calls: list[dict[str, Any]] = []
    stage = 0  # 0: nothing yet, 1: after the thought, 2: after the text, 3: among the tool calls
    allowed = {"thought": (0,), "text": (0, 1), "tool-call": (0, 1, 2, 3)}
    for number, part in enumerate(message.parts):
        if isinstance(part, OpaquePart):
            raise walk.refuse(
                index,
                f"part {number} is a {part.part_kind!r} part, which a step cannot script",
                hint=f"drop the part ({EDIT_HINT})",
            )
        kind = part.part_kind
        if stage not in allowed.get(kind, ()):
            raise walk.refuse(
                index,
                f"part {number} ({kind}) comes where a scripted step cannot hold it: a step holds at most one"
                " thought, then one text, then tool calls",
                hint=f"join the texts (or thoughts) into one and put the calls last ({EDIT_HINT})",
            )
        stage = {"thought": 1, "text": 2}.get(kind, 3)
        if isinstance(part, ThoughtPart):
            step["thought"] = _thought(part)
        elif isinstance(part, TextPart):
            step["text"] = part.content
        elif isinstance(part, ToolCallPart):
            calls.append({"id": part.tool_call_id, "name": part.tool_name, "args": part.args})
    if calls:
        step["tool_calls"] = calls
    if usage is not None:
        step["usage"] = _usage_json(usage)
    return step


def _thought(part: ThoughtPart) -> str | dict[str, Any]:
    """A thought as a step holds it: its text, or with what its provider attached (kept in the replay's history)."""
    extras = {
        "signature": part.signature,
        "provider_name": part.provider_name,
        "id": part.id,
        "provider_details": part.provider_details,
    }
    kept = {key: value for key, value in extras.items() if value is not None}
    return {"content": part.content, **kept} if kept else part.content


def _usage_json(usage: Usage) -> dict[str, int]:
    values = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    if usage.cache_read_tokens:
        values["cache_read_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        values["cache_write_tokens"] = usage.cache_write_tokens
    return values
