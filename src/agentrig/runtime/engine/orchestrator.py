"""`RequestOrchestrator`: every agent run goes through it, in the removal contract's loop sequence.

    run(prompt)
      1. request_id: uuid4 hex, first 8 chars, on the runtime state
      2. runtime reset: counters, tool registry, consecutive empty responses, original query (unless set)
      3. history preparation: prune old tool outputs, cleanup loop, drop a trailing request, sanitize
         (strip system prompts, clear run_id); compaction check, at most once per request
      4. agent.iter(...) node by node: counters, tool registry (register + start on the model's calls,
         complete / fail from the tool-return and retry parts that follow), thought capture,
         empty-response detection, the max-iteration guard
      5. finalize: the run's messages, sanitized, become the session history; tokens and usage updated after
      6. abort / timeout: `[INTERRUPTED]` response with the partial text, unfinished calls closed as
         interrupted, cleanup loop, cached agent invalidated
      7. errors: classified by `failures.classify`; the failed run's messages are kept, cleaned;
         `context_length` with a compactor: one forced compaction and one retry

Decisions (tested in tests/runtime/test_orchestrator.py):

- Empty responses: pydantic-ai itself answers the first empty response with an output retry ("Please
  return text."); that retry is the intervention. A second consecutive empty response stops the turn with
  `unexpected_model_behavior`, whatever `output_retries` allows, so the outcome does not depend on settings.
- Unfinished tool calls are never deleted from the history: calls an abort, a timeout, a guard or an error
  left without an answer get a `ToolReturnPart(outcome='interrupted')` (the failing call of a YAML `fail`
  gets `outcome='failed'`), so the registry (cancelled / failed) and the parts agree and the history shows
  what happened. pydantic-ai does the same when it resumes such a history.
- Calls deferred to the host (`DeferredToolRequests`) stay pending in the stored history and `running` in
  the registry; the next turn resumes them with `deferred_results` and no prompt.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, RunCancelled, capture_run_messages
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ThinkingPart, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import UsageLimits

from agentrig.errors import UsageError
from agentrig.runtime.engine.agent_loading import AgentHandle
from agentrig.runtime.engine.compaction import estimate_tokens
from agentrig.runtime.history.canonical import (
    Message,
    Part,
    RetryPromptPart,
    TextPart,
)
from agentrig.runtime.history.canonical import ToolCallPart as CanonicalToolCall
from agentrig.runtime.history.canonical import ToolReturnPart as CanonicalToolReturn
from agentrig.runtime.history.cleanup import (
    merge_consecutive_requests,
    prepare_history,
    run_cleanup_loop,
    sanitize_history_for_resume,
)
from agentrig.runtime.history.run_records import CompactionOutcome, RunError, TurnRecord
from agentrig.runtime.history.sessions import Session
from agentrig.runtime.history.tool_registry import ToolCallRegistry
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.models.conversion import to_canonical, to_pydantic_ai
from agentrig.runtime.models.failures import (
    EmptyResponsesRepeated,
    MaxIterationsReached,
    RunStopped,
    ScriptedToolFailure,
    classify,
)
from agentrig.runtime.models.request_model import InputPrefix, RequestModel
from agentrig.runtime.models.run_control import RunControl, open_run_control
from agentrig.scenarios.model import Settings

__all__ = [
    "EMPTY_RESPONSE_LIMIT",
    "INTERRUPTED_MARKER",
    "INTERRUPTED_TOOL_RESULT",
    "Compactor",
    "RequestOrchestrator",
    "RuntimeState",
]

INTERRUPTED_MARKER = "[INTERRUPTED]"
"""Starts the text of the response appended when a run is aborted or times out."""

INTERRUPTED_TOOL_RESULT = "The tool call was interrupted before a result was produced."
"""The content of the return given to a call the run left unanswered (pydantic-ai's own wording)."""

EMPTY_RESPONSE_LIMIT = 2
"""Consecutive empty model responses that stop a turn."""


class Compactor(Protocol):
    """Decides before each request whether to compact the model's input (`compaction.CompactionController`)."""

    async def check_and_compact(
        self, history: Sequence[Message], *, force: bool = False
    ) -> tuple[list[Message], CompactionOutcome]:
        """The model input for the stored `history`, and what was done."""
        ...


@dataclass(slots=True, kw_only=True)
class RuntimeState:
    """Per-request runtime state (the contract's `session.runtime`)."""

    request_id: str = ""
    """8 hex chars, new for every request."""
    current_iteration: int = 0
    """The node being processed, counted from 1."""
    iteration_count: int = 0
    """Model requests made in this request."""
    batch_counter: int = 0
    """Tool-call batches (responses with tool calls) in this request."""
    consecutive_empty_responses: int = 0
    original_query: str | None = None
    """The first prompt of the session's task; kept across requests once set."""
    registry: ToolCallRegistry = field(default_factory=ToolCallRegistry)
    """Tool call statuses of this request."""

    def reset(self, request_id: str, prompt: str | None) -> None:
        """The contract's runtime reset at the start of a request."""
        self.request_id = request_id
        self.current_iteration = 0
        self.iteration_count = 0
        self.batch_counter = 0
        self.consecutive_empty_responses = 0
        self.registry.clear()
        if self.original_query is None:
            self.original_query = prompt


@dataclass(slots=True, kw_only=True)
class _Attempt:
    """What one agent run produced."""

    messages: list[ModelMessage]
    output: Any = None
    usage: Usage = field(default_factory=Usage)
    error: RunError | None = None
    interrupted: bool = False
    partial_text: str | None = None
    failed_call_id: str | None = None
    reraise: BaseException | None = None


def _usage_limits(settings: Settings) -> UsageLimits:
    return UsageLimits(
        request_limit=settings.request_limit,
        tool_calls_limit=settings.tool_calls_limit,
        input_tokens_limit=settings.input_tokens_limit,
        output_tokens_limit=settings.output_tokens_limit,
        total_tokens_limit=settings.total_tokens_limit,
    )


def _is_empty(response: ModelResponse) -> bool:
    has_call = any(isinstance(p, ToolCallPart) for p in response.parts)
    return not has_call and not (response.text or "").strip()  # `text` is None without text parts (2.68)


def _responses_usage(messages: Sequence[ModelMessage], *, estimated: bool) -> Usage:
    """Usage summed from responses (failed runs carry no run usage)."""
    total = Usage(estimated=estimated)
    for message in messages:
        if isinstance(message, ModelResponse):
            total = total + Usage.from_object(message.usage, estimated=estimated)
    return total


def _answer_of(part: Part) -> str | None:
    if isinstance(part, CanonicalToolReturn | RetryPromptPart):
        return part.tool_call_id
    return None


def _close_unanswered_calls(
    history: Sequence[Message], *, failed_call_id: str | None = None, failure: str = ""
) -> list[Message]:
    """Give every call that no later request answers an `interrupted` return (`failed` for `failed_call_id`),
    in the request right after its response (a new request when none follows)."""
    answered = {call_id for m in history if m.kind == "request" for p in m.parts if (call_id := _answer_of(p))}
    result: list[Message] = []
    index = 0
    while index < len(history):
        message = history[index]
        result.append(message)
        index += 1
        missing = (
            [c for c in message.tool_calls if c.tool_call_id not in answered] if message.kind == "response" else []
        )
        if not missing:
            continue
        closing: list[Part] = [
            CanonicalToolReturn(
                tool_call_id=c.tool_call_id,
                tool_name=c.tool_name,
                content=failure if c.tool_call_id == failed_call_id else INTERRUPTED_TOOL_RESULT,
                outcome="failed" if c.tool_call_id == failed_call_id else "interrupted",
            )
            for c in missing
        ]
        if index < len(history) and history[index].kind == "request":
            following = history[index]
            result.append(following.with_parts([*following.parts, *closing]))
            index += 1
        else:
            result.append(Message.request(*closing))
    return result


def _common_prefix_length(a: Sequence[Message], b: Sequence[Message]) -> int:
    count = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        count += 1
    return count


def _split_for_resume(history: Sequence[Message]) -> tuple[list[Message], list[Message]]:
    """For a deferred resume: everything up to the last response (the pending calls), and what follows it
    (the request with the results of calls that did run), which pydantic-ai needs unchanged."""
    for index in range(len(history) - 1, -1, -1):
        if history[index].kind == "response":
            return list(history[: index + 1]), list(history[index + 1 :])
    return list(history), []


def _input_prefix(full: Sequence[Message], model_input: Sequence[Message]) -> InputPrefix | None:
    """The model-input-only replacement a compaction asks for: `model_input` shares a tail with `full`."""
    if list(model_input) == list(full):
        return None
    shared = 0
    while (
        shared < min(len(full), len(model_input))
        and full[len(full) - 1 - shared] == model_input[len(model_input) - 1 - shared]
    ):
        shared += 1
    replaced = len(full) - shared
    head = list(model_input[: len(model_input) - shared])
    return InputPrefix(replaced_count=replaced, messages=tuple(to_pydantic_ai(head)))


class RequestOrchestrator:
    """Runs one agent over one session, request after request, keeping the loop contract."""

    def __init__(
        self,
        agent: AgentHandle,
        session: Session,
        *,
        settings: Settings | None = None,
        model: Model | None = None,
        compactor: Compactor | None = None,
    ) -> None:
        self.agent = agent
        self.session = session
        """The session; replaced (it is frozen) after every request with the authoritative history."""
        self.settings = settings or Settings()
        self.model = model
        """The model for every run; None uses the agent's own model."""
        self.compactor = compactor
        self.runtime = RuntimeState()
        self.turn_index = 0
        """The index the next TurnRecord gets."""
        self._resumed_call_ids: frozenset[str] = frozenset()

    # --- the request ---

    async def run(self, prompt: str | None, *, deferred_results: Mapping[str, Any] | None = None) -> TurnRecord:
        """One request: the user's prompt (or None to continue pending/deferred calls) -> its TurnRecord."""
        started = time.perf_counter()
        self.runtime.reset(uuid.uuid4().hex[:8], prompt)
        self._resumed_call_ids = frozenset(deferred_results or ())
        history, tail = self._prepared_history(resume=deferred_results is not None)
        full_input = [*history, *tail]
        # The compactor judges what the model would be sent: the history plus the new prompt's request.
        next_request = [Message.request(TextPart(content=prompt))] if prompt is not None else []
        compaction: CompactionOutcome | None = None
        prefix: InputPrefix | None = None
        if self.compactor is not None:
            model_input, compaction = await self.compactor.check_and_compact([*full_input, *next_request])
            prefix = _input_prefix([*full_input, *next_request], model_input)
        attempt = await self._attempt(prompt, full_input, prefix, deferred_results)
        if attempt.error is not None and attempt.error.kind == "context_length" and self.compactor is not None:
            model_input, compaction = await self.compactor.check_and_compact([*full_input, *next_request], force=True)
            if compaction.status == "compacted":  # retry once; a second overflow ends the turn with the error
                self.runtime.reset(self.runtime.request_id, prompt)
                prefix = _input_prefix([*full_input, *next_request], model_input)
                attempt = await self._attempt(prompt, full_input, prefix, deferred_results)
            _explain_overflow(attempt, compaction)
        record = self._finalize(prompt, full_input, attempt, compaction, started)
        if attempt.reraise is not None:
            raise attempt.reraise
        return record

    def _prepared_history(self, *, resume: bool) -> tuple[list[Message], list[Message]]:
        """Loop step 3. Returns the prepared history and a tail pydantic-ai must receive unchanged after it.

        A stored history can end with a request holding tool results (a turn that failed or was stopped
        after its tools ran, or deferred calls next to calls that ran). Dropping that request, as
        `prepare_history` does with any trailing request, would leave the calls it answers dangling and the
        cleanup loop would then erase the whole turn. So the results are kept as the tail: for a deferred
        resume pydantic-ai needs them as they are; before a new prompt pydantic-ai merges the prompt into
        that request (it merges consecutive requests, 2.38 and 2.68), so no two requests follow each other.
        """
        keep = self.settings.prune_keep_recent_tool_outputs
        stored = self.session.messages
        if resume:
            head, tail = _split_for_resume(stored)
            prepared = prepare_history(head, prune_keep_recent=keep, keep_pending_tool_calls=True)
            return prepared, sanitize_history_for_resume(tail)
        results = [p for p in stored[-1].parts if _answer_of(p) is not None] if stored else []
        if stored[-1:] and stored[-1].kind == "request" and results:
            head = prepare_history(stored[:-1], prune_keep_recent=keep, keep_pending_tool_calls=True)
            combined = run_cleanup_loop([*head, Message.request(*results)])
            if combined and combined[-1].kind == "request":
                return combined[:-1], combined[-1:]
            return prepare_history(combined, prune_keep_recent=None), []
        return prepare_history(stored, prune_keep_recent=keep), []

    def _run_model(self, prefix: InputPrefix | None) -> Model:
        base = self.model if self.model is not None else self.agent.agent.model
        if base is None:
            raise UsageError(f"agent {self.agent.label} has no model and none was given (pass --model)")
        if not isinstance(base, Model):
            from pydantic_ai.models import infer_model  # a model name on the user's agent, e.g. "openai:gpt-4o"

            base = infer_model(base)
        return RequestModel(base, input_prefix=prefix)

    def _estimated(self) -> bool:
        base = self.model if self.model is not None else self.agent.agent.model
        if getattr(base, "reports_exact_usage", False):
            return False
        return isinstance(base, FunctionModel | TestModel)

    async def _attempt(
        self,
        prompt: str | None,
        full_input: list[Message],
        prefix: InputPrefix | None,
        deferred_results: Mapping[str, Any] | None,
    ) -> _Attempt:
        agent = self.agent.agent
        model = self._run_model(prefix)
        estimated = self._estimated()
        control = RunControl()
        loop = asyncio.get_running_loop()
        timer = None
        if self.settings.timeout is not None:
            timer = loop.call_later(self.settings.timeout, lambda: control.stop("timeout"))
        deferred = DeferredToolResults(calls=dict(deferred_results)) if deferred_results is not None else None
        stopped: RunStopped | None = None
        with capture_run_messages() as captured, open_run_control(control):
            try:
                async with agent.iter(
                    prompt,
                    message_history=to_pydantic_ai(full_input),
                    model=model,
                    deps=self.agent.deps,
                    usage_limits=_usage_limits(self.settings),
                    deferred_tool_results=deferred,
                    cancellation_token=control.token,
                ) as run:
                    pending_request: ModelRequest | None = None
                    async for node in run:
                        self.runtime.current_iteration += 1
                        if Agent.is_model_request_node(node):
                            self._settle_from_request(node.request)
                            if self.runtime.iteration_count >= self.settings.max_iterations:
                                pending_request = node.request  # not in all_messages() until the node runs
                                stopped = MaxIterationsReached(
                                    f"stopped after {self.runtime.iteration_count} model requests"
                                    f" (settings.max_iterations = {self.settings.max_iterations})"
                                )
                                break
                            self.runtime.iteration_count += 1
                        elif Agent.is_call_tools_node(node):
                            stopped = self._observe_response(node.model_response)
                            if stopped is not None:
                                break
                    messages = list(run.all_messages())
                    if pending_request is not None and (not messages or messages[-1] is not pending_request):
                        messages.append(pending_request)
                    run_total = Usage.from_object(pydantic_ai_compat.run_usage(run), estimated=estimated)
                    if stopped is not None:
                        return _Attempt(messages=messages, usage=run_total, error=classify(stopped))
                    result = run.result
                    return _Attempt(
                        messages=messages, output=result.output if result is not None else None, usage=run_total
                    )
            except RunCancelled as cancelled:
                return self._cancelled(cancelled, control, estimated)
            except (KeyboardInterrupt, asyncio.CancelledError) as external:  # Ctrl-C: save, then re-raise
                self.agent.invalidate()
                state = RunCancelled.from_cancellation(external)
                messages = list(state.all_messages()) if state is not None else list(captured)
                return _Attempt(
                    messages=messages,
                    usage=_responses_usage(messages[len(full_input) :], estimated=estimated),
                    interrupted=True,
                    reraise=external,
                )
            except Exception as error:  # every other failure is classified; the history stays intact
                messages = list(captured)
                failed_call = error.tool_call_id if isinstance(error, ScriptedToolFailure) else None
                return _Attempt(
                    messages=messages,
                    usage=_responses_usage(messages[len(full_input) :], estimated=estimated),
                    error=classify(error),
                    failed_call_id=failed_call,
                )
            finally:
                if timer is not None:
                    timer.cancel()

    def _cancelled(self, cancelled: RunCancelled, control: RunControl, estimated: bool) -> _Attempt:
        self.agent.invalidate()
        error = None
        if control.reason == "timeout":
            error = RunError(kind="timeout", message=f"the turn exceeded settings.timeout = {self.settings.timeout}s")
        return _Attempt(
            messages=list(cancelled.all_messages()),
            usage=Usage.from_object(pydantic_ai_compat.run_usage(cancelled), estimated=estimated),
            error=error,
            interrupted=True,
            partial_text=control.partial_text,
        )

    # --- node processing ---

    def _observe_response(self, response: ModelResponse) -> RunStopped | None:
        if self.runtime.iteration_count == 0:
            # A resumed run (deferred results) processes the stored response again before any request:
            # register its calls, but its thoughts were captured and its emptiness judged when it arrived.
            self._register_calls(response)
            return None
        thoughts = [p.content for p in response.parts if isinstance(p, ThinkingPart) and p.content]
        if thoughts:
            self.session = replace(self.session, thoughts=(*self.session.thoughts, *thoughts))
        if _is_empty(response):
            self.runtime.consecutive_empty_responses += 1
            if self.runtime.consecutive_empty_responses >= EMPTY_RESPONSE_LIMIT:
                return EmptyResponsesRepeated(
                    f"the model returned {self.runtime.consecutive_empty_responses} empty responses in a row"
                )
            return None
        self.runtime.consecutive_empty_responses = 0
        self._register_calls(response)
        return None

    def _register_calls(self, response: ModelResponse) -> None:
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if calls:
            self.runtime.batch_counter += 1
        registry = self.runtime.registry
        for call in calls:
            if call.tool_call_id in registry:
                continue
            registry.register(call.tool_call_id, call.tool_name, _registry_args(call))
            registry.start(call.tool_call_id)

    def _settle_from_request(self, request: ModelRequest) -> None:
        for message in to_canonical([request]):
            for part in message.parts:
                self._settle(part)

    def _settle(self, part: Part) -> None:
        call_id = _answer_of(part)
        if call_id is None:
            return
        registry = self.runtime.registry
        name = getattr(part, "tool_name", None) or ""
        if call_id not in registry:
            if call_id not in self._resumed_call_ids:
                return  # an answer from an earlier request (e.g. results merged into this request's prompt)
            registry.register(call_id, name, {})  # a call deferred by an earlier request, resumed now
            registry.start(call_id)
        if registry.status(call_id) not in ("registered", "running"):
            return
        if isinstance(part, RetryPromptPart):
            registry.fail(call_id, part.content if isinstance(part.content, str) else "invalid arguments")
        elif isinstance(part, CanonicalToolReturn):
            if part.outcome == "success":
                if registry.status(call_id) == "registered":
                    registry.start(call_id)
                registry.complete(call_id)
            elif part.outcome == "interrupted":
                registry.cancel(call_id, "interrupted")
            else:
                registry.fail(call_id, str(part.content))

    # --- finalize ---

    def _finalize(
        self,
        prompt: str | None,
        full_input: list[Message],
        attempt: _Attempt,
        compaction: CompactionOutcome | None,
        started: float,
    ) -> TurnRecord:
        history = to_canonical(attempt.messages)
        pending_deferred = isinstance(attempt.output, DeferredToolRequests)
        if not pending_deferred and (attempt.error is not None or attempt.interrupted):
            failure = attempt.error.message if attempt.error is not None else ""
            history = _close_unanswered_calls(history, failed_call_id=attempt.failed_call_id, failure=failure)
        history = sanitize_history_for_resume(history)
        if attempt.interrupted:
            partial = (attempt.partial_text or "").strip()
            marker = INTERRUPTED_MARKER + (f" {partial}" if partial else "")
            history = [*history, Message.response(TextPart(content=marker))]
        if not pending_deferred:
            # Merge first: a resumed run keeps the stored results request and adds the host's results as a
            # request of its own; the dangling-call pass would otherwise see the deferred calls unanswered.
            history = run_cleanup_loop(merge_consecutive_requests(history))
        new_messages = tuple(history[_common_prefix_length(full_input, history) :])
        for message in new_messages:
            for part in message.parts:
                self._settle(part)
        for record in self.runtime.registry.records():
            if record.status in ("registered", "running") and not pending_deferred:
                self.runtime.registry.cancel(record.tool_call_id, "the run ended first")
        total_usage = self.session.session_total_usage + attempt.usage
        self.session = replace(
            self.session,
            messages=tuple(history),
            session_total_usage=total_usage,
            current_model=self.session.current_model or _model_name(self.model),
        )
        self.session = replace(self.session, total_tokens=estimate_tokens(self.session.messages))
        index = self.turn_index
        self.turn_index += 1
        output = attempt.output if isinstance(attempt.output, str) else None
        if attempt.output is not None and not isinstance(attempt.output, str | DeferredToolRequests):
            output = str(attempt.output)
        return TurnRecord(
            index=index,
            request_id=self.runtime.request_id,
            prompt=prompt,
            output=output,
            new_messages=new_messages,
            tool_calls=tuple(p for m in new_messages for p in m.parts if isinstance(p, CanonicalToolCall)),
            tool_statuses=tuple(self.runtime.registry.records()),
            usage=attempt.usage,
            error=attempt.error,
            interrupted=attempt.interrupted,
            compaction=compaction,
            duration_s=time.perf_counter() - started,
        )


def _explain_overflow(attempt: _Attempt, compaction: CompactionOutcome) -> None:
    """Say in a remaining `context_length` error what the forced compaction did, so the user can tell a
    retried overflow from one that could not be compacted."""
    error = attempt.error
    if error is None or error.kind != "context_length":
        return
    if compaction.status == "compacted":
        note = f"still too long after compacting {compaction.compacted_messages} messages and one retry"
    else:
        note = f"not retried: compaction {compaction.status} ({compaction.reason})"
    attempt.error = replace(error, message=f"{error.message} ({note})")


def _registry_args(call: ToolCallPart) -> dict[str, Any] | str:
    args = call.args
    if isinstance(args, dict):
        return dict(args)
    return args if args is not None else {}


def _model_name(model: Model | None) -> str | None:
    if model is None:
        return None
    return f"{model.system}:{model.model_name}"
