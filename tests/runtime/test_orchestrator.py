"""RequestOrchestrator: the loop contract, through real pydantic-ai runs against scripted models (offline)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from agentrig.runtime.engine.orchestrator import INTERRUPTED_MARKER, RequestOrchestrator
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache, AgentHandle
from agentrig.runtime.engine.pydantic_ai_engine.plain import PydanticAIEngine
from agentrig.runtime.history import canonical as c
from agentrig.runtime.history.invariants import check_invariants
from agentrig.runtime.history.run_records import CompactionOutcome
from agentrig.runtime.history.sessions import new_session
from agentrig.runtime.models.run_control import request_abort
from agentrig.scenarios.model import Settings
from tests.runtime.engine_helpers import assert_invariants, execute, kinds, load_yaml

# --- helpers -------------------------------------------------------------------------------------------


def _handle(agent: Agent[Any, Any], cache: AgentCache | None = None) -> AgentHandle:
    return AgentHandle(
        key="test", build=lambda: agent, label="test", cache=cache if cache is not None else AgentCache()
    )


def _responses(*responses: ModelResponse) -> tuple[FunctionModel, list[list[ModelMessage]]]:
    """A model answering with `responses` in order, recording what it was sent."""
    seen: list[list[ModelMessage]] = []
    queue = list(responses)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return queue.pop(0)

    return FunctionModel(answer, model_name="test"), seen


def _response(*parts: Any) -> ModelResponse:
    return ModelResponse(parts=list(parts), usage=RequestUsage(input_tokens=10, output_tokens=1))


def _part_kinds(messages: list[ModelMessage]) -> list[list[str]]:
    return [[p.part_kind for p in m.parts] for m in messages]


# --- the loop contract ---------------------------------------------------------------------------------


def test_request_loop_prunes_and_sanitizes_history_before_a_run() -> None:
    stored = [
        c.Message.request(
            c.SystemPromptPart(content="stale system prompt"), c.TextPart(content="q1"), run_id="old-run"
        ),
        c.Message.response(c.ToolCallPart(tool_call_id="t1", tool_name="read", args={})),
        c.Message.request(c.ToolReturnPart(tool_call_id="t1", tool_name="read", content="x" * 500)),
        c.Message.response(
            c.TextPart(content="read it"), c.ToolCallPart(tool_call_id="dangling", tool_name="read", args={})
        ),
        c.Message.request(c.TextPart(content="q2")),
        c.Message.response(),  # empty response
        c.Message.request(c.TextPart(content="unanswered trailing prompt")),
    ]
    model, seen = _responses(_response(TextPart("answer")))
    orchestrator = RequestOrchestrator(
        PydanticAIEngine(_handle(Agent(None)), model=model),
        new_session(messages=stored),
        settings=Settings(prune_keep_recent_tool_outputs=0),
    )

    record = asyncio.run(orchestrator.run("q3"))

    assert record.error is None
    sent = seen[0]
    assert _part_kinds(sent) == [
        ["user-prompt"],
        ["tool-call"],
        ["tool-return"],
        ["text"],  # the dangling call is gone, the text stays
        ["user-prompt"],  # the empty response went, q2 merged with the trailing request, which was dropped
    ]
    assert sent[2].parts[0].content == "[pruned: 500 chars]"  # pyright: ignore[reportAttributeAccessIssue]
    assert all(m.run_id != "old-run" for m in sent)
    assert [p.content for p in sent[-1].parts] == ["q3"]  # pyright: ignore[reportAttributeAccessIssue]
    stored_after = orchestrator.session.messages
    assert not any(isinstance(p, c.SystemPromptPart) for m in stored_after for p in m.parts)
    assert check_invariants(stored_after) == []


def test_runtime_state_is_reset_for_every_request_but_keeps_the_original_query() -> None:
    model, _ = _responses(_response(TextPart("a")), _response(TextPart("b")))
    orchestrator = RequestOrchestrator(PydanticAIEngine(_handle(Agent(None)), model=model), new_session())

    first = asyncio.run(orchestrator.run("first"))
    second = asyncio.run(orchestrator.run("second"))

    assert first.request_id != second.request_id
    assert orchestrator.runtime.request_id == second.request_id
    assert orchestrator.runtime.original_query == "first"
    assert orchestrator.runtime.iteration_count == 1
    assert (first.index, second.index) == (0, 1)


def test_registry_agrees_with_tool_return_parts_after_a_run(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: registry
        settings: {tool_retries: 2}
        tools:
          read:
            results:
              - {when: {path: a}, return: "A"}
              - {when: {path: b}, call: 2, retry: "b is locked, try again"}
              - {when: {path: b}, return: "B"}
        turns:
          - user: read a and b
            model:
              - tool_calls: [{id: r1, name: read, args: {path: a}}, {id: r2, name: read, args: {path: b}}]
              - tool_calls: [{id: r3, name: read, args: {path: b}}]
              - text: done
        """,
    )
    execution = execute(loaded)

    (turn,) = execution.turns
    assert {s.tool_call_id: s.status for s in turn.tool_statuses} == {
        "r1": "completed",
        "r2": "failed",
        "r3": "completed",
    }
    returns = {p.tool_call_id: p.outcome for m in turn.new_messages for p in m.parts if isinstance(p, c.ToolReturnPart)}
    assert returns == {"r1": "success", "r3": "success"}
    retry_parts = [p for m in turn.new_messages for p in m.parts if isinstance(p, c.RetryPromptPart)]
    assert [(p.tool_call_id, p.content) for p in retry_parts] == [("r2", "b is locked, try again")]
    assert_invariants(execution)


def test_abort_appends_interrupted_response_and_cleans_dangling_calls() -> None:
    agent: Agent[None, str] = Agent(None)

    @agent.tool_plain
    async def fast() -> str:
        return "fast done"

    @agent.tool_plain
    async def slow() -> str:
        request_abort("I was saying", where="test")
        await asyncio.sleep(30)
        return "never"

    model, _ = _responses(
        _response(ToolCallPart("fast", {}, tool_call_id="f1"), ToolCallPart("slow", {}, tool_call_id="s1")),
        _response(TextPart("after abort")),
    )
    cache = AgentCache()
    handle = _handle(agent, cache)
    orchestrator = RequestOrchestrator(PydanticAIEngine(handle, model=model), new_session())
    _ = handle.agent
    assert "test" in cache

    record = asyncio.run(orchestrator.run("go"))

    assert record.interrupted
    assert record.error is None  # an abort is not an error; a timeout is
    history = orchestrator.session.messages
    assert history[-1] == c.Message.response(c.TextPart(content=f"{INTERRUPTED_MARKER} I was saying"))
    closing = {p.tool_call_id: p.outcome for m in history for p in m.parts if isinstance(p, c.ToolReturnPart)}
    assert closing == {"f1": "success", "s1": "interrupted"}
    assert {s.tool_call_id: s.status for s in record.tool_statuses} == {"f1": "completed", "s1": "cancelled"}
    assert check_invariants(history, registry=orchestrator.runtime.registry) == []
    assert "test" not in cache  # the cached agent was invalidated

    follow_up = asyncio.run(orchestrator.run("continue"))
    assert follow_up.output == "after abort"
    assert check_invariants(orchestrator.session.messages) == []


def test_scripted_abort_keeps_partial_text(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: abort
        turns:
          - user: write a poem
            model:
              - {text: "Roses are", abort: true}
          - user: again
            model:
              - text: fine
                expect_input: {contains_text: ["[INTERRUPTED] Roses are"], no_dangling_tool_calls: true}
        """,
    )
    execution = execute(loaded)

    first, second = execution.turns
    assert first.interrupted
    assert first.error is None
    assert first.output is None
    assert second.output == "fine"
    assert all(check.passed for check in second.model_input_checks)
    assert kinds(execution.session.messages) == [("request", ["text"]), ("response", ["text"])] * 2
    assert_invariants(execution)


def test_timeout_interrupts_a_slow_tool_and_reports_timeout(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: timeout
        # Generous: the scripted model's first step must finish before the timeout on a loaded machine too
        # (at 0.2 s it sometimes did not, and the call was never made); only the 60 s tool may exceed it.
        settings: {timeout: 2}
        tools:
          slow: {results: [{return: never, delay: 60}]}
        turns:
          - user: go
            model: [{tool_calls: [{id: s1, name: slow}]}]
          - user: again
            model: [{text: recovered}]
        """,
    )
    execution = execute(loaded)

    first, second = execution.turns
    assert first.interrupted
    assert first.error is not None
    assert first.error.kind == "timeout"
    assert [(s.tool_call_id, s.status) for s in first.tool_statuses] == [("s1", "cancelled")]
    assert second.output == "recovered"
    assert execution.session.messages[3] == c.Message.response(c.TextPart(content=INTERRUPTED_MARKER))
    assert_invariants(execution)


def test_external_cancellation_saves_the_history_then_propagates() -> None:
    agent: Agent[None, str] = Agent(None)
    started = asyncio.Event()

    @agent.tool_plain
    async def slow() -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    model, _ = _responses(_response(TextPart("checking"), ToolCallPart("slow", {}, tool_call_id="s1")))
    cache = AgentCache()
    handle = _handle(agent, cache)
    orchestrator = RequestOrchestrator(PydanticAIEngine(handle, model=model), new_session())

    async def main() -> None:
        task = asyncio.create_task(orchestrator.run("go"))
        await started.wait()
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    history = orchestrator.session.messages
    assert history[-1] == c.Message.response(c.TextPart(content=INTERRUPTED_MARKER))
    assert check_invariants(history) == []
    assert [p.outcome for m in history for p in m.parts if isinstance(p, c.ToolReturnPart)] == ["interrupted"]
    assert handle.key not in cache


# --- responses the loop must handle ---------------------------------------------------------------------


def test_parallel_calls_thinking_and_output_retry(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: mixed
        tools:
          a: {results: [{return: 1}]}
          b: {results: [{return: {"nested": true}}]}
        turns:
          - user: go
            model:
              - thought: "I will call both"
                tool_calls: [{id: a1, name: a}, {id: b1, name: b}]
                usage: {input_tokens: 5, output_tokens: 5, cache_read_tokens: 2}
              - {tool_calls: [{id: x1, name: nonexistent}]}
              - {text: done, usage: {input_tokens: 7, output_tokens: 1}}
        """,
    )
    execution = execute(loaded)

    (turn,) = execution.turns
    assert turn.output == "done"
    assert execution.session.thoughts == ("I will call both",)
    assert (turn.usage.requests, turn.usage.cache_read_tokens, turn.usage.input_tokens) == (3, 2, 12)
    statuses = {s.tool_call_id: s.status for s in turn.tool_statuses}
    assert statuses == {"a1": "completed", "b1": "completed", "x1": "failed"}
    assert_invariants(execution)


def test_first_empty_response_is_retried_and_a_second_stops_the_turn(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: empty
        settings: {output_retries: 5}
        turns:
          - user: one
            model: [{empty: true}, {text: recovered}]
          - user: two
            model: [{empty: true}, {empty: true}]
        """,
    )
    execution = execute(loaded)

    first, second = execution.turns
    assert first.output == "recovered"
    assert first.error is None
    assert second.error is not None
    assert second.error.kind == "unexpected_model_behavior"
    assert "2 empty responses" in second.error.message
    assert not any(m.kind == "response" and not m.parts for m in execution.session.messages)
    assert_invariants(execution)


def test_max_iterations_stops_a_looping_model(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: loop
        settings: {max_iterations: 2}
        tools:
          ok: {results: [{return: fine}]}
        turns:
          - user: loop
            model:
              - {tool_calls: [{id: l1, name: ok}]}
              - {tool_calls: [{id: l2, name: ok}]}
          - user: next
            model: [{text: "still here"}]
        """,
    )
    execution = execute(loaded)

    first, second = execution.turns
    assert first.error is not None
    assert first.error.kind == "max_iterations"
    assert first.usage.requests == 2
    assert second.output == "still here"
    # The stopped turn's tool results are kept: the next prompt joins the request that holds them.
    assert [s.status for s in first.tool_statuses] == ["completed", "completed"]
    assert_invariants(execution)


def test_usage_limit_is_classified(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: limits
        settings: {request_limit: 1}
        tools:
          ok: {results: [{return: fine}]}
        turns:
          - user: go
            model: [{tool_calls: [{id: u1, name: ok}]}, {text: never}]
        """,
    )
    (turn,) = execute(loaded).turns
    assert turn.error is not None
    assert turn.error.kind == "usage_limit"
    assert "request_limit" in turn.error.message


@pytest.mark.parametrize(
    ("kind", "status_text"),
    [
        ("context_length", "HTTP 400"),
        ("rate_limit", "HTTP 429"),
        ("server_error", "HTTP 500"),
        ("auth", "HTTP 401"),
        ("connection", "Connection error"),
    ],
)
def test_provider_errors_are_classified_and_history_stays_loadable(tmp_path: Path, kind: str, status_text: str) -> None:
    loaded = load_yaml(
        tmp_path,
        f"""
        name: provider-{kind.replace("_", "-")}
        turns:
          - user: hello
            model: [{{text: hi}}]
          - user: again
            model: [{{error: {{kind: {kind}}}}}]
          - user: third
            model: [{{text: fine}}]
        """,
    )
    execution = execute(loaded)

    _, failed, after = execution.turns
    assert failed.error is not None
    assert failed.error.kind == kind
    assert status_text in failed.error.message
    assert after.output == "fine"
    assert kinds(execution.session.messages) == [("request", ["text"]), ("response", ["text"])] * 2
    assert_invariants(execution)


def test_tool_fail_ends_the_turn_and_closes_its_call(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: tool-fail
        tools:
          rm: {results: [{fail: "permission denied"}]}
          ls: {results: [{return: "a"}]}
        turns:
          - user: delete
            model: [{tool_calls: [{id: d1, name: rm}, {id: d2, name: ls}]}]
          - user: and now?
            model: [{text: ok}]
        """,
    )
    execution = execute(loaded)

    failed, after = execution.turns
    assert failed.error is not None
    assert failed.error.kind == "tool_failed"
    assert "permission denied" in failed.error.message
    statuses = {s.tool_call_id: s.status for s in failed.tool_statuses}
    assert statuses["d1"] == "failed"
    outcomes = {
        p.tool_call_id: p.outcome
        for m in execution.session.messages
        for p in m.parts
        if isinstance(p, c.ToolReturnPart)
    }
    assert outcomes["d1"] == "failed"
    assert after.output == "ok"
    assert_invariants(execution)


def test_deferred_tool_resumes_in_the_next_turn(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: deferred
        tools:
          ok: {results: [{return: fine}]}
          job: {results: [{defer: true}]}
        turns:
          - user: start the job
            model: [{tool_calls: [{id: c1, name: ok}, {id: j1, name: job}]}]
          - deferred_results: {j1: "job finished"}
            model:
              - text: all done
                expect_input: {contains_text: ["job finished", "fine"], no_dangling_tool_calls: true}
        """,
    )
    execution = execute(loaded)

    first, second = execution.turns
    assert first.error is None
    # the turn's output is what pydantic-ai returned: the deferred calls
    assert first.output_type == "pydantic_ai.DeferredToolRequests"
    assert first.output_json == {"calls": [{"tool_call_id": "j1", "tool_name": "job", "args": {}}], "approvals": []}
    assert {s.tool_call_id: s.status for s in first.tool_statuses} == {"c1": "completed", "j1": "running"}
    assert second.output == "all done"
    assert all(check.passed for check in second.model_input_checks)
    returns = [
        (p.tool_call_id, p.content)
        for m in execution.session.messages
        for p in m.parts
        if isinstance(p, c.ToolReturnPart)
    ]
    assert returns == [("c1", "fine"), ("j1", "job finished")]
    assert {r.tool_call_id: r.status for r in execution.registry_records} == {"c1": "completed", "j1": "completed"}
    assert_invariants(execution)


def test_fallback_tool_calls_in_text_are_parsed(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: fallback
        tools:
          bash: {results: [{when: {command: ls}, return: "a.txt"}]}
        turns:
          - user: list
            model:
              - text: 'Sure. <tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>'
              - text: "one file"
          - user: again
            model:
              - text: "```json\\n{\\"name\\": \\"bash\\", \\"arguments\\": {\\"command\\": \\"ls\\"}}\\n```"
              - text: "same"
        """,
    )
    execution = execute(loaded)

    first, second = execution.turns
    assert [(t.tool_call_id, t.tool_name, t.args) for t in first.tool_calls] == [
        ("fallback_1", "bash", {"command": "ls"})
    ]
    assert [t.tool_call_id for t in second.tool_calls] == ["fallback_2"]
    assert first.new_messages[1].parts[0] == c.TextPart(content="Sure.")
    assert second.output == "same"
    assert_invariants(execution)


def test_script_exhausted_names_turn_and_step(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: short
        tools:
          ok: {results: [{return: fine}]}
        turns:
          - user: hi
            model: [{text: hello}]
          - user: use the tool
            model: [{tool_calls: [{id: k1, name: ok}]}]
        """,
    )
    _, second = execute(loaded).turns
    assert second.error is not None
    assert second.error.kind == "script_exhausted"
    assert "turn 2, step 2" in second.error.message
    assert 'tool-return ok "fine"' in second.error.message


def test_context_length_forces_one_compaction_and_retries(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: overflow
        settings:
          compaction: {context_window: 100000}
        turns:
          - user: first question
            model: [{text: first answer}]
          - user: second question
            model:
              - error: {kind: context_length}
              - summary: "the user asked a first question"
              - text: second answer
                expect_input: {contains_text: ["the user asked a first question"], not_contains_text: ["first answer"]}
        """,
    )
    execution = execute(loaded)

    _, second = execution.turns
    assert second.error is None
    assert second.output == "second answer"
    # Estimates (compaction.estimate_message_tokens): 3 per message + 4 per part + ceil(chars / 4).
    # Before: "first question" (14 chars) 11, "first answer" (12) 10, "second question" (15) 11 -> 32.
    # After: "[SUMMARY OF EARLIER CONVERSATION]\nthe user asked a first question" (65 chars) 24, plus 11 -> 35.
    assert second.compaction == CompactionOutcome(
        status="compacted", reason="context_overflow", compacted_messages=2, tokens_before=32, tokens_after=35
    )
    assert all(check.passed for check in second.model_input_checks)
    assert [m.text for m in execution.session.messages] == [
        "first question",
        "first answer",
        "second question",
        "second answer",
    ]
    assert execution.session.compaction is not None
    assert execution.session.compaction.summary == "the user asked a first question"


def test_second_context_overflow_keeps_the_error_and_the_history(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: overflow-twice
        settings:
          compaction: {context_window: 100000}
        turns:
          - user: first question
            model: [{text: first answer}]
          - user: second question
            model:
              - error: {kind: context_length}
              - summary: "summary"
              - error: {kind: context_length}
        """,
    )
    execution = execute(loaded)

    _, second = execution.turns
    assert second.error is not None
    assert second.error.kind == "context_length"
    assert [m.text for m in execution.session.messages][:2] == ["first question", "first answer"]
    assert_invariants(execution)


def test_usage_of_a_plain_function_model_is_flagged_estimated() -> None:
    model = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("hi")]))
    orchestrator = RequestOrchestrator(PydanticAIEngine(_handle(Agent(None)), model=model), new_session())
    record = asyncio.run(orchestrator.run("hello"))
    assert record.usage.estimated
    assert record.usage.requests == 1
    assert orchestrator.session.session_total_usage.estimated


def test_an_agent_without_a_model_is_a_usage_error() -> None:
    from agentrig.errors import UsageError

    orchestrator = RequestOrchestrator(PydanticAIEngine(_handle(Agent(None))), new_session())
    with pytest.raises(UsageError, match="has no model"):
        asyncio.run(orchestrator.run("hello"))


def test_unplanned_compaction_fails_softly_and_the_turn_keeps_its_script(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """
        name: unplanned
        settings:
          compaction: {context_window: 20}
        turns:
          - user: a fairly long first question that fills the tiny window
            model: [{text: a fairly long first answer that fills it even more}]
          - user: second
            model: [{text: second answer}]
        """,
    )
    execution = execute(loaded)

    _, second = execution.turns
    assert second.output == "second answer"
    assert second.error is None
    assert second.compaction is not None
    assert second.compaction.status == "failed"
    assert second.compaction.reason == "summary_failed"
    assert "asked for a compaction summary but the step is text" in second.compaction.detail
