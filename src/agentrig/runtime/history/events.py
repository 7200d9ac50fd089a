"""The event log: one agent run as the core layer's events, framework-free (docs/events.md, format 1).

    agent_start -> (turn_start -> message_start -> message_update* -> message_end
                    -> (tool_execution_start -> tool_execution_end)* -> turn_end)* -> agent_end

An `EventLog` is fed by the engine side in canonical terms (`start_run`, `request_sent`, `stream_opened`,
`stream_delta`, `response_received`, `end_run`) and keeps the ids that tie events together: `run` (the
agent run, counted from 1 in the log), `turn` (the model request within the run, from 1), `message_id`
(`<run>.<turn>`: one assistant message per turn) and `tool_call_id`. Every event is appended to
`events` and handed to the optional listener as it happens (`agentrig prompt --stream` prints text deltas).

Tool events are derived from the loop's boundaries, the same way streamed or not: a call starts when the
model's response is handed to tool execution (with its complete arguments) and ends when its result is
sent back to the model (or when the run ends: then the outcome comes from the final history, `deferred`
for calls left to the host, `not_run` for calls nothing answered). So a plain run and a streamed run of one
script write the same log, except that only the streamed one has `message_update` deltas.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias, get_args, runtime_checkable

from agentrig.runtime.history.canonical import Message, RetryPromptPart, TextPart, ThoughtPart, ToolReturnPart
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.history.redaction import (
    StreamRedactor,
    dumps_redacted,
    might_hold_secret,
    might_hold_secret_json,
    redact,
)
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.wire import message_to_json
from agentrig.runtime.runfolder.jsonio import dumps, read_json_lines

__all__ = [
    "EVENTS_FORMAT",
    "EVENT_TYPES",
    "Event",
    "EventLog",
    "EventType",
    "StreamDelta",
    "StreamListener",
    "dumps_events",
    "events_from_json",
    "read_events",
    "redacted_deltas",
]

EVENTS_FORMAT = "agentrig-events/1"
"""The format written in every `agent_start` event; bumped when a field changes meaning or goes away."""

EventType: TypeAlias = Literal[
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
EVENT_TYPES: tuple[EventType, ...] = get_args(EventType)

DeltaKind: TypeAlias = Literal["text", "thought", "tool-call"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One event: its type, its position, the run it belongs to and its type's fields (docs/events.md)."""

    seq: int
    """Position in the log, from 0."""
    type: EventType
    run: int
    """The agent run, from 1."""
    data: dict[str, Any] = field(default_factory=dict[str, Any])
    """The type's own fields (turn, message_id, delta, tool_call_id, ...)."""
    t: float | None = None
    """Seconds since the log began (monotonic clock, to the millisecond): when it happened, for the report's
    timeline. Differs from run to run, like every time; None in logs written before agentrig recorded it."""

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def to_json(self) -> dict[str, Any]:
        timed = {} if self.t is None else {"t": self.t}
        return {"seq": self.seq, "type": self.type, "run": self.run, **self.data, **timed}


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamDelta:
    """A piece of a response as it streams: what an engine reports for each streamed delta."""

    part_index: int
    """The part of the response it belongs to."""
    kind: DeltaKind
    delta: str
    """Text, thought text, or a fragment of a tool call's JSON arguments."""
    tool_call_id: str | None = None
    tool_name: str | None = None


@runtime_checkable
class StreamListener(Protocol):
    """What a streaming engine reports besides the turn observer's callbacks (when its observer has these)."""

    def on_stream_open(self) -> None:
        """The model's response started streaming."""
        ...

    def on_stream_delta(self, delta: StreamDelta) -> None:
        """A delta of the streaming response arrived."""
        ...


@dataclass(slots=True)
class _OpenCall:
    tool_name: str
    turn: int


def _answers(messages: Iterable[Message]) -> dict[str, tuple[str, Any]]:
    """Outcome and result of every answered call, by id (the first answer wins)."""
    found: dict[str, tuple[str, Any]] = {}
    for message in messages:
        if message.kind != "request":
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                found.setdefault(part.tool_call_id, (part.outcome, part.content))
            elif isinstance(part, RetryPromptPart) and part.tool_call_id is not None:
                found.setdefault(part.tool_call_id, ("retry", part.content))
    return found


def _unrun(message: Message) -> Message:
    """The message without its per-run ids: a random id would make every log differ."""
    return without_per_run_values([message])[0]


class EventLog:
    """Builds the event log of a session's agent runs (see the module docstring)."""

    def __init__(self, listener: Callable[[Event], None] | None = None) -> None:
        self.events: list[Event] = []
        self.listener = listener
        self._run = 0
        self._turn = 0
        self._turn_open = False
        self._message_open = False
        self._streamed_text: list[str] = []
        self._streamed_thought: list[str] = []
        self._open_calls: dict[str, _OpenCall] = {}
        self._last_message_id: str | None = None
        self._started = time.monotonic()

    # --- emitting ---

    def _emit(self, type_: EventType, **data: Any) -> None:
        elapsed = round(time.monotonic() - self._started, 3)
        event = Event(seq=len(self.events), type=type_, run=self._run, data=data, t=elapsed)
        self.events.append(event)
        if self.listener is not None:
            self.listener(event)

    @property
    def _message_id(self) -> str:
        return f"{self._run}.{self._turn}"

    # --- what the engine side reports ---

    def start_run(self, prompt: str | None) -> None:
        self._run += 1
        self._turn = 0
        self._turn_open = False
        self._message_open = False
        self._open_calls.clear()
        self._last_message_id = None
        self._emit("agent_start", format=EVENTS_FORMAT, prompt=prompt)

    def request_sent(self, request: Message, *, sent: bool = True) -> None:
        """A request is about to go to the model: it carries the results of the open calls. `sent=False`: the
        run stops instead of sending it (the calls are still answered and the turn ends, no new turn starts)."""
        answers = _answers([request])
        for call_id in list(self._open_calls):
            # A call this request does not answer was not run (the loop answers every call it runs).
            self._end_call(call_id, *answers.get(call_id, ("not_run", None)))
        if self._turn_open:
            self._end_turn()
        if sent:
            self._turn += 1
            self._turn_open = True
            self._emit("turn_start", turn=self._turn)

    def request_retried(
        self, *, request: int, attempt: int, status: int | None, kind: str, wait_s: float, message: str
    ) -> None:
        """The turn's request failed on the wire and is sent again after `wait_s` (the provider layer's retry).
        Outside a turn (a compaction's summary request) it is counted in the scenario's attempts only."""
        if not self._turn_open:
            return
        self._emit(
            "request_retry",
            turn=self._turn,
            request=request,
            attempt=attempt,
            status=status,
            kind=kind,
            wait_s=wait_s,
            message=message,
        )

    def stream_opened(self) -> None:
        if self._turn_open and not self._message_open:
            self._message_open = True
            self._streamed_text, self._streamed_thought = [], []  # what this message streams, for a broken-off end
            self._emit("message_start", turn=self._turn, message_id=self._message_id, role="assistant")

    def stream_delta(self, delta: StreamDelta) -> None:
        if not self._turn_open:
            return
        self.stream_opened()
        if delta.kind == "text":
            self._streamed_text.append(delta.delta)
        elif delta.kind == "thought":
            self._streamed_thought.append(delta.delta)
        extra: dict[str, Any] = {}
        if delta.tool_call_id is not None:
            extra["tool_call_id"] = delta.tool_call_id
        if delta.tool_name is not None:
            extra["tool_name"] = delta.tool_name
        self._emit(
            "message_update",
            turn=self._turn,
            message_id=self._message_id,
            part_index=delta.part_index,
            part_kind=delta.kind,
            delta=delta.delta,
            **extra,
        )

    def response_received(self, response: Message, *, usage: Usage | None, runs_tools: bool = True) -> None:
        """The model's whole response; its calls start unless `runs_tools` is False (the run stops instead).

        A response outside a turn (a resumed run processing the stored response again) is not a new message."""
        if not self._turn_open:
            return
        self.stream_opened()
        self._message_open = False
        self._last_message_id = self._message_id
        self._emit(
            "message_end",
            turn=self._turn,
            message_id=self._message_id,
            message=message_to_json(_unrun(response)),
            usage=usage.to_json() if usage is not None else None,
            state="complete",
        )
        if not runs_tools:
            return
        for call in response.tool_calls:
            self._open_calls[call.tool_call_id] = _OpenCall(tool_name=call.tool_name, turn=self._turn)
            self._emit(
                "tool_execution_start",
                turn=self._turn,
                tool_call_id=call.tool_call_id,
                tool_name=call.tool_name,
                args=call.args,
            )

    def end_run(
        self,
        *,
        messages: Sequence[Message],
        output: str | None,
        usage: Usage,
        error: tuple[str, str] | None = None,
        interrupted: bool = False,
        pending_deferred: bool = False,
        failed_call: tuple[str, str] | None = None,
    ) -> None:
        """The run is over: close what is open (from the final history `messages`), then `agent_end`.

        `failed_call` is (tool_call_id, error) of the call whose failure ended the run: it ran and failed, though
        no framework sent its result back (pydantic-ai raised; tinyagent's loop ended on it)."""
        if self._message_open:  # the stream broke off: the message ends with what had arrived
            self._message_open = False
            thought = "".join(self._streamed_thought)
            partial = TextPart(content="".join(self._streamed_text))
            arrived = Message.response(ThoughtPart(content=thought), partial) if thought else Message.response(partial)
            self._emit(
                "message_end",
                turn=self._turn,
                message_id=self._message_id,
                message=message_to_json(arrived),
                usage=None,
                state="interrupted",
            )
        answers = _answers(messages)
        for call_id in list(self._open_calls):
            if call_id in answers:
                self._end_call(call_id, *answers[call_id])
            elif failed_call is not None and call_id == failed_call[0]:
                self._end_call(call_id, "failed", failed_call[1])
            else:
                self._end_call(call_id, "deferred" if pending_deferred else "not_run", None)
        if self._turn_open:
            self._end_turn()
        outcome = "completed"
        if interrupted:
            outcome = "interrupted"
        elif error is not None:
            outcome = "error"
        elif pending_deferred:
            outcome = "deferred"
        final = self._last_message_id if outcome == "completed" else None
        self._emit(
            "agent_end",
            outcome=outcome,
            output=output if outcome == "completed" else None,
            final_message_id=final,
            error={"kind": error[0], "message": error[1]} if error is not None else None,
            usage=usage.to_json(),
        )

    def _end_call(self, call_id: str, outcome: str, result: Any) -> None:
        call = self._open_calls.pop(call_id)
        self._emit(
            "tool_execution_end",
            turn=call.turn,
            tool_call_id=call_id,
            tool_name=call.tool_name,
            outcome=outcome,
            result=result,
        )

    def _end_turn(self) -> None:
        self._turn_open = False
        self._emit("turn_end", turn=self._turn)


# --- reading and writing events.jsonl ---


def dumps_events(events: Iterable[Event], *, redacted: bool = False) -> bytes:
    """JSON Lines: one object per event, each line ending with a newline; with `redacted`, API keys are redacted
    value by value, so every line stays valid JSON, and the deltas of each streamed part are redacted as the text
    they join to (`redacted_deltas`)."""
    listed = list(events)
    data = b"".join(dumps(event.to_json()) + b"\n" for event in listed)
    if not redacted:
        return data
    # Nearly every log holds no key: then neither does any delta, nor all of them joined (every part's joined text,
    # parts one after the other), and the plain bytes are the redacted ones.
    streamed = "".join(str(event.data.get("delta", "")) for event in listed if event.type == "message_update")
    if not might_hold_secret_json(data) and not might_hold_secret(streamed):
        return data
    return b"".join(dumps_redacted(event.to_json()) + b"\n" for event in redacted_deltas(listed))


def redacted_deltas(events: Iterable[Event]) -> list[Event]:
    """The events with the `delta` of every `message_update` redacted over its part's joined text.

    A provider splits a key across deltas, and a fragment alone (`sk-ab`, or the middle of a key with no known
    shape) redacts to nothing. The deltas of a part whose joined text holds a key go through one `StreamRedactor`:
    a delta keeps what can be released by then (possibly nothing: text that could be the start of a key waits for
    the next delta) and the part's last delta also gets the rest. So the deltas still join to the part's text,
    redacted. The deltas of a part that holds no key are kept as they are."""
    listed = list(events)
    parts: dict[tuple[int, Any, Any], list[int]] = {}
    for index, event in enumerate(listed):
        if event.type == "message_update":
            parts.setdefault((event.run, event.get("message_id"), event.get("part_index")), []).append(index)
    for indexes in parts.values():
        deltas = [str(listed[index].get("delta", "")) for index in indexes]
        joined = "".join(deltas)
        if redact(joined) == joined:
            continue
        redactor = StreamRedactor()
        released = [redactor.feed(delta) for delta in deltas]
        released[-1] += redactor.finish()
        for index, delta in zip(indexes, released, strict=True):
            listed[index] = replace(listed[index], data={**listed[index].data, "delta": delta})
    return listed


def events_from_json(objects: Iterable[dict[str, Any]]) -> list[Event]:
    """Events from their JSON objects (as `dumps_events` writes them)."""
    events: list[Event] = []
    for obj in objects:
        data = {k: v for k, v in obj.items() if k not in ("seq", "type", "run", "t")}
        elapsed = obj.get("t")
        t = float(elapsed) if isinstance(elapsed, int | float) and not isinstance(elapsed, bool) else None
        events.append(Event(seq=int(obj["seq"]), type=obj["type"], run=int(obj["run"]), data=data, t=t))
    return events


def read_events(path: Path) -> list[Event]:
    """The events of an `events.jsonl` file (a regular file of at most `HISTORY_FILE_LIMIT`, `input_files`)."""
    return events_from_json(read_json_lines(path, what="an events log"))


EVENTS_FILE = "events.jsonl"
