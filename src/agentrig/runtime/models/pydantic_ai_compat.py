"""The one place that knows how pydantic-ai versions differ (supported: 2.38.0 up to, not including, 3).

Every other module asks this one instead of testing versions or probing attributes itself, so a new
pydantic-ai release is reviewed in one file. Each branch names the release that forced it.

Probing rule: pydantic-ai 2.66+ raises `ImportError` from a module `__getattr__` for removed 1.x names,
so `hasattr(module, name)` can raise; we test `name in vars(module)` instead.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Sequence
from dataclasses import replace
from importlib.metadata import version
from typing import Any, Final, Literal, TypeAlias

# pydantic-ai >= 2.39 prints a first-run banner on stderr in terminals; agentrig's stderr is for its own lines.
os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")

from pydantic_ai import Agent
from pydantic_ai import messages as _messages
from pydantic_ai.messages import ModelMessage, ModelResponse

from agentrig.runtime.history.usage import Usage

__all__ = [
    "HAS_PUBLIC_REPAIR_MESSAGES",
    "HAS_RETRY_FEEDBACK",
    "HAS_RUN_TIMEOUT",
    "PYDANTIC_AI_VERSION",
    "PYDANTIC_AI_VERSION_TEXT",
    "RETRY_SHAPE",
    "RetryShape",
    "is_output_retry",
    "is_tool_retry",
    "keep_over_limit_response",
    "output_retry_part",
    "repair_messages",
    "run_usage",
    "supports_run_kwarg",
    "tool_retry_part",
    "uncounted_held_response",
]

RetryShape: TypeAlias = Literal["retry-prompt", "retried"]
"""How a pydantic-ai version writes retries: `RetryPromptPart` (< 2.60) or `ToolReturnPart(outcome='retried')`
plus `RetryFeedbackPart` (2.60+)."""


def parse_version(text: str) -> tuple[int, int, int]:
    numbers: list[int] = []
    for piece in text.split(".")[:3]:
        digits = re.match(r"\d*", piece)  # the leading digits: '0rc1' -> 0, 'dev4' -> 0
        numbers.append(int(digits.group() or 0) if digits else 0)
    while len(numbers) < 3:
        numbers.append(0)
    return numbers[0], numbers[1], numbers[2]


PYDANTIC_AI_VERSION_TEXT: Final[str] = version("pydantic_ai_slim")
"""The installed pydantic-ai version as written in its metadata, e.g. `2.68.0`."""

PYDANTIC_AI_VERSION: Final[tuple[int, int, int]] = parse_version(PYDANTIC_AI_VERSION_TEXT)
"""The installed pydantic-ai version as (major, minor, patch)."""

HAS_RETRY_FEEDBACK: Final[bool] = "RetryFeedbackPart" in vars(_messages)
"""2.60 split `RetryPromptPart` into `ToolReturnPart(outcome='retried')` and `RetryFeedbackPart`."""

RETRY_SHAPE: Final[RetryShape] = "retried" if HAS_RETRY_FEEDBACK else "retry-prompt"
"""The retry shape the installed version writes and validates (see `RetryShape`)."""

HAS_PUBLIC_REPAIR_MESSAGES: Final[bool] = "repair_messages" in vars(_messages)
"""`pydantic_ai.messages.repair_messages` is public from 2.46; 2.38 only has the private graph helper."""

_RUN_PARAMETERS: Final[frozenset[str]] = frozenset(inspect.signature(Agent.run).parameters)

HAS_RUN_TIMEOUT: Final[bool] = "timeout" in _RUN_PARAMETERS
"""`Agent.run(timeout=)` and `RunTimedOut` arrived in 2.57."""


def supports_run_kwarg(name: str) -> bool:
    """Whether `Agent.run` (and run_sync, iter, ...) of the installed version accepts this keyword.

    Newer releases added `conversation=` (2.54), `timeout=` (2.57) and `workspace=`; passing one to an
    older release is a TypeError, so callers check first.
    """
    return name in _RUN_PARAMETERS


def run_usage(result: Any) -> Any:
    """The `RunUsage` of an `AgentRunResult`, `AgentRun` or `RunCancelled`, on every version.

    `usage` is a property everywhere. 2.61-2.68 also made `RunUsage` callable (with a deprecation warning)
    so old `result.usage()` code keeps working; 2.38 raises TypeError on that call. Never call it.
    """
    return result.usage


def repair_messages(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The cleaning the agent applies to `message_history` before each request, including the last response.

    Drops orphaned tool returns, closes dangling calls with `outcome='interrupted'` returns and merges
    consecutive requests. Public as `pydantic_ai.messages.repair_messages` from 2.46; private
    `_agent_graph._clean_message_history` on 2.38-2.45.
    """
    if HAS_PUBLIC_REPAIR_MESSAGES:
        repaired: list[ModelMessage] = vars(_messages)["repair_messages"](list(messages))
        return repaired
    from pydantic_ai import _agent_graph  # 2.38-2.45: only the private helper exists

    clean: Any = vars(_agent_graph)["_clean_message_history"]
    cleaned: list[ModelMessage] = clean(list(messages), repair_last_response=True)
    return cleaned


def is_tool_retry(part: Any) -> bool:
    """A retry bound to a tool call: `RetryPromptPart(tool_name=...)` (< 2.60) or
    `ToolReturnPart(outcome='retried')` (2.60+)."""
    kind = getattr(part, "part_kind", None)
    if kind == "retry-prompt":
        return getattr(part, "tool_name", None) is not None
    return kind == "tool-return" and getattr(part, "outcome", None) == "retried"


def is_output_retry(part: Any) -> bool:
    """A retry bound to no tool call (output validation, no output): `RetryPromptPart(tool_name=None)` or
    `RetryFeedbackPart` (2.60+)."""
    kind = getattr(part, "part_kind", None)
    if kind == "retry-prompt":
        return getattr(part, "tool_name", None) is None
    return kind == "retry-feedback"


def tool_retry_part(*, tool_name: str, tool_call_id: str, content: str | list[dict[str, Any]]) -> Any:
    """A tool-bound retry in the installed version's shape: `ToolReturnPart(outcome='retried')` on 2.60+,
    `RetryPromptPart(tool_name=...)` before (constructing that one warns on 2.60+, so it is never built there)."""
    if HAS_RETRY_FEEDBACK:
        return _messages.ToolReturnPart(
            tool_name=tool_name, content=content, tool_call_id=tool_call_id, outcome="retried"
        )
    return vars(_messages)["RetryPromptPart"](content=content, tool_name=tool_name, tool_call_id=tool_call_id)


def output_retry_part(content: str | list[dict[str, Any]]) -> Any:
    """A retry bound to no tool call in the installed version's shape: `RetryFeedbackPart` on 2.60+,
    `RetryPromptPart(tool_name=None)` (with a random tool_call_id) before."""
    if HAS_RETRY_FEEDBACK:
        retry_info = vars(_messages)["RetryInfo"](
            cause="model_retry" if isinstance(content, str) else "validation_error"
        )
        return vars(_messages)["RetryFeedbackPart"](content=content, retry=retry_info)
    return vars(_messages)["RetryPromptPart"](content=content)


def keep_over_limit_response(messages: list[ModelMessage], response: Any) -> list[ModelMessage]:
    """The history of a run a token limit ended, holding the response that crossed the limit.

    pydantic-ai 2.38 checks the token limits before it appends the response (`_finish_handling`), so the run's
    history ends with the request that response answered and the response is lost; 2.68 appends it first and
    marks it `interrupted`. Keep it the later way on every version, so the same limit leaves the same history
    (its unanswered calls are then closed as interrupted, as after any interrupted response).
    """
    responses = [message for message in messages if message.kind == "response"]
    # Compared by parts: a streamed response is rebuilt by each `get()`, so the object kept is not the one seen.
    if (
        response is None
        or not messages
        or messages[-1].kind != "request"
        or (responses and responses[-1].parts == response.parts)
    ):
        return messages  # nothing was lost: no response, or the limit was checked before a request
    return [*messages, replace(response, state="interrupted")]


def uncounted_held_response(response: ModelResponse, *, before: Usage, after: Usage) -> Usage:
    """What a cancelled run's usage lacks of a response a `wrap_model_request` hook held: agentrig's plain
    `during_response` cut, whose hook receives the model's whole response, keeps the text of its first chunks and
    never hands it on (`before`/`after`: the run's usage just before and after the hook's handler call).

    The tokens: pydantic-ai 2.38 adds a response's usage to the run's only once the hooks hand the response back
    (`ModelRequestNode._make_request`, then `_finish_handling`), so a cancellation inside the hook loses it; 2.68
    adds it at the provider boundary (`_HandlerState.record`), before any hook sees the response. What the run's
    usage did not gain while the handler ran is added, so both count the tokens the 2.68 way (read from the usage,
    not from the version number: a release between the two pins may do either).
    The request: no version counts it (a step counts when its response enters the history, which a held response
    never does). It is counted as 2.68 counts a streamed response cut after its first chunk
    (`_commit_interrupted_response`), so a cut turn has the same usage plain or streamed.
    """
    reported = Usage.from_object(response.usage)

    def missing(name: str) -> int:
        gained = getattr(after, name) - getattr(before, name)
        return max(0, getattr(reported, name) - gained)

    return Usage(
        requests=1,
        input_tokens=missing("input_tokens"),
        output_tokens=missing("output_tokens"),
        cache_read_tokens=missing("cache_read_tokens"),
        cache_write_tokens=missing("cache_write_tokens"),
    )
