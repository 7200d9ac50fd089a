"""A pydantic-ai `FunctionModel` that answers from a scenario's script.

Each scenario turn has an ordered list of `ModelStep`s; every model request consumes the next step of the
current turn. The caller (`execution.py`) moves the script from turn to turn with `begin_turn()` and
`finish_turn()`. A step becomes:

- text / thought / tool_calls: one `ModelResponse` with parts in the order thought, text, tool calls;
- empty: `ModelResponse(parts=[])`;
- error: the exception a real provider client raises through pydantic-ai (`ModelHTTPError` 400 with
  `context_length_exceeded`, 429, 500, 401; a bare `ModelAPIError` for a dropped connection, which is what
  2.38's clients raise and a base class of 2.68's `ModelConnectionError`, so every version sees the same error);
- delay: `asyncio.sleep` before answering; abort: the run's cancellation is requested and the model never
  answers (the step's text is the partial text kept in `[INTERRUPTED]`);
- summary: the answer to a compaction summarize request, which the compactor marks with `summary_request()`;
- cut: the step's response, ended early by the provider: the `IncompleteResponseError` the provider layer raises
  for it (kind `incomplete_response`, the text kept in `[INTERRUPTED]`), once a plain request is answered and once
  a stream delivered its last delta.

A streamed run (`request_stream`) answers from the same step, delivered as deltas (`scripted_stream.py`):
text and thoughts in chunks, tool-call arguments as JSON fragments; delay, abort and error happen before the
first delta, so a streamed and a plain run of one script leave the same history.

Every response carries the step's usage as an explicit `RequestUsage`, zeros included: pydantic-ai would
otherwise estimate it, and the estimate differs between versions (a stream too: FunctionModel always
estimates a stream's usage, so `request_stream` hands out a response that reports the script's).
The model name is fixed (`agentrig-script`) so histories do not depend on the function's name.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from agentrig.runtime.history.canonical import UserContentPart
from agentrig.runtime.history.run_records import Check
from agentrig.runtime.history.user_content import describe_prompt
from agentrig.runtime.models.attachments import attachment_check, attachments_seen
from agentrig.runtime.models.conversion import to_canonical
from agentrig.runtime.models.failures import describe_incomplete_response
from agentrig.runtime.models.input_checks import common_input_checks
from agentrig.runtime.models.retrying import IncompleteResponseError
from agentrig.runtime.models.run_control import request_abort
from agentrig.runtime.models.scripted_stream import StreamItem, answered_text_chunks, response_deltas, with_fixed_usage
from agentrig.runtime.models.stops import (
    ScriptExhausted,
    ScriptMismatch,
    describe_step,
    provider_error_message,
    provider_error_status,
    shorten,
)
from agentrig.scenarios.model import ModelInputCheck, ModelStep, ScriptedError

__all__ = ["SCRIPT_MODEL_NAME", "ScriptedModel", "summary_request"]

SCRIPT_MODEL_NAME = "agentrig-script"

# pydantic-ai marks the tool returns it synthesizes for dangling calls with this metadata key (2.38 and 2.68).
_SYNTHESIZED_RETURN_KEY = "pydantic_ai_synthesized_tool_return"

_in_summary_request: ContextVar[bool] = ContextVar("agentrig_in_summary_request", default=False)


@contextmanager
def summary_request() -> Generator[None]:
    """Mark the model requests made inside this block as compaction summarize requests.

    The compactor wraps its summarize call in it; the scripted model then answers with the next `summary`
    step, and treats any other step (or a summary step outside the block) as a script mismatch."""
    token = _in_summary_request.set(True)
    try:
        yield
    finally:
        _in_summary_request.reset(token)


def _provider_error(error: ScriptedError, model_name: str) -> Exception:
    message = provider_error_message(error)
    status = provider_error_status(error)
    if status is None:  # a dropped connection
        return ModelAPIError(model_name=model_name, message=message)
    code, error_type = {
        "context_length": ("context_length_exceeded", "invalid_request_error"),
        "rate_limit": ("rate_limit_exceeded", "requests"),
        "server_error": ("server_error", "server_error"),
        "auth": ("invalid_api_key", "invalid_request_error"),
        "request_rejected": ("invalid_request", "invalid_request_error"),
    }[error.kind]
    body = {"error": {"message": message, "type": error_type, "code": code}}
    return ModelHTTPError(status_code=status, model_name=model_name, body=body)


def _item_text(item: Any) -> str | None:
    """The text of one item of a user prompt's list: a string, or a `TextContent`'s (2.78+); None for a file."""
    if isinstance(item, str):
        return item
    content = getattr(item, "content", None)
    return content if getattr(item, "kind", None) == "text-content" and isinstance(content, str) else None


def _part_text(part: Any) -> str | None:
    """The text a part shows the model, for `contains_text` checks and script summaries."""
    kind = getattr(part, "part_kind", "")
    if kind in ("retry-prompt", "retry-feedback"):
        # What the model reads: the message as written (a string), or the rendered validation errors.
        return part.model_response()
    if kind == "user-prompt" and not isinstance(part.content, str):
        # Text and attachments: the model reads the text items (an attachment is no text to search); 2.78 writes
        # some text as `TextContent` items (a capability part's rendered frame and content).
        return "\n".join(text for item in part.content if (text := _item_text(item)) is not None)
    if kind in ("text", "user-prompt", "system-prompt", "thinking"):
        content: Any = getattr(part, "content", "")
        return content if isinstance(content, str) else json.dumps(content, default=str)
    if kind == "tool-return":
        # Not wrapped: 2.60+ sends a retried call's message inside `{"error": "..."}` JSON, whose escaping
        # (of quotes, newlines) is transport; the model reads the message itself, as on < 2.60.
        return part.model_response_str(wrap_if_error=False)
    return None


def _attachment_labels(part: Any) -> list[str]:
    """Each attachment of a user prompt as reports label it (`<image/png, 73 bytes, sha256:4c44f00a5f49>`,
    `<document-url https://...>`), through the canonical form; none for any other part."""
    if getattr(part, "part_kind", "") != "user-prompt" or isinstance(part.content, str):
        return []
    (message,) = to_canonical([ModelRequest(parts=[part])])
    parts = [canonical for canonical in message.parts if isinstance(canonical, UserContentPart)]
    return [describe_prompt((item,)) or "" for canonical in parts for item in canonical.attachments]


def describe_request(messages: Sequence[ModelMessage]) -> str:
    """A short summary of the request being answered (the last message), for error messages: each part's kind and
    text, a user prompt's attachments labelled after its text."""
    if not messages or not isinstance(messages[-1], ModelRequest):
        return "nothing"
    pieces: list[str] = []
    for part in messages[-1].parts:
        text = _part_text(part)
        name = getattr(part, "tool_name", None)
        label = part.part_kind + (f" {name}" if name else "")
        piece = f"{label} {json.dumps(shorten(text))}" if text is not None else label
        pieces.append(" + ".join([piece, *_attachment_labels(part)]))
    return "; ".join(pieces) or "an empty request"


class ScriptedModel(FunctionModel):
    """A `FunctionModel` answering each request with the next step of the current turn's script."""

    reports_exact_usage: bool = True
    """Usage comes from the script, never estimated (the orchestrator reads this)."""

    def __init__(
        self, turns: Sequence[Sequence[ModelStep]], *, model_name: str = SCRIPT_MODEL_NAME, base_dir: Path | None = None
    ) -> None:
        super().__init__(self._respond, stream_function=self._stream, model_name=model_name)
        self._base_dir = base_dir or Path()
        """Where `expect_input.attachments` files are read from (the scenario file's folder)."""
        self._turns: tuple[tuple[ModelStep, ...], ...] = tuple(tuple(steps) for steps in turns)
        self._turn_index = 0
        self._step_index = 0
        self._checks: list[Check] = []
        self._cut: IncompleteResponseError | None = None
        """The error a `cut` step ends its response with, raised once the response is delivered."""
        self._usage = RequestUsage()
        self._chunks: tuple[str, ...] | None = None
        self._parts: list[ModelResponsePart] = []
        """The parts of the response the current step answered with (a stream rebuilds them from deltas)."""
        self._synthesized_this_turn: set[str] = set()
        self._synthesized_before: set[str] = set()
        """Calls whose return pydantic-ai synthesized in an earlier turn: the stored history keeps its mark
        (`pydantic_ai_synthesized_tool_return`, carried since the canonical form keeps tool-return metadata), and
        such a return is an answer the history holds, not one pydantic-ai made up for this request."""

    # --- the script's position, driven by execution.py ---

    @property
    def turn_index(self) -> int:
        """The current turn, 0-based."""
        return self._turn_index

    def begin_turn(self, index: int) -> None:
        """Answer the following requests from turn `index` (0-based), starting at its first step."""
        self._turn_index = index
        self._step_index = 0
        self._checks = []
        self._synthesized_before |= self._synthesized_this_turn
        self._synthesized_this_turn = set()

    def remaining_steps(self) -> tuple[ModelStep, ...]:
        """The steps of the current turn not used yet."""
        return self._steps()[self._step_index :]

    def finish_turn(self) -> ScriptMismatch | None:
        """The mismatch to report when the turn ended with steps unused, else None."""
        left = self.remaining_steps()
        if not left:
            return None
        first = self._step_index + 1
        return ScriptMismatch(
            f"turn {self._turn_index + 1}: {len(left)} scripted step(s) left unused, from step {first}"
            f" ({describe_step(left[0])}); the run ended before asking for them"
        )

    def take_checks(self) -> tuple[Check, ...]:
        """The `expect_input` checks recorded since the turn began."""
        return tuple(self._checks)

    def drain_checks(self) -> tuple[Check, ...]:
        """The `expect_input` checks recorded so far, forgetting them (a script that spans turns)."""
        checks = tuple(self._checks)
        self._checks = []
        return checks

    def _steps(self) -> tuple[ModelStep, ...]:
        return self._turns[self._turn_index] if self._turn_index < len(self._turns) else ()

    # --- answering ---

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        self._cut = None
        response = await super().request(messages, model_settings, model_request_parameters)
        # FunctionModel replaces usage without values (all zeros) by an estimate; the script's numbers win.
        response.usage = self._usage
        if self._cut is not None:  # a `cut` step: what a plain request gets when the provider ends it early
            raise self._cut
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse]:
        # FunctionModel opens the stream (and so runs the step up to its first delta) before yielding it,
        # so `self._usage` is this step's usage by the time the response is handed out.
        async with super().request_stream(messages, model_settings, model_request_parameters, run_context) as stream:
            yield with_fixed_usage(stream, self._usage, parts=self._parts)

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[StreamItem]:
        self._cut = None
        response = await self._respond(messages, info)
        cut, self._parts = self._cut, list(response.parts)
        for item in response_deltas(response.parts, text_chunks=self._chunks):
            yield item
        if cut is not None:  # a `cut` step: its deltas arrived, then the stream ended before its last event
            raise cut

    def _next_step(self, messages: Sequence[ModelMessage]) -> tuple[int, ModelStep]:
        steps = self._steps()
        number = self._step_index + 1
        if self._step_index >= len(steps):
            raise ScriptExhausted(
                f"turn {self._turn_index + 1}, step {number}: the script has no response left"
                f" (the turn has {len(steps)} step(s)); the model was asked: {describe_request(messages)}"
            )
        step = steps[self._step_index]
        summarizing = _in_summary_request.get()
        if step.error is None and summarizing != (step.summary is not None):
            # Not consumed: an unplanned compaction fails (and the turn goes on uncompacted) while the step
            # stays for the request it was written for. An `error` step answers whichever request comes next,
            # so a summarize request can fail with a provider error too.
            asked = "a compaction summary" if summarizing else "a normal response"
            raise ScriptMismatch(
                f"turn {self._turn_index + 1}, step {number}: the model was asked for {asked}"
                f" but the step is {describe_step(step)}"
            )
        self._step_index += 1
        return number, step

    async def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        number, step = self._next_step(messages)
        where = f"turn {self._turn_index + 1}, step {number}"
        answered, synthesized = _answered_ids(messages, stored=self._synthesized_before)
        self._synthesized_this_turn |= synthesized
        if step.expect_input is not None:
            checks = _input_checks(
                step.expect_input, messages, info, where=where, base_dir=self._base_dir, answers=(answered, synthesized)
            )
            self._checks.extend(checks)
        self._usage = _request_usage(step)
        self._chunks = step.chunks
        answered_text_chunks.set(step.chunks)
        if step.delay:
            await asyncio.sleep(step.delay)
        if step.abort:
            request_abort(step.text, where=where)
            await asyncio.Event().wait()  # never answers: the cancellation wakes this await
        if step.error is not None:
            raise _provider_error(step.error, self.model_name)
        if step.summary is not None:
            return ModelResponse(parts=[TextPart(content=step.summary)])
        if step.empty:
            return ModelResponse(parts=[])
        parts: list[ModelResponsePart] = []
        thought = step.scripted_thought
        if thought is not None:
            parts.append(
                ThinkingPart(
                    content=thought.content,
                    id=thought.id,
                    signature=thought.signature,
                    provider_name=thought.provider_name,
                    provider_details=thought.provider_details,
                )
            )
        if step.text is not None:
            parts.append(TextPart(content=step.text))
        parts.extend(ToolCallPart(tool_name=c.name, args=c.args, tool_call_id=c.id) for c in step.tool_calls)
        if step.cut:  # answered up to the cut; `request` and `_stream` then fail as the provider layer does
            self._cut = _cut_short(parts, self._usage, model_name=self.model_name, where=where)
        return ModelResponse(parts=parts)


def _request_usage(step: ModelStep) -> RequestUsage:
    usage = step.usage
    if usage is None:
        return RequestUsage()
    return RequestUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )


def _cut_short(
    parts: list[ModelResponsePart], usage: RequestUsage, *, model_name: str, where: str
) -> IncompleteResponseError:
    """The error the provider layer raises for a response ended early, for a `cut` step's response."""
    text = "".join(part.content for part in parts if isinstance(part, TextPart))
    message = describe_incomplete_response(model_name, response_to=where, text=text)
    partial = ModelResponse(parts=list(parts), usage=usage, model_name=model_name)
    return IncompleteResponseError(message, provider=model_name, partial=partial)


# --- expect_input ---


def _answered_ids(messages: Sequence[ModelMessage], *, stored: set[str]) -> tuple[set[str], set[str]]:
    """Tool call ids with a real answer, and ids answered only by a return pydantic-ai synthesized for this request
    (`stored`: ids whose synthesized return an earlier turn already saw, answers the history holds)."""
    answered: set[str] = set()
    synthesized: set[str] = set()
    for message in messages:
        if message.kind != "request":
            continue
        for part in message.parts:
            call_id = getattr(part, "tool_call_id", None)
            if part.part_kind not in ("tool-return", "retry-prompt") or not isinstance(call_id, str):
                continue
            metadata: Any = getattr(part, "metadata", None)
            if isinstance(metadata, dict) and metadata.get(_SYNTHESIZED_RETURN_KEY):
                synthesized.add(call_id)
            else:
                answered.add(call_id)
    answered |= synthesized & stored
    return answered, synthesized - answered


def _seen_texts(messages: Sequence[ModelMessage]) -> list[str]:
    texts: list[str] = []
    for message in messages:
        for part in message.parts:
            if part.part_kind in ("system-prompt", "thinking"):
                continue
            text = _part_text(part)
            if text is not None:
                texts.append(text)
    return texts


def _input_checks(
    expect: ModelInputCheck,
    messages: Sequence[ModelMessage],
    info: AgentInfo,
    *,
    where: str,
    base_dir: Path,
    answers: tuple[set[str], set[str]],
) -> list[Check]:
    checks: list[Check] = []
    prefix = f"{where}: input"
    if expect.no_system_prompt_from_history:
        # Messages of the current run carry its run_id; a system prompt on any other message came from history.
        current_run = messages[-1].run_id if messages else None
        stale = [
            shorten(part.content)
            for message in messages
            if current_run is None or message.run_id != current_run
            for part in message.parts
            if part.part_kind == "system-prompt"
        ]
        checks.append(
            Check(name=f"{prefix}.no_system_prompt_from_history", passed=not stale, expected=[], actual=stale)
        )
    answered, synthesized = answers
    if expect.no_dangling_tool_calls:
        calls = [
            p.tool_call_id for m in messages if m.kind == "response" for p in m.parts if p.part_kind == "tool-call"
        ]
        dangling = [call_id for call_id in calls if call_id not in answered]
        detail = f"pydantic-ai closed {sorted(synthesized)} itself" if synthesized else ""
        checks.append(
            Check(
                name=f"{prefix}.no_dangling_tool_calls",
                passed=not dangling,
                expected=[],
                actual=dangling,
                detail=detail,
            )
        )
    if expect.synthesized_returns is not None:
        closed = [
            p.tool_call_id
            for m in messages
            if m.kind == "response"
            for p in m.parts
            if p.part_kind == "tool-call" and p.tool_call_id in synthesized
        ]
        checks.append(
            Check(
                name=f"{prefix}.synthesized_returns",
                passed=closed == list(expect.synthesized_returns),
                expected=list(expect.synthesized_returns),
                actual=closed,
            )
        )
    # Output tools are tools the model can call too, as `tool_calls` expectations count them.
    offered = [tool.name for tool in [*info.function_tools, *info.output_tools]]
    checks.extend(
        common_input_checks(
            expect,
            prefix=prefix,
            message_count=len(messages),
            texts=_seen_texts(messages),
            instructions=info.instructions or "",
            offered_tools=offered,
            system_prompt="\n\n".join(p.content for m in messages for p in m.parts if p.part_kind == "system-prompt"),
        )
    )
    if expect.attachments is not None:
        seen = attachments_seen(to_canonical(messages))
        checks.append(attachment_check(expect.attachments, seen, base_dir, prefix=prefix))
    return checks
