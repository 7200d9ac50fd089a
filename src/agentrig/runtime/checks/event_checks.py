"""`expect.events`: the event log checked against the built-in rules and the scenario's order and counts.

Each rule is checked per agent run and reports the first violation it finds (the event's `seq` and why), so
a failure points at one line of `events.jsonl`. See docs/events.md for the log and scenarios.md for YAML.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from itertools import groupby
from typing import Any

from agentrig.runtime.checks.check_support import as_json
from agentrig.runtime.history.events import Event
from agentrig.runtime.history.run_records import Check
from agentrig.scenarios.event_model import EVENT_RULES, EventCount, EventExpectations, EventMatcher, EventTypeName

__all__ = ["check_events"]

_NESTING: dict[str, tuple[str, ...]] = {
    # event type -> the state(s) it may come in; the state is the last structural event seen in the run
    "turn_start": ("agent_start", "turn_end"),
    "message_start": ("turn_start",),
    "message_update": ("message_start", "message_update"),
    "message_end": ("message_start", "message_update"),
    "tool_execution_start": ("message_end", "tool_execution_start", "tool_execution_end"),
    "tool_execution_end": ("tool_execution_start", "tool_execution_end"),
    "turn_end": ("turn_start", "message_end", "tool_execution_end"),
    "agent_end": ("agent_start", "turn_end"),
}


def _message_text(message: Any, kind: str) -> str:
    parts: list[dict[str, Any]] = message.get("parts", []) if isinstance(message, dict) else []
    wanted = "text" if kind == "text" else "thought"
    return "".join(str(p.get("content", "")) for p in parts if p.get("part_kind") == wanted)


def _message_calls(message: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = message.get("parts", []) if isinstance(message, dict) else []
    return {p["tool_call_id"]: p.get("args") for p in parts if p.get("part_kind") == "tool-call"}


# --- the rules: each returns None or the first violation, for the events of one run ---


def _well_formed(run: list[Event]) -> str | None:
    if not run or run[0].type != "agent_start":
        return f"seq {run[0].seq if run else '?'}: a run starts with agent_start"
    state = "agent_start"
    message_id: str | None = None
    for event in run[1:]:
        if state == "agent_end":
            return f"seq {event.seq}: {event.type} after agent_end"
        if event.type == "request_retry":  # a request failed on the wire before its answer began: no state change
            if state != "turn_start":
                return f"seq {event.seq}: request_retry after {state}"
            continue
        allowed = _NESTING.get(event.type, ())
        if state not in allowed:
            return f"seq {event.seq}: {event.type} after {state}"
        if event.type == "message_start":
            message_id = event.get("message_id")
        elif event.type in ("message_update", "message_end") and event.get("message_id") != message_id:
            return f"seq {event.seq}: {event.type} of message {event.get('message_id')} inside {message_id}"
        state = event.type
    if state != "agent_end":
        return f"the run ends with {state}, not agent_end"
    return None


def _tool_execution_ends(run: list[Event]) -> str | None:
    open_calls: dict[str, int] = {}
    for event in run:
        call_id = event.get("tool_call_id")
        if event.type == "tool_execution_start":
            if call_id in open_calls:
                return f"seq {event.seq}: {call_id} started twice"
            open_calls[call_id] = event.seq
        elif event.type == "tool_execution_end" and open_calls.pop(call_id, None) is None:
            return f"seq {event.seq}: {call_id} ends without a start"
    if open_calls:
        call_id, seq = next(iter(open_calls.items()))
        return f"seq {seq}: {call_id} starts and never ends"
    return None


def _complete_args_at_start(run: list[Event]) -> str | None:
    message_calls: dict[str, Any] = {}
    fragments: dict[str, list[str]] = {}
    for event in run:
        if event.type == "message_update" and event.get("part_kind") == "tool-call":
            fragments.setdefault(event.get("tool_call_id") or f"part {event.get('part_index')}", []).append(
                event.get("delta") or ""
            )
        elif event.type == "message_end":
            message_calls.update(_message_calls(event.get("message")))
        elif event.type == "tool_execution_start":
            call_id = event.get("tool_call_id")
            args = event.get("args")
            if call_id not in message_calls:
                return f"seq {event.seq}: {call_id} starts but no message called it"
            if args != message_calls[call_id]:
                called = as_json(message_calls[call_id])
                return f"seq {event.seq}: {call_id} starts with {as_json(args)}, the message has {called}"
            joined = "".join(fragments.get(call_id, []))
            if joined and isinstance(args, dict) and json.loads(joined) != args:
                return f"seq {event.seq}: {call_id}'s streamed fragments join to {as_json(joined)}, not its arguments"
    return None


def _one_final_result(run: list[Event]) -> str | None:
    ends = [e for e in run if e.type == "agent_end"]
    if len(ends) != 1:
        return f"{len(ends)} agent_end events in run {run[0].run}"
    end = ends[0]
    messages = [e for e in run if e.type == "message_end"]
    final = end.get("final_message_id")
    if end.get("outcome") != "completed":
        return None if final is None else f"seq {end.seq}: a run that did not complete names final message {final}"
    if not messages or final != messages[-1].get("message_id"):
        last = messages[-1].get("message_id") if messages else None
        return f"seq {end.seq}: final result {final}, the run's last message is {last}"
    return None


def _no_repeated_final_text(run: list[Event]) -> str | None:
    messages = [e for e in run if e.type == "message_end"]
    end = next((e for e in run if e.type == "agent_end"), None)
    if end is None or end.get("outcome") != "completed" or not messages:
        return None
    final_text = _message_text(messages[-1].get("message"), "text").strip()
    for earlier in messages[:-1]:
        if final_text and _message_text(earlier.get("message"), "text").strip() == final_text:
            return f"seq {messages[-1].seq}: the final text repeats message {earlier.get('message_id')}"
    return None


def _text_deltas_join(run: list[Event]) -> str | None:
    deltas: dict[tuple[str, str], list[str]] = {}
    for event in run:
        if event.type == "message_update" and event.get("part_kind") in ("text", "thought"):
            deltas.setdefault((event.get("message_id"), event.get("part_kind")), []).append(event.get("delta") or "")
        elif event.type == "message_end":
            for kind in ("text", "thought"):
                pieces = deltas.get((event.get("message_id"), kind))
                if pieces is None:
                    continue
                expected = _message_text(event.get("message"), kind)
                if "".join(pieces) != expected:
                    joined = "".join(pieces)
                    said = as_json(expected)
                    return f"seq {event.seq}: {kind} deltas join to {as_json(joined)}, the message has {said}"
    return None


_RULES: dict[str, Callable[[list[Event]], str | None]] = {
    "well_formed": _well_formed,
    "tool_execution_ends": _tool_execution_ends,
    "complete_args_at_start": _complete_args_at_start,
    "one_final_result": _one_final_result,
    "no_repeated_final_text": _no_repeated_final_text,
    "text_deltas_join": _text_deltas_join,
}


# --- order and counts ---


def _matches(event: Event, matcher: EventTypeName | EventMatcher) -> bool:
    if isinstance(matcher, str):
        return event.type == matcher
    if event.type != matcher.type or (matcher.run is not None and event.run != matcher.run):
        return False
    fields = ("tool_call_id", "tool_name", "part_kind", "outcome")
    return all(getattr(matcher, name) is None or event.get(name) == getattr(matcher, name) for name in fields)


def _describe(matcher: EventTypeName | EventMatcher) -> str:
    if isinstance(matcher, str):
        return matcher
    return json.dumps(matcher.model_dump(exclude_none=True))


def _order_check(events: Sequence[Event], order: Sequence[EventTypeName | EventMatcher]) -> Check:
    position = 0
    found: list[int] = []
    for matcher in order:
        while position < len(events) and not _matches(events[position], matcher):
            position += 1
        if position == len(events):
            return Check(
                name="events.order",
                passed=False,
                expected=[_describe(m) for m in order],
                actual=f"matched {len(found)} of {len(order)} (seq {found}); no {_describe(matcher)} after them",
            )
        found.append(events[position].seq)
        position += 1
    return Check(name="events.order", passed=True, expected=[_describe(m) for m in order], actual=found)


def _count_check(events: Sequence[Event], count: EventCount) -> Check:
    actual = sum(1 for e in events if _matches(e, count.event))
    passed = (
        (count.equals is None or actual == count.equals)
        and (count.min is None or actual >= count.min)
        and (count.max is None or actual <= count.max)
    )
    expected = count.model_dump(exclude_none=True, exclude={"event"})
    return Check(name=f"events.counts {_describe(count.event)}", passed=passed, expected=expected, actual=actual)


def check_events(events: Sequence[Event], expect: EventExpectations) -> list[Check]:
    """The checks `expect` asks for on `events` (a scenario's whole log)."""
    checks: list[Check] = []
    rules = EVENT_RULES if expect.rules == "all" else () if expect.rules == "none" else expect.rules
    runs = [list(group) for _, group in groupby(events, key=lambda e: e.run)]
    for rule in rules:
        problem = next((p for p in (_RULES[rule](run) for run in runs) if p is not None), None)
        checks.append(Check(name=f"events.{rule}", passed=problem is None, expected="holds", actual=problem or "holds"))
    if expect.order:
        checks.append(_order_check(events, expect.order))
    checks.extend(_count_check(events, count) for count in expect.counts)
    return checks
