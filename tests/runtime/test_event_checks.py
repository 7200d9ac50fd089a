"""expect.events: each built-in rule catches its violation; order and counts; YAML errors name the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import AgentrigError
from agentrig.runtime.checks.event_checks import check_events
from agentrig.runtime.history.canonical import Message, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.events import Event, EventLog, StreamDelta
from agentrig.runtime.history.usage import Usage
from agentrig.scenarios.event_model import EventExpectations
from tests.runtime.engine_helpers import load_yaml

CALL = ToolCallPart(tool_call_id="c1", tool_name="bash", args={"command": "ls"})


def good_log() -> list[Event]:
    """A streamed run: a tool round, then the final answer."""
    log = EventLog()
    log.start_run("List the files.")
    log.request_sent(Message.request(TextPart(content="List the files.")))
    log.stream_delta(StreamDelta(part_index=0, kind="text", delta="Let me "))
    log.stream_delta(StreamDelta(part_index=0, kind="text", delta="look."))
    log.stream_delta(StreamDelta(part_index=1, kind="tool-call", delta='{"comm', tool_call_id="c1", tool_name="bash"))
    log.stream_delta(StreamDelta(part_index=1, kind="tool-call", delta='and": "ls"}', tool_call_id="c1"))
    log.response_received(Message.response(TextPart(content="Let me look."), CALL), usage=Usage(requests=1))
    log.request_sent(Message.request(ToolReturnPart(tool_call_id="c1", tool_name="bash", content="a.txt")))
    log.stream_delta(StreamDelta(part_index=0, kind="text", delta="One file."))
    final = Message.response(TextPart(content="One file."))
    log.response_received(final, usage=Usage(requests=1))
    log.end_run(messages=[], output="One file.", usage=Usage(requests=2))
    return log.events


def edited(events: list[Event], seq: int, **data: Any) -> list[Event]:
    return [Event(seq=e.seq, type=e.type, run=e.run, data={**e.data, **data}) if e.seq == seq else e for e in events]


def failures(events: list[Event], **expect: Any) -> dict[str, Any]:
    checks = check_events(events, EventExpectations.model_validate(expect))
    return {c.name: c.actual for c in checks if not c.passed}


def seq_of(events: list[Event], type_: str, nth: int = 0) -> int:
    return [e.seq for e in events if e.type == type_][nth]


def test_a_good_log_passes_every_rule() -> None:
    assert failures(good_log()) == {}


def test_well_formed_catches_an_update_outside_its_message() -> None:
    events = good_log()
    moved = [e for e in events if e.type != "message_update"] + [e for e in events if e.type == "message_update"][:1]
    assert "events.well_formed" in failures(moved)


def test_tool_execution_ends_catches_a_start_without_end() -> None:
    events = [e for e in good_log() if e.type != "tool_execution_end"]
    assert "c1 starts and never ends" in failures(events)["events.tool_execution_ends"]


def test_complete_args_catches_partial_arguments_at_start() -> None:
    events = good_log()
    broken = edited(events, seq_of(events, "tool_execution_start"), args='{"comm')
    assert "events.complete_args_at_start" in failures(broken)


def test_complete_args_catches_fragments_that_do_not_join_to_the_arguments() -> None:
    events = good_log()
    broken = edited(events, seq_of(events, "message_update", 3), delta='and": "rm"}')
    assert "fragments join" in failures(broken)["events.complete_args_at_start"]


def test_one_final_result_catches_a_second_agent_end_and_a_wrong_final_message() -> None:
    events = good_log()
    doubled = [*events, Event(seq=len(events), type="agent_end", run=1, data={"outcome": "completed"})]
    assert "2 agent_end" in failures(doubled, rules=["one_final_result"])["events.one_final_result"]
    wrong = edited(events, seq_of(events, "agent_end"), final_message_id="1.1")
    assert "events.one_final_result" in failures(wrong)


def test_no_repeated_final_text_catches_the_text_before_the_tools_said_again() -> None:
    events = good_log()
    end = seq_of(events, "message_end", 1)
    repeated = edited(
        events, end, message={"kind": "response", "parts": [{"part_kind": "text", "content": "Let me look."}]}
    )
    assert (
        "repeats message 1.1" in failures(repeated, rules=["no_repeated_final_text"])["events.no_repeated_final_text"]
    )


def test_text_deltas_join_catches_a_lost_delta() -> None:
    events = good_log()
    lost = [e for e in events if e.seq != seq_of(events, "message_update", 1)]
    assert "events.text_deltas_join" in failures(lost)


def test_rules_none_and_a_subset() -> None:
    events = [e for e in good_log() if e.type != "tool_execution_end"]
    assert failures(events, rules="none") == {}
    assert list(failures(events, rules=["tool_execution_ends"])) == ["events.tool_execution_ends"]


def test_order_and_counts() -> None:
    events = good_log()
    ok = ["agent_start", {"type": "tool_execution_start", "tool_call_id": "c1"}, "turn_end", "agent_end"]
    assert failures(events, order=ok) == {}
    wrong = ["tool_execution_end", {"type": "tool_execution_start", "tool_call_id": "c1"}]
    assert "events.order" in failures(events, order=wrong)
    assert failures(events, counts=[{"event": "message_update", "min": 5}]) == {}
    assert failures(events, counts=[{"event": "turn_start", "equals": 3}]) == {"events.counts turn_start": 2}


def test_an_unknown_event_type_in_yaml_names_the_field(tmp_path: Path) -> None:
    text = """
name: bad-events
turns:
  - user: hi
    model: [{text: hello}]
expect:
  events:
    order: [agent_begin]
"""
    with pytest.raises(AgentrigError, match=r"expect\.events\.order"):
        load_yaml(tmp_path, text)
