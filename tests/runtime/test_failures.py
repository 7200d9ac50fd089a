"""failures.classify: the one table from foreign exceptions to RunError kinds."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelHTTPError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)

from agentrig.runtime.models.failures import classify, describe_provider_failure, is_context_length_error
from agentrig.runtime.models.stops import (
    EmptyResponsesRepeated,
    MaxIterationsReached,
    ScriptedToolFailure,
    ScriptExhausted,
    ScriptMismatch,
)
from agentrig.runtime.suite.scenario_run import failure
from tests.runtime.engine_helpers import load_yaml


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ModelHTTPError(429, "m", {"error": {"message": "slow down"}}), "rate_limit"),
        (ModelHTTPError(401, "m"), "auth"),
        (ModelHTTPError(403, "m"), "auth"),
        (ModelHTTPError(500, "m"), "server_error"),
        (ModelHTTPError(503, "m"), "server_error"),
        (
            ModelHTTPError(400, "m", {"error": {"code": "context_length_exceeded", "message": "too long"}}),
            "context_length",
        ),
        (
            ModelHTTPError(400, "m", {"type": "error", "error": {"message": "prompt is too long: 210000 tokens"}}),
            "context_length",
        ),
        (ModelHTTPError(400, "m", {"error": {"message": "bad request"}}), "request_rejected"),
        (ModelHTTPError(404, "m", {"error": {"message": "no such model"}}), "request_rejected"),
        (ModelHTTPError(408, "m"), "connection"),
        (ModelAPIError("m", "Connection error."), "connection"),
        (ConnectionResetError("reset"), "connection"),
        (UsageLimitExceeded("The next request would exceed the request_limit of 1"), "usage_limit"),
        (UnexpectedModelBehavior("Tool 'x' exceeded max retries count of 1"), "unexpected_model_behavior"),
        (ScriptExhausted("turn 1, step 2: nothing left"), "script_exhausted"),
        (ScriptMismatch("leftover"), "script_mismatch"),
        (MaxIterationsReached("stopped"), "max_iterations"),
        (EmptyResponsesRepeated("2 empty"), "unexpected_model_behavior"),
        (ScriptedToolFailure("tool 'rm' failed"), "tool_failed"),
        (TimeoutError("slow"), "timeout"),
        (UserError("misconfigured"), "agent_error"),
        (ValueError("bug in a user tool"), "agent_error"),
    ],
)
def test_classify(error: Exception, kind: str) -> None:
    assert classify(error).kind == kind


def test_messages_are_one_line_and_readable() -> None:
    error = ModelHTTPError(429, "gpt-x", {"error": {"message": "Rate limit\nreached"}})
    assert classify(error).message == "HTTP 429 from gpt-x: Rate limit reached"
    assert classify(ValueError("a\nb")).message == "ValueError: a b"
    assert len(classify(ValueError("x" * 2000)).message) <= 500


def test_exception_groups_are_unwrapped() -> None:
    group = ExceptionGroup("tools", [ScriptedToolFailure("boom"), ValueError("other")])
    assert classify(group).kind == "tool_failed"


def test_context_length_needs_a_client_error_status() -> None:
    assert not is_context_length_error(ModelHTTPError(500, "m", {"error": {"message": "context length"}}))
    assert not is_context_length_error(ValueError("context length"))


@pytest.mark.parametrize(
    "error",
    [
        ModelHTTPError(400, "m", {"error": {"message": "bad request"}}),
        ModelHTTPError(400, "m", {"error": {"code": "context_length_exceeded", "message": "too long"}}),
        ModelHTTPError(413, "m", "request too large"),
        ModelHTTPError(429, "m"),
        ModelHTTPError(529, "m", {"type": "error", "error": {"message": "Overloaded"}}),
        ModelAPIError("m", "Connection error."),
    ],
)
def test_the_retrying_model_and_classify_read_one_table(error: Exception) -> None:
    # The provider wrapper's verdict (raised after retries) and a bare failure's verdict are the same kind.
    kind, _ = describe_provider_failure(error, provider="openai")
    assert kind == classify(error).kind


class TransportError(Exception):
    """Stands for httpx's base class of transport failures (matched by name: httpx is an optional extra)."""


class RemoteProtocolError(TransportError):
    pass


def test_a_response_body_cut_off_by_the_http_client_is_a_connection_error() -> None:
    error = classify(RemoteProtocolError("peer closed connection without sending complete message body"))
    assert error.kind == "connection"
    assert error.message.startswith("connection lost: RemoteProtocolError")


class Failed(BaseException):
    """Stands for pytest's `Failed`, which pytest-timeout's signal method raises into the test it ends."""


@pytest.mark.parametrize(
    ("error", "status", "kind"),
    [
        (ValueError("boom"), "error", "agent_error"),
        (Failed("Timeout (>1.0s) from pytest-timeout."), "failed", "timeout"),
        (Failed("something else failed the test"), "error", "agent_error"),
    ],
    ids=["agent", "pytest-timeout", "another-failure"],
)
def test_a_scenario_that_raised_is_classified_by_what_raised(
    tmp_path: Path, error: BaseException, status: str, kind: str
) -> None:
    loaded = load_yaml(tmp_path, "name: x\nsystem_prompt: terse\nturns: [{user: hi, model: [{text: hello}]}]\n")

    result = failure(loaded, error, started=0.0)

    assert (result.status, result.error.kind if result.error else None) == (status, kind)
