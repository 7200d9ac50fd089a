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
import typing
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import replace
from importlib.metadata import version
from typing import Any, Final, Literal, TypeAlias

# pydantic-ai >= 2.39 prints a first-run banner on stderr in terminals; agentrig's stderr is for its own lines.
os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")

from pydantic_ai import Agent
from pydantic_ai import messages as _messages
from pydantic_ai.messages import ModelMessage, ModelResponse

from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.tool_kinds import with_output_tool_kind
from agentrig.runtime.history.usage import Usage

__all__ = [
    "ACCEPTED_TOOL_KINDS",
    "HAS_PUBLIC_REPAIR_MESSAGES",
    "HAS_RETRY_FEEDBACK",
    "HAS_RUN_TIMEOUT",
    "MARKS_DEFERRED_PAUSE",
    "PYDANTIC_AI_VERSION",
    "PYDANTIC_AI_VERSION_TEXT",
    "RETRY_SHAPE",
    "STAMPS_OUTPUT_TOOL_KIND",
    "RetryShape",
    "capability_part",
    "check_stream_end",
    "is_output_retry",
    "is_tool_retry",
    "keep_over_limit_response",
    "output_retry_part",
    "repair_messages",
    "run_usage",
    "stream_ended_early",
    "supports_run_kwarg",
    "tool_retry_part",
    "uncounted_held_response",
    "with_release_marks",
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


def _accepted_tool_kinds() -> frozenset[str] | None:
    kind = vars(_messages).get("ToolPartKind")
    if typing.get_origin(kind) is Literal:
        return frozenset(str(value) for value in typing.get_args(kind))
    return None


ACCEPTED_TOOL_KINDS: Final[frozenset[str] | None] = _accepted_tool_kinds()
"""The `tool_kind` values the installed version validates: 2.38-2.4x only its own kinds (`ToolPartKind` is the
Literal `'tool-search' | 'capability-load'`), later releases any string (None). A kind the release cannot hold,
such as 2.78's `output`, is left out of what it is given: it never writes one itself."""

STAMPS_OUTPUT_TOOL_KIND: Final[bool] = "_OUTPUT_TOOL_PART_KIND" in vars(_messages)
"""2.78 marks an output tool's call, return and retry with `tool_kind='output'`; earlier releases leave None."""

MARKS_DEFERRED_PAUSE: Final[bool] = "_DEFERRED_PAUSE_KEY" in vars(_messages)
"""2.78 marks the requests a run writes when it pauses for deferred calls (`metadata['__pydantic_ai__']
['deferred_pause']`), and a resumed history that ends on them pauses again; earlier releases write no mark."""

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


_STOP_REASON_STREAMS: Final[frozenset[str]] = frozenset({"AnthropicStreamedResponse", "OpenAIStreamedResponse"})
"""The streamed responses that put the provider's own stop reason in `provider_details['finish_reason']` on every
version (Anthropic's `message_delta.stop_reason`, Chat Completions' `finish_reason`), and subclasses of them."""


def stream_ended_early(stream: Any) -> bool:
    """Whether a provider's stream that ran out of events (no error, not cancelled) ended before the provider
    finished the response: its body closed cleanly before the final event.

    2.78 marks such a stream itself for Anthropic (no `message_stop`), Google, Mistral and the OpenAI Responses API:
    the stream's `state` stays `'incomplete'` (the `state` pydantic-ai's `get()` reads). 2.38 and 2.68 mark nothing,
    and neither does 2.78 for Chat Completions, whose missing `finish_reason` 2.68+ fills with `'stop'` itself; for
    Anthropic and Chat Completions, whose streams record the stop reason the provider sent, none recorded means the
    stream ended before it (Anthropic's `message_delta`, OpenAI's finish chunk: `[DONE]` comes after it and reaches
    no pydantic-ai object). A refusal (OpenAI's `refusal` deltas) drops the stop reason on purpose and counts as
    finished. Other providers' streams on < 2.78 are taken as finished: what they record differs, and a guess that
    is wrong would fail every streamed request.
    """
    if getattr(stream, "cancelled", False):
        return False  # stopped by its consumer (an abort, a timeout): the run says so itself
    if getattr(stream, "state", "complete") == "incomplete":
        return True
    if not _STOP_REASON_STREAMS & {cls.__name__ for cls in type(stream).__mro__}:
        return False
    details: Any = getattr(stream, "provider_details", None) or {}
    return "finish_reason" not in details and "refusal" not in details


def check_stream_end(stream: Any, check: Callable[[], None]) -> None:
    """Have `stream` (a pydantic-ai `StreamedResponse`, not iterated yet) call `check` once its provider's events ran
    out, inside the iteration that reads them, so an exception `check` raises reaches the stream's consumer where a
    connection dropped mid-stream raises: pydantic-ai then keeps the response so far as `interrupted` (2.68+, and
    the streamed engine its text) as for any stream that broke off.

    `_get_event_iterator` is where every provider's stream yields its events, on 2.38 to 2.78 alike: `__aiter__`
    calls it once, through the instance, so the wrapper set on the instance is the one iterated.
    """
    events = stream._get_event_iterator

    async def checked() -> AsyncIterator[Any]:
        async for event in events():
            yield event
        check()

    stream._get_event_iterator = checked


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


def with_release_marks(history: Sequence[Message], *, output_tools: Collection[str]) -> list[Message]:
    """A run's canonical history with `tool_kind='output'` on an output tool's calls and the returns and retries
    answering them (`output_tools`: the output tools the run offered the model), which pydantic-ai 2.78 writes itself:
    written on earlier releases too, so the same run has the same canonical history (and golden) on every version.
    (2.78's other mark, the deferred pause, the orchestrator writes for every engine: `cleanup.with_pause_marks`.)
    """
    result = list(history)
    if output_tools and not STAMPS_OUTPUT_TOOL_KIND:
        result = with_output_tool_kind(result, output_tools)
    return result


def capability_part(stored: dict[str, Any]) -> Any:
    """pydantic-ai's `CapabilityPart` from the form it stores (2.78+): an instance of the kind's class when the
    process registered it, else an `UnknownCapabilityPart` that renders as the stored one did. Earlier releases
    have none: a `ValueError` says which release it needs."""
    if "CapabilityPart" not in vars(_messages):
        raise ValueError(f"a capability part needs pydantic-ai 2.78 or later (installed: {PYDANTIC_AI_VERSION_TEXT})")
    request = {"kind": "request", "parts": [{"part_kind": "capability", **stored}]}
    (message,) = _messages.ModelMessagesTypeAdapter.validate_python([request])
    return message.parts[0]
