"""ScriptedModel: a FunctionModel answering from a script, through real agent runs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai import Agent, capture_run_messages
from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError
from pydantic_ai.messages import ModelResponse, TextPart, ThinkingPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

from agentrig.runtime.models.scripted import SCRIPT_MODEL_NAME, ScriptedModel, summary_request
from agentrig.runtime.models.stops import ScriptExhausted, ScriptMismatch
from agentrig.scenarios.model import ModelStep


def _steps(*steps: dict[str, Any]) -> list[ModelStep]:
    return [ModelStep.model_validate(step) for step in steps]


def _run(model: ScriptedModel, prompt: str = "hi", agent: Agent[None, str] | None = None) -> Any:
    return asyncio.run((agent or Agent(model)).run(prompt, model=model))


def test_response_parts_come_in_order_thought_text_calls_with_explicit_usage() -> None:
    model = ScriptedModel(
        [
            _steps(
                {
                    "thought": "plan",
                    "text": "calling",
                    "tool_calls": [
                        {"id": "c1", "name": "echo", "args": {"x": 1}},
                        {"id": "c2", "name": "echo", "args": '{"x": 2}'},
                    ],
                    "usage": {"input_tokens": 11, "output_tokens": 3, "cache_read_tokens": 4},
                },
                {"text": "done"},
            )
        ]
    )
    agent: Agent[None, str] = Agent(model)

    @agent.tool_plain
    def echo(x: int) -> int:  # pyright: ignore[reportUnusedFunction]
        return x

    result = _run(model, agent=agent)

    first = result.all_messages()[1]
    assert isinstance(first, ModelResponse)
    assert [p.part_kind for p in first.parts] == ["thinking", "text", "tool-call", "tool-call"]
    assert isinstance(first.parts[0], ThinkingPart)
    call = first.parts[3]
    assert isinstance(call, ToolCallPart)
    assert call.args == '{"x": 2}'
    assert first.model_name == SCRIPT_MODEL_NAME
    assert (first.usage.input_tokens, first.usage.output_tokens, first.usage.cache_read_tokens) == (11, 3, 4)
    last = result.all_messages()[-1]
    assert isinstance(last, ModelResponse)
    assert (last.usage.input_tokens, last.usage.output_tokens) == (0, 0)  # zeros, never FunctionModel's estimate
    assert isinstance(model, FunctionModel)
    assert model.reports_exact_usage


def test_turns_are_consumed_one_after_another() -> None:
    model = ScriptedModel([_steps({"text": "one"}), _steps({"text": "two"})])
    assert _run(model).output == "one"
    assert model.finish_turn() is None
    model.begin_turn(1)
    assert _run(model).output == "two"


def test_running_out_names_turn_step_and_what_was_asked() -> None:
    model = ScriptedModel([_steps({"text": "one"})])
    _run(model)
    with pytest.raises(ScriptExhausted, match=r'turn 1, step 2: .* the model was asked: user-prompt "second question"'):
        _run(model, "second question")


def test_leftover_steps_are_a_mismatch() -> None:
    model = ScriptedModel([_steps({"text": "one"}, {"text": "two"})])
    _run(model)
    mismatch = model.finish_turn()
    assert isinstance(mismatch, ScriptMismatch)
    assert "turn 1: 1 scripted step(s) left unused, from step 2" in mismatch.message


@pytest.mark.parametrize(
    ("kind", "status"),
    [("context_length", 400), ("rate_limit", 429), ("server_error", 500), ("auth", 401)],
)
def test_errors_are_what_provider_clients_raise(kind: str, status: int) -> None:
    model = ScriptedModel([_steps({"error": {"kind": kind, "message": "custom"}})])
    with pytest.raises(ModelHTTPError) as raised:
        _run(model)
    assert raised.value.status_code == status
    assert "custom" in str(raised.value.body)


def test_connection_error_is_a_bare_model_api_error() -> None:
    model = ScriptedModel([_steps({"error": {"kind": "connection"}})])
    with pytest.raises(ModelAPIError) as raised:
        _run(model)
    assert not isinstance(raised.value, ModelHTTPError)


def test_empty_step_answers_with_no_parts() -> None:
    model = ScriptedModel([_steps({"empty": True}, {"text": "now"})])
    with capture_run_messages() as messages:
        assert _run(model).output == "now"
    assert any(isinstance(m, ModelResponse) and not m.parts for m in messages)


def test_summary_steps_answer_only_summarize_requests() -> None:
    model = ScriptedModel([_steps({"summary": "short"}, {"summary": "again"})])
    with summary_request():
        assert _run(model, "summarize this").output == "short"
    with pytest.raises(ScriptMismatch, match="asked for a normal response but the step is summary"):
        _run(model)


def test_normal_step_during_a_summarize_request_is_a_mismatch() -> None:
    model = ScriptedModel([_steps({"text": "not a summary"})])
    with summary_request(), pytest.raises(ScriptMismatch, match="asked for a compaction summary"):
        _run(model)


def test_abort_outside_an_orchestrated_run_is_an_error() -> None:
    model = ScriptedModel([_steps({"abort": True})])
    with pytest.raises(RuntimeError, match="abort step needs a run started by the RequestOrchestrator"):
        _run(model)


def test_expect_input_records_checks() -> None:
    model = ScriptedModel(
        [
            _steps(
                {
                    "text": "x",
                    "expect_input": {
                        "message_count": 2,
                        "contains_text": ["hello"],
                        "not_contains_text": ["secret"],
                        "tools": [],
                        "no_system_prompt_from_history": True,
                    },
                }
            )
        ]
    )
    _run(model, "hello")
    checks = {c.name.split(": ")[-1]: c for c in model.take_checks()}
    assert not checks["input.message_count"].passed
    assert (checks["input.message_count"].expected, checks["input.message_count"].actual) == (2, 1)
    assert checks["input.contains_text"].passed
    assert checks["input.not_contains_text"].passed
    assert checks["input.tools"].passed
    assert checks["input.no_system_prompt_from_history"].passed
    assert all(c.name.startswith("turn 1, step 1: ") for c in model.take_checks())


def test_input_checks_fail_on_unprepared_history() -> None:
    """Without the orchestrator's preparation the checks see the stale system prompt and the dangling call
    that pydantic-ai closed itself."""
    from pydantic_ai.messages import ModelRequest, SystemPromptPart, UserPromptPart

    history = [
        ModelRequest(parts=[SystemPromptPart("stale"), UserPromptPart("q")]),
        ModelResponse(parts=[ToolCallPart("ls", {}, tool_call_id="d1")]),
        ModelRequest(parts=[UserPromptPart("next")]),
        ModelResponse(parts=[TextPart("a")]),
    ]
    model = ScriptedModel(
        [_steps({"text": "x", "expect_input": {"no_system_prompt_from_history": True, "no_dangling_tool_calls": True}})]
    )
    asyncio.run(Agent(model).run("go", message_history=history))
    checks = {c.name.split(": ")[-1]: c for c in model.take_checks()}
    assert not checks["input.no_system_prompt_from_history"].passed
    assert checks["input.no_system_prompt_from_history"].actual == ["stale"]
    assert not checks["input.no_dangling_tool_calls"].passed
    assert checks["input.no_dangling_tool_calls"].actual == ["d1"]
    assert "pydantic-ai closed ['d1'] itself" in checks["input.no_dangling_tool_calls"].detail
