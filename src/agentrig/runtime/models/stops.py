"""agentrig's own run-stopping errors: raised by the scripted model, the YAML tools and the loop guards,
and turned into `RunError` kinds by `failures.classify`. Framework-free, so an engine that is not pydantic-ai
raises the same ones.

    RunStopped                       agentrig stopped the run on purpose (a script or loop guard)
    ├── ScriptExhausted              the script has no step left for a model request  -> script_exhausted
    ├── ScriptMismatch               the request does not fit the next step            -> script_mismatch
    ├── MaxIterationsReached         settings.max_iterations model requests             -> max_iterations
    └── EmptyResponsesRepeated       consecutive empty model responses                  -> unexpected_model_behavior
    ScriptedToolFailure              a YAML tool's `fail` outcome                       -> tool_failed

`describe_step` says which step a script error is about, in the same words on every engine.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from agentrig.runtime.history.run_records import RunErrorKind

if TYPE_CHECKING:  # only its attributes are read: the errors stay importable without the scenario models
    from agentrig.scenarios.model import ModelStep, ScriptedError

__all__ = [
    "EmptyResponsesRepeated",
    "MaxIterationsReached",
    "RunStopped",
    "ScriptExhausted",
    "ScriptMismatch",
    "ScriptedToolFailure",
    "describe_step",
    "provider_error_message",
    "provider_error_status",
    "shorten",
]

_PROVIDER_ERROR_MESSAGES: dict[str, str] = {
    "context_length": "This model's maximum context length is exceeded. Please reduce the length of the messages.",
    "rate_limit": "Rate limit reached for requests. Please try again later.",
    "server_error": "The server had an error while processing your request.",
    "auth": "Incorrect API key provided.",
    "connection": "Connection error.",
    "request_rejected": "The request was rejected as invalid.",
}
_PROVIDER_ERROR_STATUSES: dict[str, int] = {
    "context_length": 400,
    "rate_limit": 429,
    "server_error": 500,
    "auth": 401,
    "request_rejected": 400,
}


class RunStopped(Exception):
    """agentrig stopped a run on purpose; `kind` says why."""

    kind: RunErrorKind = "agent_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ScriptExhausted(RunStopped):
    """The scripted model was asked for a response the script does not have."""

    kind: RunErrorKind = "script_exhausted"


class ScriptMismatch(RunStopped):
    """The script and the run disagree (a summary step for a normal request, steps left over at turn end)."""

    kind: RunErrorKind = "script_mismatch"


class MaxIterationsReached(RunStopped):
    """The turn made `settings.max_iterations` model requests without finishing."""

    kind: RunErrorKind = "max_iterations"


class EmptyResponsesRepeated(RunStopped):
    """The model answered with nothing several times in a row, after the retry pydantic-ai asked for."""

    kind: RunErrorKind = "unexpected_model_behavior"


class ScriptedToolFailure(Exception):
    """A YAML tool's `fail` outcome: a non-retryable error that ends the run."""

    def __init__(self, message: str, *, tool_call_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.tool_call_id = tool_call_id
        """The failing call, so the orchestrator can close it with a `failed` return."""


def shorten(text: str, limit: int = 60) -> str:
    """`text` on one line, cut to `limit` characters, for error messages."""
    folded = " ".join(text.split())
    return folded if len(folded) <= limit else folded[: limit - 3] + "..."


def provider_error_message(error: ScriptedError) -> str:
    """A scripted provider error's message: the script's, else the kind's usual words (the same on both engines)."""
    return error.message or _PROVIDER_ERROR_MESSAGES[error.kind]


def provider_error_status(error: ScriptedError) -> int | None:
    """A scripted provider error's HTTP status: the script's, else the kind's usual one (None: a dropped connection)."""
    return error.status if error.status is not None else _PROVIDER_ERROR_STATUSES.get(error.kind)


def describe_step(step: ModelStep) -> str:
    """A short summary of a scripted step, for mismatch messages."""
    if step.error is not None:
        return f"error {step.error.kind}"
    if step.empty:
        return "empty"
    if step.summary is not None:
        return f"summary {json.dumps(shorten(step.summary))}"
    pieces: list[str] = []
    if step.abort:
        pieces.append("abort")
    if step.cut:
        pieces.append("cut")
    thought = step.scripted_thought
    if thought is not None:
        pieces.append(f"thought {json.dumps(shorten(thought.content))}")
    if step.text is not None:
        pieces.append(f"text {json.dumps(shorten(step.text))}")
    pieces.extend(f"tool call {call.name}" for call in step.tool_calls)
    return ", ".join(pieces)
