"""The one table that turns foreign exceptions into `RunError` kinds.

Every exception a turn can end with passes through `classify()`: pydantic-ai's run errors, provider errors
(raised by real clients through pydantic-ai, or by the scripted model imitating them), and agentrig's own
run-stopping errors (`stops.py`). `providers.RetryingModel` asks the same table which provider failures are
worth a retry (`provider_kind`) and how to say them in one line (`provider_detail`).

Provider errors are matched by HTTP status and body, and by class name along the MRO rather than by
importing classes, because pydantic-ai 2.68 added category classes (`ModelContextWindowExceededError`,
`ModelConnectionError`, ...) that 2.38 does not have; on 2.38 a dropped connection is a plain `ModelAPIError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelHTTPError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)

from agentrig.runtime.history.run_records import RunError, RunErrorKind
from agentrig.runtime.models.stops import RunStopped, ScriptedToolFailure

__all__ = [
    "classify",
    "is_context_length_error",
    "one_line",
]

_MESSAGE_LIMIT = 500


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
            for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
                if key in ("code", "type") and isinstance(item, str):
                    codes.add(item)
                pending.append(item)
        elif isinstance(value, list | tuple):
            pending.extend(value)  # pyright: ignore[reportUnknownArgumentType]
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


def _provider_kind(exc: ModelAPIError) -> RunErrorKind:
    names = _class_names(exc)
    if is_context_length_error(exc):
        return "context_length"
    if isinstance(exc, ModelHTTPError):
        status = exc.status_code
        if status == 429:
            return "rate_limit"
        if status in (401, 403):
            return "auth"
        if status >= 500:
            return "server_error"
        if status == 408:
            return "connection"
        return "agent_error"
    # Without an HTTP status: 2.68 names the category; 2.38 raises a bare ModelAPIError for connection failures.
    if "ModelRateLimitError" in names or "ModelQuotaExceededError" in names:
        return "rate_limit"
    if "ModelAuthenticationError" in names:
        return "auth"
    if "ModelServerError" in names or "ModelUnavailableError" in names:
        return "server_error"
    return "connection"


def _provider_message(exc: ModelAPIError) -> str:
    """`HTTP 429 from gpt-4o: <the provider's message>` rather than pydantic-ai's dump of the whole body."""
    if not isinstance(exc, ModelHTTPError):
        return f"{exc.model_name}: {exc.message}"
    body: Any = exc.body
    detail: Any = None
    if isinstance(body, Mapping):
        error: Any = body.get("error", body)  # pyright: ignore[reportUnknownMemberType]
        detail = error.get("message") if isinstance(error, Mapping) else error  # pyright: ignore[reportUnknownMemberType]
    if not isinstance(detail, str) or not detail:
        detail = str(body) if body is not None else "no details"
    return f"HTTP {exc.status_code} from {exc.model_name}: {detail}"


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
        return RunError(kind=_provider_kind(exc), message=one_line(_provider_message(exc)))
    if isinstance(exc, UnexpectedModelBehavior):
        return RunError(kind="unexpected_model_behavior", message=one_line(exc.message))
    if isinstance(exc, TimeoutError):
        return RunError(kind="timeout", message=one_line(str(exc) or "the run timed out"))
    if {"TransportError", "APIConnectionError"} & set(_class_names(exc)):
        # The HTTP client's own error for a response body cut off mid-stream (2.38 lets it through unwrapped).
        return RunError(kind="connection", message=one_line(f"connection lost: {type(exc).__name__}: {exc}"))
    if isinstance(exc, ConnectionError | OSError) and not isinstance(exc, FileNotFoundError | PermissionError):
        return RunError(kind="connection", message=one_line(f"{type(exc).__name__}: {exc}"))
    if isinstance(exc, UserError):
        return RunError(kind="agent_error", message=one_line(f"pydantic-ai: {exc.message}"))
    return RunError(kind="agent_error", message=one_line(f"{type(exc).__name__}: {exc}"))
