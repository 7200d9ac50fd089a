"""The version shim: its flags agree with the installed pydantic-ai, and its helpers work on real runs."""

from __future__ import annotations

import asyncio
from importlib.metadata import version
from typing import Any

import pytest
from pydantic_ai import Agent, CancellationToken, RunCancelled
from pydantic_ai.capabilities import Hooks
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models import pydantic_ai_compat as compat
from tests.runtime.history_scenarios import parts_of, run_tools_and_retries, tools_and_retries_agent


def test_version_is_read_from_the_installed_metadata() -> None:
    assert version("pydantic_ai_slim") == compat.PYDANTIC_AI_VERSION_TEXT
    assert ".".join(map(str, compat.PYDANTIC_AI_VERSION)) == compat.PYDANTIC_AI_VERSION_TEXT
    assert (2, 38, 0) <= compat.PYDANTIC_AI_VERSION < (3, 0, 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2.68.0", (2, 68, 0)), ("2.60.0rc1", (2, 60, 0)), ("3", (3, 0, 0)), ("2.61.dev4", (2, 61, 0))],
)
def test_version_parsing_tolerates_pre_releases(text: str, expected: tuple[int, int, int]) -> None:
    assert compat.parse_version(text) == expected


def test_feature_flags_match_the_release_that_introduced_them() -> None:
    installed = compat.PYDANTIC_AI_VERSION
    assert (installed >= (2, 60, 0)) == compat.HAS_RETRY_FEEDBACK
    assert ("retried" if installed >= (2, 60, 0) else "retry-prompt") == compat.RETRY_SHAPE
    if installed < (2, 46, 0):  # public between 2.46 and 2.53 (the wheels in between were not all inspected)
        assert not compat.HAS_PUBLIC_REPAIR_MESSAGES
    if installed >= (2, 53, 0):
        assert compat.HAS_PUBLIC_REPAIR_MESSAGES
    if installed < (2, 57, 0):
        assert not compat.HAS_RUN_TIMEOUT
    if installed >= (2, 58, 0):
        assert compat.HAS_RUN_TIMEOUT


def test_supports_run_kwarg_reads_the_signature() -> None:
    assert compat.supports_run_kwarg("message_history")
    assert compat.supports_run_kwarg("cancellation_token")
    assert compat.supports_run_kwarg("timeout") == compat.HAS_RUN_TIMEOUT
    assert not compat.supports_run_kwarg("no_such_keyword")


def test_run_usage_reads_the_property_without_calling_it() -> None:
    agent = tools_and_retries_agent()
    result = asyncio.run(agent.run("add 1 and 2"))
    usage = compat.run_usage(result)  # calling `result.usage()` would warn (2.61+) or raise (2.38)
    assert usage.requests == 4
    assert usage.input_tokens == 100 + 101 + 102 + 103
    assert usage.output_tokens == 10 + 11 + 12 + 13


def test_repair_messages_closes_a_trailing_dangling_call() -> None:
    history = [
        ModelRequest(parts=[UserPromptPart("go")]),
        ModelResponse(parts=[ToolCallPart("slow", {}, tool_call_id="s1")]),
    ]
    repaired = compat.repair_messages(history)
    returns = [part for message in repaired for part in message.parts if isinstance(part, ToolReturnPart)]
    assert [(part.tool_call_id, part.outcome) for part in returns] == [("s1", "interrupted")]
    assert len(history) == 2  # the input list is not mutated


def test_retry_classifiers_on_a_real_run() -> None:
    _, history = run_tools_and_retries()
    parts = parts_of(history)
    tool_retries = [part.tool_call_id for part in parts if compat.is_tool_retry(part)]
    output_retries = [part for part in parts if compat.is_output_retry(part)]
    assert tool_retries == ["call_flaky", "call_bad"]
    assert len(output_retries) == 1
    assert not any(compat.is_tool_retry(part) and compat.is_output_retry(part) for part in parts)


def test_retry_part_builders_make_the_installed_shape() -> None:
    tool_retry = compat.tool_retry_part(tool_name="t", tool_call_id="c1", content="again")
    output_retry = compat.output_retry_part("not good")
    assert compat.is_tool_retry(tool_retry)
    assert not compat.is_output_retry(tool_retry)
    assert compat.is_output_retry(output_retry)
    expected_kinds = (
        ("tool-return", "retry-feedback") if compat.HAS_RETRY_FEEDBACK else ("retry-prompt", "retry-prompt")
    )
    assert (tool_retry.part_kind, output_retry.part_kind) == expected_kinds
    # Both survive the installed version's own JSON round trip unchanged in kind.
    dumped = ModelMessagesTypeAdapter.dump_json([ModelRequest(parts=[tool_retry, output_retry])])
    loaded = ModelMessagesTypeAdapter.validate_json(dumped)
    assert tuple(part.part_kind for part in loaded[0].parts) == expected_kinds


def test_a_held_response_is_counted_once_whatever_the_installed_version_counted() -> None:
    """A real run cancelled while a `wrap_model_request` hook holds the model's answer (a plain cut's hook): the
    run's usage plus `uncounted_held_response` is that answer's usage and one request. pydantic-ai 2.38 counted none
    of it, 2.68 its tokens only; a pin in between may do either."""
    token = CancellationToken()
    uncounted: list[Usage] = []

    async def hold(ctx: Any, *, request_context: Any, handler: Any) -> Any:
        before = Usage.from_object(ctx.usage)
        response = await handler(request_context)
        after = Usage.from_object(ctx.usage)
        uncounted.append(compat.uncounted_held_response(response, before=before, after=after))
        token.cancel()
        await asyncio.Event().wait()  # never returns: the cancellation wakes it
        return response

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(input_tokens=50, output_tokens=8, cache_read_tokens=5)
        return ModelResponse(parts=[TextPart("One two three")], usage=usage)

    async def go() -> RunCancelled:
        agent = Agent(FunctionModel(answer))
        with pytest.raises(RunCancelled) as caught:
            await agent.run("go", cancellation_token=token, capabilities=[Hooks(model_request=hold)])
        return caught.value

    cancelled = asyncio.run(go())
    total = Usage.from_object(compat.run_usage(cancelled)) + uncounted[0]
    assert (total.requests, total.input_tokens, total.output_tokens, total.cache_read_tokens) == (1, 50, 8, 5)
    assert uncounted[0].input_tokens in (0, 50)  # either the version counted the tokens, or none of them
