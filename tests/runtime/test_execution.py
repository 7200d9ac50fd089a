"""execute_scenario: a scenario's turns through one orchestrator and one session (real pydantic-ai runs)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from agentrig.runtime.history.canonical import TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.models.conversion import to_canonical
from tests.runtime.engine_helpers import assert_invariants, execute, kinds, load_yaml

TOOL_ROUNDTRIP = """
name: tool-roundtrip
system_prompt: You are terse.
tools:
  bash:
    description: Run a shell command.
    parameters: {type: object, properties: {command: {type: string}}, required: [command]}
    results:
      - when: {command: ls}
        return: "a.txt\\nb.txt"
turns:
  - user: List the files.
    model:
      - tool_calls: [{id: tc_1, name: bash, args: {command: ls}}]
        usage: {input_tokens: 120, output_tokens: 14}
      - text: Two files.
        usage: {input_tokens: 160, output_tokens: 5}
  - user: Thanks.
    model:
      - text: You are welcome.
        usage: {input_tokens: 200, output_tokens: 4}
        expect_input: {message_count: 5, contains_text: ["Two files.", "a.txt"], tools: [bash]}
"""


def test_text_and_tool_calls_run_through_every_turn(tmp_path: Path) -> None:
    execution = execute(load_yaml(tmp_path, TOOL_ROUNDTRIP))

    assert execution.scripted
    first, second = execution.turns
    assert (first.index, second.index) == (0, 1)
    assert first.output == "Two files."
    assert second.output == "You are welcome."
    assert [c.tool_call_id for c in first.tool_calls] == ["tc_1"]
    assert [(s.tool_call_id, s.status) for s in first.tool_statuses] == [("tc_1", "completed")]
    assert (first.usage.requests, first.usage.input_tokens, first.usage.output_tokens) == (2, 280, 19)
    assert not first.usage.estimated
    assert [c.passed for c in second.model_input_checks] == [True, True, True, True]
    assert kinds(execution.session.messages) == [
        ("request", ["text"]),
        ("response", ["tool-call"]),
        ("request", ["tool-return"]),
        ("response", ["text"]),
        ("request", ["text"]),
        ("response", ["text"]),
    ]
    assert execution.session.session_total_usage.input_tokens == 480
    assert execution.session.total_tokens > 0
    assert_invariants(execution)


def test_turn_records_hold_the_new_messages_of_their_turn(tmp_path: Path) -> None:
    execution = execute(load_yaml(tmp_path, TOOL_ROUNDTRIP))

    first, second = execution.turns
    assert first.new_messages + second.new_messages == execution.session.messages
    assert first.new_messages[2].parts == (
        ToolReturnPart(tool_call_id="tc_1", tool_name="bash", content="a.txt\nb.txt"),
    )
    assert len({first.request_id, second.request_id}) == 2
    assert all(len(t.request_id) == 8 for t in execution.turns)


def test_pydantic_ai_dump_loads_back_to_the_session_history(tmp_path: Path) -> None:
    execution = execute(load_yaml(tmp_path, TOOL_ROUNDTRIP))

    loaded = ModelMessagesTypeAdapter.validate_json(execution.pydantic_ai_dump)
    # The session does not keep pydantic-ai's run ids; everything else is the same history.
    assert without_per_run_values(to_canonical(loaded)) == without_per_run_values(execution.session.messages)


def test_initial_history_with_system_prompt_and_dangling_call_is_prepared(tmp_path: Path) -> None:
    (tmp_path / "history.json").write_text(
        """{"format": "agentrig.history/1", "messages": [
          {"kind": "request", "parts": [{"part_kind": "system-prompt", "content": "OLD SYSTEM PROMPT"},
                                        {"part_kind": "text", "content": "earlier question"}]},
          {"kind": "response", "parts": [{"part_kind": "text", "content": "let me look"},
                                         {"part_kind": "tool-call", "tool_call_id": "old_1", "tool_name": "bash",
                                          "args": {"command": "ls"}}]},
          {"kind": "request", "parts": [{"part_kind": "text", "content": "never mind"}]},
          {"kind": "response", "parts": [{"part_kind": "text", "content": "ok"}]}
        ]}""",
        encoding="utf-8",
    )
    loaded = load_yaml(
        tmp_path,
        """
        name: resume
        system_prompt: NEW SYSTEM PROMPT
        initial_history: history.json
        turns:
          - user: go on
            model:
              - text: continuing
                expect_input:
                  no_system_prompt_from_history: true
                  no_dangling_tool_calls: true
                  not_contains_text: [OLD SYSTEM PROMPT]
                  contains_text: [earlier question]
        """,
    )
    execution = execute(loaded)

    (turn,) = execution.turns
    assert turn.error is None
    assert len(turn.model_input_checks) == 4
    assert all(c.passed for c in turn.model_input_checks), turn.model_input_checks
    history = execution.session.messages
    assert not any(p.part_kind == "system-prompt" for m in history for p in m.parts)
    assert not any(isinstance(p, ToolCallPart) for m in history for p in m.parts)
    assert history[1].parts == (TextPart(content="let me look"),)
    assert_invariants(execution)


def test_deferred_calls_abandoned_by_a_new_prompt_leave_a_consistent_session(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: abandoned
        tools:
          ok: {results: [{return: fine}]}
          job: {results: [{defer: true}]}
        turns:
          - user: start
            model: [{tool_calls: [{id: c1, name: ok}, {id: j1, name: job}]}]
          - user: forget the job
            model:
              - text: forgotten
                expect_input: {no_dangling_tool_calls: true, contains_text: ["fine", "forget the job"]}
        """,
    )
    execution = execute(loaded)

    first, second = execution.turns
    assert [s.status for s in first.tool_statuses] == ["completed", "running"]
    assert second.output == "forgotten"
    assert all(check.passed for check in second.model_input_checks), second.model_input_checks
    assert {r.tool_call_id for r in execution.registry_records} == {"c1"}
    assert_invariants(execution)


QUOTED_RETRY = """
name: quoted-retry
tools:
  fetch:
    parameters: {type: object, properties: {url: {type: string}}}
    results:
      - call: 1
        retry: 'Use "https" URLs only.'
      - return: fetched
turns:
  - user: Fetch it.
    model:
      - tool_calls: [{id: tc_1, name: fetch, args: {url: "http://x"}}]
      - tool_calls: [{id: tc_2, name: fetch, args: {url: "https://x"}}]
        expect_input: {contains_text: ['Use "https" URLs only.']}
      - text: Done.
        expect_input: {contains_text: ['Use "https" URLs only.', fetched]}
"""


def test_contains_text_matches_a_quoted_retry_message_as_the_model_reads_it(tmp_path: Path) -> None:
    # 2.60+ sends a retried call as {"error": "..."} JSON; the check must look at the message, not its escaping.
    execution = execute(load_yaml(tmp_path, QUOTED_RETRY))

    checks = execution.turns[0].model_input_checks
    assert [(c.name, c.passed) for c in checks] == [
        ("turn 1, step 2: input.contains_text", True),
        ("turn 1, step 3: input.contains_text", True),
        ("turn 1, step 3: input.contains_text", True),
    ]


def test_pydantic_ai_dump_is_what_pydantic_ai_wrote_for_the_run(tmp_path: Path) -> None:
    # A dump rebuilt from the canonical history has no model name and zero usage on every response.
    execution = execute(load_yaml(tmp_path, TOOL_ROUNDTRIP))

    dump = json.loads(execution.pydantic_ai_dump)
    responses = [m for m in dump if m["kind"] == "response"]
    assert [r["usage"]["input_tokens"] for r in responses] == [120, 160, 200]
    assert all(r["model_name"] for r in responses)
    assert [r["parts"][0]["part_kind"] for r in responses] == ["tool-call", "text", "text"]


def test_resuming_a_history_that_ended_in_a_tool_exception_keeps_that_turns_prompt(tmp_path: Path) -> None:
    # What pydantic-ai captured when a tool raised: the prompt and the call, nothing answering it.
    stored = [
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Save the notes."}]},
        {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "save", "tool_call_id": "t1"}]},
    ]
    (tmp_path / "stored.json").write_text(json.dumps(stored), encoding="utf-8")
    loaded = load_yaml(
        tmp_path,
        """
        name: resume-after-exception
        initial_history: stored.json
        tools:
          save: {results: [{return: saved}]}
        turns:
          - user: Did it work?
            model:
              - text: No.
                expect_input: {no_dangling_tool_calls: true, contains_text: ["Save the notes.", "Did it work?"]}
        """,
    )
    execution = execute(loaded)

    turn = execution.turns[0]
    assert turn.error is None, turn.error
    assert all(check.passed for check in turn.model_input_checks), turn.model_input_checks
    assert kinds(execution.session.messages) == [
        ("request", ["text"]),
        ("response", ["tool-call"]),
        ("request", ["tool-return", "text"]),
        ("response", ["text"]),
    ]
    closed = execution.session.messages[2].parts[0]
    assert isinstance(closed, ToolReturnPart)
    assert (closed.tool_call_id, closed.outcome) == ("t1", "interrupted")
    assert_invariants(execution)


async def _captured_when_a_tool_raised() -> bytes:
    """What `capture_run_messages()` holds after a tool raised, on the installed pydantic-ai: an earlier
    exchange, the prompt, the call, and an empty request marked `interrupted` (2.38 and 2.68 alike)."""
    from pydantic_ai import Agent, capture_run_messages
    from pydantic_ai.messages import ModelMessage, ModelResponse, UserPromptPart
    from pydantic_ai.messages import TextPart as NativeText
    from pydantic_ai.messages import ToolCallPart as NativeCall
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts[-1]
        if isinstance(last, UserPromptPart) and last.content == "Save the notes.":
            return ModelResponse(parts=[NativeCall("save", {}, tool_call_id="t1")])
        return ModelResponse(parts=[NativeText("Hello.")])

    agent = Agent(FunctionModel(answer))

    @agent.tool_plain
    def save() -> str:  # pyright: ignore[reportUnusedFunction]
        raise OSError("disk full")

    first = await agent.run("Hi.")
    with capture_run_messages() as captured, pytest.raises(OSError, match="disk full"):
        await agent.run("Save the notes.", message_history=first.all_messages())
    assert captured[-1].kind == "request"
    assert not captured[-1].parts
    return ModelMessagesTypeAdapter.dump_json(captured)


def test_resuming_what_capture_run_messages_holds_after_a_tool_raised_keeps_every_exchange(tmp_path: Path) -> None:
    (tmp_path / "stored.json").write_bytes(asyncio.run(_captured_when_a_tool_raised()))
    loaded = load_yaml(
        tmp_path,
        """
        name: resume-captured-exception
        initial_history: stored.json
        tools:
          save: {results: [{return: saved}]}
        turns:
          - user: Did it work?
            model:
              - text: No.
                expect_input: {no_dangling_tool_calls: true, contains_text: ["Hi.", "Hello.", "Save the notes."]}
        """,
    )
    execution = execute(loaded)

    turn = execution.turns[0]
    assert turn.error is None, turn.error
    assert all(check.passed for check in turn.model_input_checks), turn.model_input_checks
    assert kinds(execution.session.messages) == [
        ("request", ["text"]),
        ("response", ["text"]),
        ("request", ["text"]),
        ("response", ["tool-call"]),
        ("request", ["tool-return", "text"]),
        ("response", ["text"]),
    ]
    closed = execution.session.messages[4].parts[0]
    assert isinstance(closed, ToolReturnPart)
    assert (closed.tool_call_id, closed.outcome) == ("t1", "interrupted")
    assert_invariants(execution)
