"""Real provider clients against the loopback server: building models, retries, error translation."""

from __future__ import annotations

import asyncio
import email.utils
import time
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel

from agentrig.errors import ContextOverflowError, UsageError
from agentrig.runtime.models import providers
from agentrig.runtime.models.failures import classify
from agentrig.runtime.models.providers import (
    ProviderContextLengthError,
    ProviderRequestError,
    RetryingModel,
    RetryPolicy,
    build_model,
    run_many,
)
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import (
    ToolCallReply,
    context_length_exceeded,
    error,
    rate_limited,
    text,
    tool_calls,
)

pytestmark = pytest.mark.providers


def _agent(model: Any) -> Agent[None, str]:
    agent = Agent(model, instructions="Be terse.")

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return agent


def _run(model: RetryingModel, prompt: str = "hi", agent: Agent[None, str] | None = None) -> Any:
    """Run the agent once and close the model's connections in the same event loop."""

    async def go() -> Any:
        try:
            return await (agent or Agent(model)).run(prompt)
        finally:
            await model.aclose()

    return asyncio.run(go())


def _fail(model: RetryingModel) -> ProviderRequestError:
    with pytest.raises(ProviderRequestError) as caught:
        _run(model)
    return caught.value


def _rewrapped(model: RetryingModel, **options: Any) -> RetryingModel:
    """The same real model under another retry setup (policy, sleep, jitter)."""
    # The rebuilt wrapper must own the same SDK clients, which only the original's private slot holds.
    owned = model._unclaimed[1] if model._unclaimed else ()  # pyright: ignore[reportPrivateUsage]
    return RetryingModel(model.wrapped, owned_clients=owned, **options)


class _RecordedSleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


# --- building


def test_openai_with_base_url_speaks_chat_completions_without_sdk_retries(loopback: ServerFactory) -> None:
    server = loopback()
    model = build_model("openai:gpt-4o", base_url=server.openai_base_url, api_key="sk-test-0123456789")
    assert isinstance(model, RetryingModel)
    assert isinstance(model.wrapped, OpenAIChatModel)
    assert model.wrapped.client.max_retries == 0  # our policy is the only one
    assert model.system == "openai"
    assert model.model_name == "gpt-4o"


def test_anthropic_with_base_url(loopback: ServerFactory) -> None:
    server = loopback()
    model = build_model("anthropic:claude-loopback-test", base_url=server.anthropic_base_url)
    assert isinstance(model.wrapped, AnthropicModel)
    assert model.wrapped.client.max_retries == 0


def test_model_defaults_to_the_environment(monkeypatch: pytest.MonkeyPatch, loopback: ServerFactory) -> None:
    monkeypatch.setenv("AGENTRIG_MODEL", "openai:gpt-4o-mini")
    assert build_model(None, base_url=loopback().openai_base_url).model_name == "gpt-4o-mini"


@pytest.mark.parametrize(
    ("model", "base_url", "expected"),
    [
        (None, None, "no model: pass --model provider:name"),
        ("gpt-4o", None, "expected provider:name"),
        ("groq:llama-3", "http://127.0.0.1:9/v1", "--base-url works with openai:"),
        ("openai:gpt-4o", None, "openai: no API key: set OPENAI_API_KEY"),
        ("anthropic:claude-loopback-test", None, "anthropic: no API key: set ANTHROPIC_API_KEY"),
        ("nosuchprovider:model", None, "nosuchprovider"),
    ],
)
def test_bad_model_choices_are_usage_errors(model: str | None, base_url: str | None, expected: str) -> None:
    with pytest.raises(UsageError, match=expected) as caught:
        build_model(model, base_url=base_url)
    assert caught.value.exit_code == 2


def test_infer_model_without_base_url_uses_the_environment_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment-0123")
    model = build_model("openai:gpt-4o")
    assert model.wrapped.client.max_retries == 0  # pyright: ignore[reportAttributeAccessIssue]
    assert model.wrapped.client.api_key == "sk-from-environment-0123"  # pyright: ignore[reportAttributeAccessIssue]


# --- real round trips


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_tool_call_round_trip_through_the_real_client(api: str, loopback: ServerFactory) -> None:
    call_id = "call_1" if api == "openai" else "toolu_01"
    server = loopback([tool_calls(ToolCallReply(id=call_id, name="add", args={"a": 1, "b": 2})), text("sum is 3")])
    base_url = server.openai_base_url if api == "openai" else server.anthropic_base_url
    name = "openai:gpt-4o" if api == "openai" else "anthropic:claude-loopback-test"
    model = build_model(name, base_url=base_url, api_key="sk-test-key-0123456789")

    result = _run(model, "add 1 and 2", _agent(model))

    assert result.output == "sum is 3"
    assert (result.usage.requests, result.usage.input_tokens, result.usage.output_tokens) == (2, 32, 13)
    first, second = server.requests
    assert first.path == ("/v1/chat/completions" if api == "openai" else "/v1/messages")
    assert first.body["model"] == name.split(":", 1)[1]
    if api == "openai":
        assert first.headers["authorization"] == "Bearer sk-test-key-0123456789"
        assert [tool["function"]["name"] for tool in first.body["tools"]] == ["add"]
        assert second.body["messages"][-1] == {"role": "tool", "tool_call_id": call_id, "content": "3"}
    else:
        assert [tool["name"] for tool in first.body["tools"]] == ["add"]
        tool_result = second.body["messages"][-1]["content"][0]
        assert (tool_result["type"], tool_result["tool_use_id"]) == ("tool_result", call_id)


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_streaming(api: str, loopback: ServerFactory) -> None:
    server = loopback([text("streamed answer")])
    if api == "openai":
        model = build_model("openai:gpt-4o", base_url=server.openai_base_url)
    else:
        model = build_model("anthropic:claude-loopback-test", base_url=server.anthropic_base_url)

    async def stream() -> str:
        try:
            async with Agent(model).run_stream("hi") as result:
                return await result.get_output()
        finally:
            await model.aclose()

    assert asyncio.run(stream()) == "streamed answer"
    assert server.requests[0].body["stream"] is True


def test_streaming_retries_opening_the_stream(loopback: ServerFactory) -> None:
    server = loopback([rate_limited("0"), text("after the limit")])
    model = build_model("openai:gpt-4o", base_url=server.openai_base_url)

    async def stream() -> str:
        try:
            async with Agent(model).run_stream("hi") as result:
                return await result.get_output()
        finally:
            await model.aclose()

    assert asyncio.run(stream()) == "after the limit"
    assert len(server.requests) == 2


# --- retries


def test_rate_limit_is_retried_after_retry_after(loopback: ServerFactory) -> None:
    server = loopback([rate_limited("2"), text("ok now")])
    sleeps = _RecordedSleeps()
    model = _rewrapped(build_model("openai:gpt-4o", base_url=server.openai_base_url), sleep=sleeps)

    assert _run(model).output == "ok now"
    assert sleeps.delays == [2.0]
    assert len(server.requests) == 2


def test_retry_after_as_http_date_is_capped(loopback: ServerFactory) -> None:
    later = email.utils.formatdate(time.time() + 3600, usegmt=True)
    server = loopback([rate_limited(later), text("ok")])
    sleeps = _RecordedSleeps()
    policy = RetryPolicy(max_wait_s=5.0)
    model = _rewrapped(build_model("openai:gpt-4o", base_url=server.openai_base_url), policy=policy, sleep=sleeps)

    _run(model)
    assert sleeps.delays == [5.0]


def test_backoff_is_exponential_with_jitter_and_bounded(loopback: ServerFactory) -> None:
    server = loopback([error(500, "boom")] * 4)
    sleeps = _RecordedSleeps()
    policy = RetryPolicy(max_attempts=4, base_delay_s=1.0, max_delay_s=3.0)
    model = _rewrapped(
        build_model("openai:gpt-4o", base_url=server.openai_base_url), policy=policy, sleep=sleeps, jitter=lambda: 1.0
    )

    failure = _fail(model)

    assert sleeps.delays == [1.0, 2.0, 3.0]  # base, doubled, capped
    assert (failure.kind, failure.attempts, len(server.requests)) == ("server_error", 4, 4)
    no_jitter = RetryingModel(model.wrapped, policy=policy, jitter=lambda: 0.0)
    assert no_jitter.retry_delay(failure.__cause__, 1) == 0.5  # pyright: ignore[reportArgumentType]


def test_rate_limit_exhausted_is_a_provider_error(loopback: ServerFactory) -> None:
    server = loopback([rate_limited("0")] * 3)
    failure = _fail(build_model("openai:gpt-4o", base_url=server.openai_base_url))

    assert failure.kind == "rate_limit"
    assert failure.exit_code == 3
    assert str(failure) == "openai: HTTP 429 Too Many Requests: Rate limit reached for requests (after 3 attempts)"
    assert len(server.requests) == 3
    assert classify(failure).kind == "rate_limit"


def test_server_error_then_success(loopback: ServerFactory) -> None:
    server = loopback([error(500, "internal"), error(529, "Overloaded"), text("fine")])
    assert _run(build_model("openai:gpt-4o", base_url=server.openai_base_url)).output == "fine"
    assert len(server.requests) == 3


def test_auth_error_is_not_retried_and_names_no_key(loopback: ServerFactory) -> None:
    server = loopback([error(401, "Incorrect API key provided: sk-live-****************wxyz.")])
    model = build_model("openai:gpt-4o", base_url=server.openai_base_url, api_key="sk-live-secret-0123456789wxyz")

    failure = _fail(model)

    assert failure.kind == "auth"
    assert len(server.requests) == 1
    assert str(failure) == "openai: HTTP 401 Unauthorized: Incorrect API key provided: [REDACTED]."  # the period kept
    assert classify(failure).message == str(failure)


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_context_length_is_classified(api: str, loopback: ServerFactory) -> None:
    server = loopback([context_length_exceeded(api)])
    if api == "openai":
        model = build_model("openai:gpt-4o", base_url=server.openai_base_url)
    else:
        model = build_model("anthropic:claude-loopback-test", base_url=server.anthropic_base_url)

    failure = _fail(model)

    assert isinstance(failure, ProviderContextLengthError)
    assert isinstance(failure, ContextOverflowError)
    assert failure.kind == "context_length"
    assert str(failure).startswith(f"{api}: HTTP 400 Bad Request: ")
    assert classify(failure).kind == "context_length"
    assert len(server.requests) == 1


def test_anthropic_errors_name_the_provider(loopback: ServerFactory) -> None:
    server = loopback([error(401, "invalid x-api-key")])
    failure = _fail(build_model("anthropic:claude-loopback-test", base_url=server.anthropic_base_url))
    assert str(failure) == "anthropic: HTTP 401 Unauthorized: invalid x-api-key"


def test_connection_failure_is_retried_then_reported(loopback: ServerFactory) -> None:
    server = loopback()
    base_url = server.openai_base_url
    server.close()  # nothing listens on the port any more

    failure = _fail(build_model("openai:gpt-4o", base_url=base_url))

    assert failure.kind == "connection"
    assert failure.status_code is None
    assert str(failure) == f"openai: connection to {base_url}/ failed: Connection error (after 3 attempts)"
    assert failure.attempts == providers.DEFAULT_RETRY_POLICY.max_attempts


# --- concurrency


def test_run_many_bounds_concurrency_and_keeps_order() -> None:
    running = 0
    peak = 0

    def job(number: int) -> Any:
        async def work() -> int:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.001 * (number % 3))
            running -= 1
            return number

        return work

    results = asyncio.run(run_many([job(n) for n in range(20)], concurrency=4))
    assert results == list(range(20))
    assert peak == 4


def test_run_many_rejects_zero_concurrency() -> None:
    with pytest.raises(UsageError):
        asyncio.run(run_many([], concurrency=0))
