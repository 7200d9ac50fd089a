"""Streamed scenario runs: deltas from the script, the script's usage, the same history and event log as a
plain run (real pydantic-ai runs through `PydanticAIStreamedEngine`)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from agentrig.runtime.history.events import Event
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.models.stream_chunks import json_fragments, word_chunks
from agentrig.scenarios.loader import LoadedScenario, load_paths
from tests.runtime.engine_helpers import execute, load_yaml

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"

STREAMED = """
name: streamed
stream: true
system_prompt: You are terse.
tools:
  forecast:
    parameters: {type: object, properties: {city: {type: string}, days: {type: integer}}}
    results:
      - return: sunny
turns:
  - user: Weather?
    model:
      - thought: I should look it up.
        text: "Let me look. "
        tool_calls:
          - {id: c1, name: forecast, args: {city: Paris, days: 3}}
          - {id: c2, name: forecast, args: {city: Rome, days: 12345}}
        usage: {input_tokens: 11, output_tokens: 7, cache_read_tokens: 3}
      - text: Sunny in both.
        chunks: ["Sun", "ny in", " both."]
        usage: {input_tokens: 13, output_tokens: 5}
"""


def streamed(loaded: LoadedScenario, on: bool = True) -> LoadedScenario:
    return replace(loaded, scenario=loaded.scenario.model_copy(update={"stream": on}))


def updates(events: tuple[Event, ...], kind: str, message_id: str) -> list[str]:
    return [
        e.get("delta")
        for e in events
        if e.type == "message_update" and e.get("part_kind") == kind and e.get("message_id") == message_id
    ]


@pytest.mark.parametrize(
    "arguments",
    ['{"city": "Paris", "days": 3}', '{"n": 1234567890123}', '{"s": "a long string value here"}', "{}", '{"a'],
)
def test_argument_fragments_join_back_and_none_is_json_alone(arguments: str) -> None:
    fragments = json_fragments(arguments, size=3)
    assert "".join(fragments) == arguments
    assert len(fragments) >= 2
    for fragment in fragments:
        with pytest.raises(json.JSONDecodeError):
            json.loads(fragment)


def test_word_chunks_join_back_in_at_most_three_pieces() -> None:
    assert word_chunks("Two  files.\n") == ["Two  ", "files.\n"]
    assert word_chunks("one two three four five six") == ["one two ", "three four ", "five six"]
    assert word_chunks("single") == ["single"]
    assert "".join(word_chunks("  x y ")) == "  x y "


def test_a_streamed_step_arrives_as_deltas_with_the_scripts_usage(tmp_path: Path) -> None:
    execution = execute(load_yaml(tmp_path, STREAMED))

    events = execution.events
    assert updates(events, "text", "1.2") == ["Sun", "ny in", " both."]  # explicit chunks
    assert updates(events, "text", "1.1") == ["Let ", "me ", "look. "]  # default: up to three, at words
    assert "".join(updates(events, "thought", "1.1")) == "I should look it up."
    first_call = [e for e in events if e.type == "message_update" and e.get("tool_call_id") == "c1"]
    assert first_call[0].get("tool_name") == "forecast"
    assert len(first_call) > 1
    assert json.loads("".join(e.get("delta") for e in first_call)) == {"city": "Paris", "days": 3}
    assert [e.get("tool_call_id") for e in events if e.type == "tool_execution_start"] == ["c1", "c2"]
    turn = execution.turns[0]
    assert (turn.usage.requests, turn.usage.input_tokens, turn.usage.output_tokens) == (2, 24, 12)
    assert turn.usage.cache_read_tokens == 3
    assert not turn.usage.estimated
    ends = [e for e in events if e.type == "message_end"]
    assert [e.get("usage")["input_tokens"] for e in ends] == [11, 13]


def test_streamed_and_plain_runs_of_a_script_leave_the_same_history(tmp_path: Path) -> None:
    loaded = load_yaml(tmp_path, STREAMED)
    plain = execute(streamed(loaded, on=False))
    stream = execute(loaded)
    assert without_per_run_values(stream.session.messages) == without_per_run_values(plain.session.messages)
    assert [t.usage for t in stream.turns] == [t.usage for t in plain.turns]


def _without_updates(events: tuple[Event, ...]) -> list[dict[str, object]]:
    return [{**e.to_json(), "seq": None, "t": None} for e in events if e.type != "message_update"]  # times differ


@pytest.mark.parametrize("loaded", load_paths([SCENARIOS]), ids=lambda item: item.scenario.name)
def test_every_scenario_streams_to_the_plain_history_usage_and_event_log(loaded: LoadedScenario) -> None:
    plain = execute(streamed(loaded, on=False))
    stream = execute(streamed(loaded))
    assert without_per_run_values(stream.session.messages) == without_per_run_values(plain.session.messages)
    assert [(t.usage, t.output, t.error, t.interrupted) for t in stream.turns] == [
        (t.usage, t.output, t.error, t.interrupted) for t in plain.turns
    ]
    assert not any(e.type == "message_update" for e in plain.events)
    assert _without_cut_messages(_without_updates(stream.events), loaded) == _without_updates(plain.events)


def _without_cut_messages(events: list[dict[str, object]], loaded: LoadedScenario) -> list[dict[str, object]]:
    """A response cut mid-stream (`cancel: {during_response: N}`, or a `cut` step the provider ends early) began in a
    streamed run, so its log has that message's start and its interrupted end; a plain run never received it.
    Everything else is the same."""
    turns = loaded.scenario.turns
    cancelled = any(turn.cancel is not None and turn.cancel.during_response for turn in turns)
    if not cancelled and not any(step.cut for turn in turns for step in turn.model):
        return events
    cut = {e["message_id"] for e in events if e["type"] == "message_end" and e.get("state") == "interrupted"}
    return [e for e in events if not (e["type"] in ("message_start", "message_end") and e["message_id"] in cut)]


def test_run_stream_streams_every_scenario_against_the_same_golden(tmp_path: Path) -> None:
    from agentrig.cli import main
    from agentrig.runtime.history.events import read_events

    out = tmp_path / "out"
    main(["run", str(SCENARIOS / "tool_roundtrip.yaml"), "--stream", "--out", str(out), "-q"])  # exit 0: returns
    events = read_events(out / "scenarios" / "tool-roundtrip" / "events.jsonl")
    assert [e.get("delta") for e in events if e.get("part_kind") == "text"] == ["Two ", "files."]


def test_chunks_must_join_to_the_text(tmp_path: Path) -> None:
    from agentrig.errors import AgentrigError

    bad = STREAMED.replace('chunks: ["Sun", "ny in", " both."]', 'chunks: ["Sun", "ny"]')
    with pytest.raises(AgentrigError, match="chunks must join to text"):
        load_yaml(tmp_path, bad)
