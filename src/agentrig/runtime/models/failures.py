"""The one table that turns foreign exceptions into `RunError` kinds.

Every exception a turn can end with passes through `classify()`: pydantic-ai's run errors, provider errors
(raised by real clients through pydantic-ai, or by the scripted model imitating them), and agentrig's own
run-stopping errors (`stops.py`). `retrying.RetryingModel` asks the same table which provider failures are
worth a retry (`provider_kind`) and how to say them in one line (`provider_detail`). A response the provider ended
before finishing it raises no exception of pydantic-ai's: the provider layer notices it and raises its own error of
kind `incomplete_response`, worded here (`describe_incomplete_response`).

Provider errors are matched by HTTP status and body, and by class name along the MRO rather than by
importing classes, because pydantic-ai 2.68 added category classes (`ModelContextWindowExceededError`,
`ModelConnectionError`, ...) that 2.38 does not have; on 2.38 a dropped connection is a plain `ModelAPIError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelHTTPError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)

from agentrig.runtime.history.redaction import redact
from agentrig.runtime.history.run_records import RunError, RunErrorKind
from agentrig.runtime.models.stops import RunStopped, ScriptedToolFailure

__all__ = [
    "classify",
    "describe_incomplete_response",
    "describe_provider_failure",
    "is_context_length_error",
    "is_no_answer",
    "one_line",
    "provider_detail",
    "provider_kind",
    "status_phrase",
]

_MESSAGE_LIMIT = 500
_EXTRA_STATUS_PHRASES = {529: "Overloaded"}


_CONTEXT_LENGTH_CODES = frozenset({"context_length_exceeded", "string_above_max_length", "request_too_large"})
_CONTEXT_LENGTH_PHRASES = (
    "context length",
    "context_length",
    "context window",
    "maximum context",
    "prompt is too long",
    "too many tokens",
    "input is too long",
)


def one_line(text: str) -> str:
    """A message fit for one line of output: newlines folded, overly long text cut."""
    folded = " ".join(text.split())
    return folded if len(folded) <= _MESSAGE_LIMIT else folded[: _MESSAGE_LIMIT - 3] + "..."


def _class_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _body_codes_and_text(body: object) -> tuple[set[str], str]:
    codes: set[str] = set()
    texts: list[str] = []
    pending: list[object] = [body]
    while pending:
        value = pending.pop()
        if isinstance(value, Mapping):
            for key, item in value.items():
                if key in ("code", "type") and isinstance(item, str):
                    codes.add(item)
                pending.append(item)
        elif isinstance(value, list | tuple):
            pending.extend(value)
        elif isinstance(value, str):
            texts.append(value)
    return codes, " ".join(texts).lower()


def is_context_length_error(exc: BaseException) -> bool:
    """The provider said the request does not fit the model's context window."""
    if "ModelContextWindowExceededError" in _class_names(exc):  # pydantic-ai 2.68+ categorizes it itself
        return True
    if not isinstance(exc, ModelHTTPError) or exc.status_code not in (400, 413):
        return False
    codes, text = _body_codes_and_text(exc.body)
    provider_code: Any = getattr(exc, "provider_error_code", None)  # 2.68+
    if isinstance(provider_code, str):
        codes.add(provider_code)
    return bool(codes & _CONTEXT_LENGTH_CODES) or any(phrase in text for phrase in _CONTEXT_LENGTH_PHRASES)


_TIMEOUT_CLASSES = frozenset({"ModelTimeoutError", "APITimeoutError", "TimeoutException"})
"""The classes a request that got no answer in time raises: pydantic-ai's own (2.68+), the OpenAI and Anthropic SDKs'
(what 2.38 wraps in a bare ModelAPIError), the HTTP client's (a stream that stalls mid-response, unwrapped on 2.38)."""


def is_no_answer(error: BaseException) -> bool:
    """The request got no answer within its timeout (the error, or what it was raised from, says so)."""
    seen: BaseException | None = error
    for _ in range(8):  # a cause chain is short; a cycle must not loop for ever
        if seen is None:
            return False
        if _TIMEOUT_CLASSES & _class_names(seen):
            return True
        seen = seen.__cause__
    return False


def provider_kind(error: BaseException) -> RunErrorKind:
    """The `RunError` kind of a provider failure (a pydantic-ai `ModelAPIError`, or what wraps one).

    By HTTP status where there is one: 429 rate_limit, 401/403 auth, 408 connection, 5xx server_error, a
    context-window 400/413 context_length, any other 4xx request_rejected (a bad request, an unknown model). A request
    that got no answer within its timeout is provider_timeout.
    Without a status, 2.68 names the category in its class; 2.38 raises a bare ModelAPIError for a dropped
    connection.
    """
    if is_context_length_error(error):
        return "context_length"
    if not isinstance(error, ModelHTTPError) and is_no_answer(error):
        return "provider_timeout"
    if isinstance(error, ModelHTTPError):
        status = error.status_code
        if status == 429:
            return "rate_limit"
        if status in (401, 403):
            return "auth"
        if status == 408:
            return "connection"
        if status >= 500:
            return "server_error"
        return "request_rejected"
    names = _class_names(error)
    if "ModelRateLimitError" in names or "ModelQuotaExceededError" in names:
        return "rate_limit"
    if "ModelAuthenticationError" in names:
        return "auth"
    if "ModelServerError" in names or "ModelUnavailableError" in names:
        return "server_error"
    return "connection"


def _error_object(error: BaseException) -> Mapping[str, Any]:
    """The provider's error object: OpenAI's SDK hands over `{"message", "type", "code"}` already unwrapped,
    Anthropic's the whole `{"type": "error", "error": {...}}` body."""
    body = getattr(error, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping):
            return inner
        return body
    return {}


def provider_detail(error: BaseException) -> str:
    """The provider's own words for a failure, rather than pydantic-ai's dump of the whole body."""
    message = _error_object(error).get("message")
    if isinstance(message, str) and message:
        return message
    body = getattr(error, "body", None)
    if isinstance(body, str) and body:
        return body
    if body is not None and not isinstance(body, Mapping):
        return str(body)
    cause = error.__cause__
    if cause is not None and str(cause):
        return str(cause)
    return getattr(error, "message", None) or type(error).__name__


def status_phrase(status: int) -> str:
    """`Unauthorized` for 401; Anthropic's 529 `Overloaded`, which is not in the IANA registry."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return _EXTRA_STATUS_PHRASES.get(status, "")


def describe_provider_failure(
    error: BaseException, *, provider: str, base_url: str | None = None
) -> tuple[RunErrorKind, str]:
    """The `RunError` kind and one redacted line naming the provider and the HTTP status, for a failure that
    survived the retries: `openai: HTTP 401 Unauthorized: invalid api key`."""
    kind = provider_kind(error)
    detail = provider_detail(error)
    if isinstance(error, ModelHTTPError):
        phrase = status_phrase(error.status_code)
        line = f"{provider}: HTTP {error.status_code}{' ' + phrase if phrase else ''}: {detail}"
    else:
        # Name where it tried to connect (the first thing to check), without the SDK's closing full stop,
        # which `(after N attempts)` would follow.
        where = f" to {base_url}" if base_url else ""
        line = f"{provider}: connection{where} failed: {detail.rstrip('.')}"
    return kind, redact(one_line(line))


def describe_incomplete_response(provider: str, *, response_to: str, text: str) -> str:
    """One redacted line for a response the provider ended before finishing it (`incomplete_response`), saying that
    the text which had arrived is not the whole answer: `anthropic: the response to request 1 from claude-sonnet-4-5
    ended early: ...` (`response_to`: `request 1 from claude-sonnet-4-5`, or a script's `turn 1, step 2`)."""
    arrived = f"after {len(text):,} characters of text" if text else "before any text"
    line = (
        f"{provider}: the response to {response_to} ended early: the stream stopped before the provider"
        f" finished it (no stop reason), {arrived}; the answer is incomplete"
    )
    return redact(one_line(line))


def _model_failure_line(error: ModelAPIError) -> str:
    """`HTTP 429 from gpt-4o: <the provider's message>` for a failure raised without the retrying wrapper."""
    if isinstance(error, ModelHTTPError):
        return f"HTTP {error.status_code} from {error.model_name}: {provider_detail(error)}"
    return f"{error.model_name}: {error.message}"


def classify(exc: BaseException) -> RunError:
    """The `RunError` a turn ends with when `exc` escapes the run."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:  # parallel tool tasks may group their errors
        exc = exc.exceptions[0]
    if isinstance(exc, RunStopped):
        return RunError(kind=exc.kind, message=one_line(exc.message))
    if isinstance(exc, ScriptedToolFailure):
        return RunError(kind="tool_failed", message=one_line(exc.message))
    if isinstance(exc, UsageLimitExceeded):
        return RunError(kind="usage_limit", message=one_line(exc.message))
    if isinstance(exc, ModelAPIError):
        return RunError(kind=provider_kind(exc), message=one_line(_model_failure_line(exc)))
    if isinstance(exc, UnexpectedModelBehavior):
        return RunError(kind="unexpected_model_behavior", message=one_line(exc.message))
    if isinstance(exc, TimeoutError):
        return RunError(kind="timeout", message=one_line(str(exc) or "the run timed out"))
    if is_no_answer(exc):  # a stream that stalled past the SDK's timeout (2.38 lets the client's error through)
        return RunError(kind="provider_timeout", message=one_line(f"no answer in time: {type(exc).__name__}: {exc}"))
    if {"TransportError", "APIConnectionError"} & set(_class_names(exc)):
        # The HTTP client's own error for a response body cut off mid-stream (2.38 lets it through unwrapped).
        return RunError(kind="connection", message=one_line(f"connection lost: {type(exc).__name__}: {exc}"))
    if isinstance(exc, ConnectionError | OSError) and not isinstance(exc, FileNotFoundError | PermissionError):
        return RunError(kind="connection", message=one_line(f"{type(exc).__name__}: {exc}"))
    if isinstance(exc, UserError):
        return RunError(kind="agent_error", message=one_line(f"pydantic-ai: {exc.message}"))
    return RunError(kind="agent_error", message=one_line(f"{type(exc).__name__}: {exc}"))
