"""Compaction end to end: real pydantic-ai runs through `execute_scenario` and `agentrig run`.

Each test writes a scenario, runs it with the scripted model, and checks the turn records, what the model
was sent (the script's `expect_input` checks), the stored history and the session's compaction record.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from pydantic_ai.models import Model
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.engine.compaction import summarizer
from agentrig.runtime.engine.compaction.controller import SUMMARY_PREFIX
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import ScenarioExecution, execute_scenario
from agentrig.runtime.history.canonical import Message, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.run_records import TurnRecord
from agentrig.runtime.history.sessions import load_session, save_session
from tests.runtime.engine_helpers import assert_invariants, execute, load_yaml

cli = CliRunner()

EARLY_PROMPT = "We are preparing the 2.1 release. Keep track of the decisions we make from now on."
EARLY_ANSWER = "Understood. I will keep track of the release decisions as we go."

# Two plain turns, then the turns under test. Estimated tokens: turn 1's prompt 28, answer 24.
PREAMBLE = f"""
  - user: {EARLY_PROMPT}
    model:
      - text: {EARLY_ANSWER}
        usage: {{input_tokens: 40, output_tokens: 25}}
  - user: We ship on Friday, after the wheels are published.
    model:
      - text: Noted, Friday after the wheels.
        usage: {{input_tokens: 60, output_tokens: 8}}
"""

TOOLS = """
tools:
  read_file:
    description: Read a file.
    parameters: {type: object, properties: {path: {type: string}}, required: [path]}
    results:
      - return: "Release checklist: bump version, tag, publish wheels, announce on the mailing list."
"""


def scenario(tmp_path: Path, settings: str, turns: str, *, extra: str = "", name: str = "flow") -> str:
    """A scenario file's text: the compaction settings, optional extra top-level keys, and its turns."""
    return f"name: {name}\nsystem_prompt: You are terse.\nsettings:\n  compaction: {settings}\n{extra}\nturns:{turns}"


def run(tmp_path: Path, text: str) -> ScenarioExecution:
    return execute(load_yaml(tmp_path, text))


def failed_checks(turn: TurnRecord) -> list[str]:
    return [f"{c.name}: expected {c.expected!r}, got {c.actual!r}" for c in turn.model_input_checks if not c.passed]


def texts(history: tuple[Message, ...]) -> list[str]:
    return [message.text or "" for message in history]


class CountingSummarizers:
    """Wraps `summarizer.model_summarizer` to count the summarize calls a run makes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        original = summarizer.model_summarizer

        def counting(model: Model) -> Callable[[str], Awaitable[str]]:
            summarize = original(model)

            async def wrapper(transcript: str) -> str:
                self.calls += 1
                return await summarize(transcript)

            return wrapper

        monkeypatch.setattr(summarizer, "model_summarizer", counting)


# --- compaction by threshold


def test_threshold_compaction_summarizes_older_messages_for_the_model_only(tmp_path: Path) -> None:
    # Turn 3's check: 71 tokens of history + 13 for the prompt > 80 - 0 - 0.
    text = scenario(
        tmp_path,
        "{context_window: 80}",
        PREAMBLE
        + """
  - user: Who writes the announcement?
    model:
      - summary: Release 2.1 ships on Friday after the wheels are published.
        usage: {input_tokens: 90, output_tokens: 15}
      - text: Grace writes it.
        expect_input:
          contains_text: ["[SUMMARY OF EARLIER CONVERSATION]", "ships on Friday after the wheels", "Who writes"]
          not_contains_text: ["Keep track of the decisions", "Noted, Friday"]
          message_count: 1
        usage: {input_tokens: 30, output_tokens: 4}
""",
    )
    result = run(tmp_path, text)

    first, second, third = result.turns
    assert first.compaction is not None
    assert (first.compaction.status, first.compaction.reason) == (
        "skipped",
        "below_threshold",
    )
    assert second.compaction is not None
    assert second.compaction.status == "skipped"
    assert third.error is None, third.error
    assert third.output == "Grace writes it."
    assert third.compaction is not None
    assert (third.compaction.status, third.compaction.reason, third.compaction.compacted_messages) == (
        "compacted",
        "threshold_exceeded",
        4,
    )
    assert third.compaction.tokens_after < third.compaction.tokens_before
    assert len(third.model_input_checks) == 6
    assert failed_checks(third) == []
    # The session keeps every message; only the model's input was compacted.
    assert texts(result.session.messages) == [
        EARLY_PROMPT,
        EARLY_ANSWER,
        "We ship on Friday, after the wheels are published.",
        "Noted, Friday after the wheels.",
        "Who writes the announcement?",
        "Grace writes it.",
    ]
    assert SUMMARY_PREFIX.encode() not in result.pydantic_ai_dump
    record = result.session.compaction
    assert record is not None
    assert record.summary == "Release 2.1 ships on Friday after the wheels are published."
    assert (record.compacted_message_count, record.count, record.previous_summary) == (4, 1, None)
    assert (record.tokens_before, record.tokens_after) == (
        third.compaction.tokens_before,
        third.compaction.tokens_after,
    )
    assert record.created_at
    assert_invariants(result)


def test_the_boundary_keeps_a_tool_call_with_its_return(tmp_path: Path) -> None:
    # keep_recent 60: counting back from the end reaches 60 tokens at the tool return, which would split the
    # call from its return; the boundary moves back to the request that started that exchange.
    text = scenario(
        tmp_path,
        "{context_window: 260, reserve: 50, keep_recent: 60}",
        """
  - user: We are preparing the 2.1 release of our library. Please keep track of the decisions we make.
    model:
      - text: Understood. I will keep track of the release decisions as we go, starting with the checklist.
        usage: {input_tokens: 40, output_tokens: 25}
  - user: Read notes.txt and tell me the checklist.
    model:
      - tool_calls: [{id: tc_1, name: read_file, args: {path: notes.txt}}]
        usage: {input_tokens: 90, output_tokens: 12}
      - text: "The checklist is: bump version, tag, publish wheels, announce on the mailing list."
        usage: {input_tokens: 130, output_tokens: 20}
  - user: Now draft the announcement.
    model:
      - summary: The user is preparing release 2.1 and wants decisions tracked.
        usage: {input_tokens: 60, output_tokens: 12}
      - text: Announcing 2.1.
        expect_input:
          contains_text: ["[SUMMARY OF EARLIER CONVERSATION]", "Read notes.txt", "Release checklist: bump"]
          not_contains_text: ["Please keep track of the decisions"]
          no_dangling_tool_calls: true
        usage: {input_tokens: 80, output_tokens: 4}
""",
        extra=TOOLS,
    )
    result = run(tmp_path, text)

    third = result.turns[2]
    assert third.compaction is not None
    assert (third.compaction.status, third.compaction.compacted_messages) == ("compacted", 2)
    assert failed_checks(third) == []
    stored = result.session.messages
    boundary = result.session.compaction.compacted_message_count if result.session.compaction else -1
    head_calls = {p.tool_call_id for m in stored[:boundary] for p in m.parts if isinstance(p, ToolCallPart)}
    tail_returns = {p.tool_call_id for m in stored[boundary:] for p in m.parts if isinstance(p, ToolReturnPart)}
    assert head_calls.isdisjoint(tail_returns)
    assert_invariants(result)


def test_a_request_is_compacted_at_most_once_whatever_its_tool_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summarizers = CountingSummarizers(monkeypatch)
    seen = {
        "contains_text": ["[SUMMARY OF EARLIER CONVERSATION]"],
        "not_contains_text": ["Keep track of the decisions"],
    }
    text = scenario(
        tmp_path,
        "{context_window: 80}",
        PREAMBLE
        + f"""
  - user: Read the notes three times.
    model:
      - summary: Release 2.1 ships on Friday.
        usage: {{input_tokens: 90, output_tokens: 8}}
      - tool_calls: [{{id: tc_1, name: read_file, args: {{path: a}}}}]
        expect_input: {json.dumps(seen)}
        usage: {{input_tokens: 30, output_tokens: 9}}
      - tool_calls: [{{id: tc_2, name: read_file, args: {{path: b}}}}]
        expect_input: {json.dumps(seen)}
        usage: {{input_tokens: 60, output_tokens: 9}}
      - tool_calls: [{{id: tc_3, name: read_file, args: {{path: c}}}}]
        expect_input: {json.dumps(seen)}
        usage: {{input_tokens: 90, output_tokens: 9}}
      - text: Read three times.
        expect_input: {json.dumps(seen)}
        usage: {{input_tokens: 120, output_tokens: 4}}
""",
        extra=TOOLS,
    )
    result = run(tmp_path, text)

    third = result.turns[2]
    assert third.error is None, third.error
    assert third.usage.requests == 4  # four model turns inside the request...
    assert summarizers.calls == 1  # ...and one compaction
    assert third.compaction is not None
    assert third.compaction.status == "compacted"
    assert len(third.model_input_checks) == 8
    assert failed_checks(third) == []
    assert_invariants(result)


def test_no_valid_boundary_is_skipped_with_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summarizers = CountingSummarizers(monkeypatch)
    # The first prompt alone exceeds the window, and before it there is nothing to summarize.
    long_prompt = "Please review this very long specification of the release process. " * 4
    text = scenario(
        tmp_path,
        "{context_window: 30}",
        f"""
  - user: {long_prompt}
    model:
      - text: Reviewed.
        expect_input: {{contains_text: ["very long specification"]}}
        usage: {{input_tokens: 70, output_tokens: 2}}
""",
    )
    result = run(tmp_path, text)

    (turn,) = result.turns
    assert turn.error is None
    assert turn.compaction is not None
    assert (turn.compaction.status, turn.compaction.reason) == ("skipped", "no_valid_boundary")
    assert turn.compaction.tokens_before > 30
    assert summarizers.calls == 0
    assert failed_checks(turn) == []
    assert result.session.compaction is None


# --- summary failure


def test_an_empty_summary_falls_back_to_the_uncompacted_input(tmp_path: Path) -> None:
    text = scenario(
        tmp_path,
        "{context_window: 80}",
        PREAMBLE
        + """
  - user: Who writes the announcement?
    model:
      - summary: ""
        usage: {input_tokens: 90, output_tokens: 0}
      - text: Grace writes it.
        expect_input:
          contains_text: ["Keep track of the decisions", "Noted, Friday"]
          not_contains_text: ["[SUMMARY OF EARLIER CONVERSATION]"]
        usage: {input_tokens: 90, output_tokens: 4}
""",
    )
    result = run(tmp_path, text)

    third = result.turns[2]
    assert third.error is None, third.error
    assert third.output == "Grace writes it."
    assert third.compaction is not None
    assert (third.compaction.status, third.compaction.reason) == ("failed", "summary_failed")
    assert failed_checks(third) == []
    assert result.session.compaction is None
    assert len(result.session.messages) == 6
    assert_invariants(result)


def test_a_provider_error_on_the_summary_request_falls_back_without_failing_the_turn(tmp_path: Path) -> None:
    text = scenario(
        tmp_path,
        "{context_window: 80}",
        PREAMBLE
        + """
  - user: Who writes the announcement?
    model:
      - error: {kind: server_error}
        usage: {input_tokens: 0, output_tokens: 0}
      - text: Grace writes it.
        expect_input: {contains_text: ["Keep track of the decisions"]}
        usage: {input_tokens: 90, output_tokens: 4}
""",
    )
    result = run(tmp_path, text)

    third = result.turns[2]
    assert third.error is None, third.error
    assert third.compaction is not None
    assert (third.compaction.status, third.compaction.reason) == ("failed", "summary_failed")
    assert failed_checks(third) == []


# --- context overflow


OVERFLOW_TURN = """
  - user: Who writes the announcement?
    model:
      - error: {kind: context_length, message: "prompt is too long: 210000 tokens > 200000 maximum"}
        usage: {input_tokens: 0, output_tokens: 0}
      - summary: Release 2.1 ships on Friday after the wheels are published.
        usage: {input_tokens: 90, output_tokens: 15}
"""


def test_context_overflow_forces_a_compaction_and_retries_once(tmp_path: Path) -> None:
    text = scenario(
        tmp_path,
        "{context_window: 100000, reserve: 1000}",
        PREAMBLE
        + OVERFLOW_TURN
        + """
      - text: Grace writes it.
        expect_input:
          contains_text: ["[SUMMARY OF EARLIER CONVERSATION]", "ships on Friday", "Who writes the announcement?"]
          not_contains_text: ["Keep track of the decisions", "Noted, Friday"]
        usage: {input_tokens: 50, output_tokens: 4}
""",
    )
    result = run(tmp_path, text)

    third = result.turns[2]
    assert third.error is None, third.error
    assert third.output == "Grace writes it."
    assert third.compaction is not None
    assert (third.compaction.status, third.compaction.reason, third.compaction.compacted_messages) == (
        "compacted",
        "context_overflow",
        4,
    )
    assert failed_checks(third) == []
    assert texts(result.session.messages)[-2:] == ["Who writes the announcement?", "Grace writes it."]
    assert len(result.session.messages) == 6
    assert result.session.compaction is not None
    assert result.session.compaction.compacted_message_count == 4
    assert_invariants(result)


def test_a_second_overflow_ends_the_turn_with_the_error_and_keeps_the_history(tmp_path: Path) -> None:
    text = scenario(
        tmp_path,
        "{context_window: 100000, reserve: 1000}",
        PREAMBLE
        + OVERFLOW_TURN
        + """
      - error: {kind: context_length, message: "prompt is too long: 205000 tokens > 200000 maximum"}
        usage: {input_tokens: 0, output_tokens: 0}
""",
    )
    result = run(tmp_path, text)

    third = result.turns[2]
    assert third.error is not None
    assert third.error.kind == "context_length"
    assert "205000 tokens" in third.error.message  # the retry's error, not the first one
    assert third.error.message.endswith("(still too long after compacting 4 messages and one retry)")
    assert third.output is None
    # Nothing lost: the earlier turns and the prompt that overflowed are all stored.
    assert texts(result.session.messages) == [
        EARLY_PROMPT,
        EARLY_ANSWER,
        "We ship on Friday, after the wheels are published.",
        "Noted, Friday after the wheels.",
        "Who writes the announcement?",
    ]
    assert_invariants(result)


def test_overflow_without_compaction_settings_is_not_retried(tmp_path: Path) -> None:
    text = (
        "name: plain\nturns:\n  - user: hi\n    model:\n"
        "      - error: {kind: context_length}\n        usage: {input_tokens: 0, output_tokens: 0}\n"
    )
    (turn,) = run(tmp_path, text).turns
    assert turn.error is not None
    assert turn.error.kind == "context_length"
    assert turn.compaction is None


# --- through the CLI


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_agentrig_run_exits_3_on_an_unexpected_second_overflow_and_0_when_expected(tmp_path: Path) -> None:
    turns = (
        PREAMBLE
        + OVERFLOW_TURN
        + """
      - error: {kind: context_length, message: "prompt is too long: 205000 tokens > 200000 maximum"}
        usage: {input_tokens: 0, output_tokens: 0}
"""
    )
    settings = "{context_window: 100000}"
    unexpected = _write(tmp_path, "unexpected", scenario(tmp_path, settings, turns, name="unexpected"))
    result = cli.invoke(app, ["run", str(unexpected), "--out", str(tmp_path / "out1")])
    assert result.exit_code == 3, result.output
    assert "context_length" in result.output

    expected_turns = turns + "    expect:\n      error: {kind: context_length, contains: 205000 tokens}\n"
    expected = _write(tmp_path, "expected", scenario(tmp_path, settings, expected_turns, name="expected"))
    result = cli.invoke(app, ["run", str(expected), "--out", str(tmp_path / "out2")])
    assert result.exit_code == 0, result.output


def test_agentrig_run_writes_the_compaction_record_in_session_json(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "threshold",
        scenario(
            tmp_path,
            "{context_window: 80}",
            PREAMBLE
            + """
  - user: Who writes the announcement?
    model:
      - summary: Release 2.1 ships on Friday.
        usage: {input_tokens: 90, output_tokens: 8}
      - text: Grace writes it.
        usage: {input_tokens: 30, output_tokens: 4}
    expect:
      compaction: {status: compacted, reason: threshold_exceeded, compacted_messages: 4}
""",
            name="threshold",
        ),
    )
    out = tmp_path / "out"
    result = cli.invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    stored = json.loads((out / "scenarios" / "threshold" / "session.json").read_text(encoding="utf-8"))
    assert stored["compaction"]["summary"] == "Release 2.1 ships on Friday."
    assert stored["compaction"]["compacted_message_count"] == 4
    assert stored["history"] == "history.json"  # its messages are the folder's history.json, written once
    session = load_session(out / "scenarios" / "threshold" / "session.json")
    assert len(session.messages) == 6
    assert session.compaction is not None
    assert session.compaction.count == 1


# --- resume: the record is loaded back and used


RESUMED_TURN = """
  - user: And who writes the announcement?
    model:
      - text: Grace writes it.
        expect_input:
          contains_text: ["[SUMMARY OF EARLIER CONVERSATION]", "Release 2.1 ships on Friday."]
          not_contains_text: ["Keep track of the decisions", "Noted, Friday"]
        usage: {input_tokens: 30, output_tokens: 4}
"""


def test_a_saved_session_is_resumed_with_its_compaction_record(tmp_path: Path) -> None:
    first = run(
        tmp_path,
        scenario(
            tmp_path,
            "{context_window: 80}",
            PREAMBLE
            + """
  - user: Who writes the announcement?
    model:
      - summary: Release 2.1 ships on Friday.
        usage: {input_tokens: 90, output_tokens: 8}
      - text: Grace writes it.
        usage: {input_tokens: 30, output_tokens: 4}
""",
        ),
    )
    assert first.session.compaction is not None
    session_file = tmp_path / "saved-session.json"
    save_session(first.session, session_file)

    # Resumed with a window the full history would exceed: the record is used, nothing is summarized again.
    resumed_text = scenario(
        tmp_path,
        "{context_window: 80}",
        RESUMED_TURN,
        extra=f"initial_history: {session_file.name}",
        name="resumed",
    )
    resumed = execute(load_yaml(tmp_path, resumed_text, name="resumed.yaml"))

    (turn,) = resumed.turns
    assert turn.error is None, turn.error
    assert turn.compaction is not None
    assert (turn.compaction.status, turn.compaction.reason) == ("skipped", "below_threshold")
    assert failed_checks(turn) == []
    assert resumed.session.compaction == first.session.compaction  # kept in the new session file
    assert len(resumed.session.messages) == 8


def test_the_record_is_not_stored_when_nothing_was_compacted(tmp_path: Path) -> None:
    result = asyncio.run(
        execute_scenario(
            load_yaml(tmp_path, scenario(tmp_path, "{context_window: 100000}", PREAMBLE)), cache=AgentCache()
        )
    )
    assert [t.compaction.status if t.compaction else None for t in result.turns] == ["skipped", "skipped"]
    assert result.session.compaction is None


# --- the user documentation's example


def test_the_example_in_docs_compaction_md_runs_and_passes(tmp_path: Path) -> None:
    docs = Path(__file__).resolve().parents[2] / "docs" / "compaction.md"
    blocks = re.findall(r"```yaml\n(.*?)```", docs.read_text(encoding="utf-8"), flags=re.DOTALL)
    examples = [block for block in blocks if block.startswith("name:")]
    assert len(examples) == 1
    path = tmp_path / "compaction-example.yaml"
    path.write_text(examples[0], encoding="utf-8")
    out = tmp_path / "out"
    result = cli.invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    session = load_session(out / "scenarios" / "compaction-example" / "session.json")
    assert session.compaction is not None
    assert (session.compaction.compacted_message_count, len(session.messages)) == (4, 6)
