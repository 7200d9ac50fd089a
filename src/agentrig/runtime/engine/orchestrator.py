"""`RequestOrchestrator`: every agent run goes through it, in the removal contract's loop sequence.

It knows no agent framework: running the agent is the engine's job (`seam.Engine`; `PydanticAIEngine`
drives pydantic-ai, `TinyagentEngine` tinyagent), which reports each model request and response back here as
canonical messages.

    run(prompt)
      1. request_id: uuid4 hex, first 8 chars, on the runtime state
      2. runtime reset: counters, tool registry, consecutive empty responses, original query (unless set)
      3. history preparation: prune old tool outputs, cleanup loop, drop a trailing request, sanitize
         (strip system prompts, clear run_id); compaction check, at most once per request
      4. the engine runs the agent (pydantic-ai: agent.iter node by node) and reports each step here:
         counters, tool registry (register + start on the model's calls, complete / fail from the
         tool-return and retry parts that follow), thought capture, empty-response detection, the
         max-iteration guard
      5. finalize: the run's messages, sanitized, become the session history; tokens and usage updated after
      6. abort / timeout: `[INTERRUPTED]` response with the partial text, unfinished calls closed as
         interrupted, cleanup loop, cached agent invalidated
      7. errors: classified by `failures.classify`; the failed run's messages are kept, cleaned;
         `context_length` with a compactor: one forced compaction and one retry

Decisions (tested in tests/runtime/test_orchestrator.py):

- Empty responses: the intervention after the first one is a retry prompt, `EMPTY_RESPONSE_RETRY` ("Please
  return text."): pydantic-ai sends it itself (its output retry), the tinyagent engine sends the same words.
  A second consecutive empty response stops the turn with `unexpected_model_behavior`, whatever
  `output_retries` allows, so the outcome does not depend on settings.
- Unfinished tool calls are never deleted from the history: calls an abort, a timeout, a guard or an error
  left without an answer get a `ToolReturnPart(outcome='interrupted')` (the failing call of a YAML `fail`
  gets `outcome='failed'`), so the registry (cancelled / failed) and the parts agree and the history shows
  what happened. pydantic-ai does the same when it resumes such a history.
- Calls deferred to the host (`DeferredToolRequests`) stay pending in the stored history and `running` in
  the registry; the next turn resumes them with `deferred_results` and no prompt.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from agentrig.runtime.engine.compaction.controller import estimate_tokens
from agentrig.runtime.engine.compaction.model_input import compacted_input
from agentrig.runtime.engine.host_queue import HostQueue
from agentrig.runtime.engine.pydantic_ai_engine.structured_output import recorded_output
from agentrig.runtime.engine.seam import Attempt, AttemptRequest, CompactedInput, Engine, ProtocolRequest
from agentrig.runtime.history.canonical import (
    Message,
    Part,
    RetryPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    UserPrompt,
    prompt_part,
)
from agentrig.runtime.history.canonical import ToolReturnPart as CanonicalToolReturn
from agentrig.runtime.history.cleanup import (
    INTERRUPTED_TOOL_RESULT,
    answered_tool_call_id,
    close_unanswered_calls,
    common_prefix_length,
    merge_consecutive_requests,
    prepare_history,
    run_cleanup_loop,
    sanitize_history_for_resume,
    split_at_last_response,
    with_pause_marks,
)
from agentrig.runtime.history.run_records import CompactionOutcome, TurnRecord
from agentrig.runtime.history.sessions import Session
from agentrig.runtime.history.tool_registry import ToolCallRegistry
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.user_content import describe_prompt
from agentrig.runtime.models.stops import EmptyResponsesRepeated, MaxIterationsReached, RunStopped
from agentrig.scenarios.model import Settings
from agentrig.scenarios.turn_controls import CancelPoint, SteeringMessage

__all__ = [
    "EMPTY_RESPONSE_LIMIT",
    "EMPTY_RESPONSE_RETRY",
    "INTERRUPTED_MARKER",
    "INTERRUPTED_TOOL_RESULT",
    "Compactor",
    "RequestOrchestrator",
    "RuntimeState",
]

INTERRUPTED_MARKER = "[INTERRUPTED]"
"""Starts the text of the response appended when a run is aborted or times out."""

EMPTY_RESPONSE_LIMIT = 2
"""Consecutive empty model responses that stop a turn."""

EMPTY_RESPONSE_RETRY = "Please return text."
"""The intervention after an empty response: what the model is asked next (pydantic-ai's own output retry
says this; an engine whose framework does not ask again, tinyagent, sends it as a retry prompt)."""


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


def _is_empty(response: Message) -> bool:
    has_text = any(isinstance(p, TextPart) and p.content.strip() for p in response.parts)
    return not response.tool_calls and not has_text


class RequestOrchestrator:
    """Runs one agent (through its engine) over one session, request after request, keeping the loop contract."""

    def __init__(
        self,
        engine: Engine,
        session: Session,
        *,
        settings: Settings | None = None,
        compactor: Compactor | None = None,
    ) -> None:
        self.engine = engine
        self.session = session
        """The session; replaced (it is frozen) after every request with the authoritative history."""
        self.settings = settings or Settings()
        self.compactor = compactor
        self.runtime = RuntimeState()
        self.turn_index = 0
        """The index the next TurnRecord gets."""
        self._resumed_call_ids: frozenset[str] = frozenset()
        self.last_record: TurnRecord | None = None
        """The newest turn's record, also when the turn ended by re-raising Ctrl-C."""
        self.native_dumps: list[bytes | None] = []
        """Each turn's `Attempt.native_dump` (of the attempt the turn kept), in order."""
        self.host = HostQueue()
        """Host results held between continuations and steering a cancelled turn left undelivered."""

    # --- the request ---

    async def run(
        self,
        prompt: UserPrompt | None,
        *,
        deferred_results: Mapping[str, Any] | None = None,
        steering: Sequence[SteeringMessage] = (),
        cancel: CancelPoint | None = None,
        protocol_request: ProtocolRequest | None = None,
    ) -> TurnRecord:
        """One request: the user's prompt (text, or text and attachments; None to continue pending/deferred
        calls) -> its TurnRecord.

        `steering` and `cancel` are the host's actions during the run (`host_queue` keeps what carries over). A
        `protocol_request` (a UI turn) brings its own conversation: it replaces the stored history, unprepared."""
        started = time.perf_counter()
        self.runtime.reset(uuid.uuid4().hex[:8], describe_prompt(prompt))
        if deferred_results is not None and prompt is None:
            all_results = self.host.accept(deferred_results)
            if all_results is None:
                return self._held_turn(started)
            deferred_results = all_results
        carried = self.host.carried_steering()
        self._resumed_call_ids = frozenset(deferred_results or ())
        if protocol_request is not None:
            history, tail = list(protocol_request.history), []
            # The request's last message may answer calls an earlier turn left with the client (its frontend tools):
            # the run reports it as its first request, and the registry settles those calls then.
            answers = history[-1].parts if history and history[-1].kind == "request" else ()
            self._resumed_call_ids = frozenset(i for i in map(answered_tool_call_id, answers) if i is not None)
        else:
            history, tail = self._prepared_history(resume=deferred_results is not None)
        full_input = [*history, *tail]
        # The compactor judges what the model would be sent: the history plus the new prompt's request.
        next_request = [Message.request(prompt_part(prompt))] if prompt is not None else []
        compaction: CompactionOutcome | None = None
        compacted: CompactedInput | None = None
        if self.compactor is not None:
            model_input, compaction = await self.compactor.check_and_compact([*full_input, *next_request])
            compacted = compacted_input([*full_input, *next_request], model_input)
        request = AttemptRequest(
            prompt=prompt,
            history=full_input,
            compacted_input=compacted,
            deferred_results=deferred_results,
            settings=self.settings,
            steering=(*carried, *steering),
            carried_steering=len(carried),
            cancel=cancel,
            protocol_request=protocol_request,
        )
        attempt = await self.engine.attempt(request, self)
        if attempt.error is not None and attempt.error.kind == "context_length" and self.compactor is not None:
            model_input, compaction = await self.compactor.check_and_compact([*full_input, *next_request], force=True)
            if compaction.status == "compacted":  # retry once; a second overflow ends the turn with the error
                self.runtime.reset(self.runtime.request_id, describe_prompt(prompt))
                compacted = compacted_input([*full_input, *next_request], model_input)
                attempt = await self.engine.attempt(replace(request, compacted_input=compacted), self)
            _explain_overflow(attempt, compaction)
        if attempt.interrupted and len(attempt.messages) >= len(full_input):
            attempt.messages = self.host.keep_undelivered(attempt.steering, attempt.messages, len(full_input))
        record = self._finalize(prompt, full_input, attempt, compaction, started)
        self.host.after_run(self.session.messages, pending_deferred=attempt.pending_deferred)
        record = replace(record, pending_calls=self.host.pending_calls)
        self.native_dumps.append(attempt.native_dump)
        self.last_record = record
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
        if not self.settings.prepare_history:
            return list(stored), []  # `settings.prepare_history: false`: the framework's own cleanup gets it as is
        if resume:
            head, tail = split_at_last_response(stored)
            prepared = prepare_history(head, prune_keep_recent=keep, keep_pending_tool_calls=True)
            return prepared, sanitize_history_for_resume(tail)
        # pydantic-ai ends what `capture_run_messages()` holds after a tool raised with an empty request
        # (state `interrupted`, 2.38 and 2.68): it answers nothing, so look past it at the calls before it.
        while stored and stored[-1].kind == "request" and not stored[-1].parts:
            stored = stored[:-1]
        if stored and stored[-1].kind == "response" and stored[-1].tool_calls:
            # A stored history can end in a response of calls only, which nothing answered (a tool raised).
            # The cleanup loop would remove the calls and the emptied response, leaving that turn's prompt as
            # a trailing request, which is dropped: the turn would vanish. Close them as `interrupted` instead,
            # as a turn that failed here is stored.
            last = stored[-1]
            without_calls = last.with_parts([p for p in last.parts if not isinstance(p, ToolCallPart)])
            cleaned = run_cleanup_loop([*stored[:-1], without_calls])
            if cleaned and cleaned[-1].kind == "request":
                stored = close_unanswered_calls(stored)
        results = [p for p in stored[-1].parts if answered_tool_call_id(p) is not None] if stored else []
        if stored[-1:] and stored[-1].kind == "request" and results:
            head = prepare_history(stored[:-1], prune_keep_recent=keep, keep_pending_tool_calls=True)
            combined = run_cleanup_loop([*head, Message.request(*results)])
            if combined and combined[-1].kind == "request":
                return combined[:-1], combined[-1:]
            return prepare_history(combined, prune_keep_recent=None), []
        return prepare_history(stored, prune_keep_recent=keep), []

    # --- what the engine reports (seam.TurnObserver) ---

    def on_node(self) -> None:
        self.runtime.current_iteration += 1

    def on_model_request(self, request: Message) -> RunStopped | None:
        for part in request.parts:
            self._settle(part)
        if self.runtime.iteration_count >= self.settings.max_iterations:
            return MaxIterationsReached(
                f"stopped after {self.runtime.iteration_count} model requests"
                f" (settings.max_iterations = {self.settings.max_iterations})"
            )
        self.runtime.iteration_count += 1
        return None

    def on_model_response(self, response: Message) -> RunStopped | None:
        if self.runtime.iteration_count == 0:
            # A resumed run (deferred results) processes the stored response again before any request:
            # register its calls, but its thoughts were captured and its emptiness judged when it arrived.
            self._register_calls(response)
            return None
        thoughts = [p.content for p in response.parts if isinstance(p, ThoughtPart) and p.content]
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

    def _register_calls(self, response: Message) -> None:
        calls = response.tool_calls
        if calls:
            self.runtime.batch_counter += 1
        registry = self.runtime.registry
        for call in calls:
            if call.tool_call_id in registry:
                continue
            registry.register(call.tool_call_id, call.tool_name, call.args)
            registry.start(call.tool_call_id)

    def _settle(self, part: Part) -> None:
        call_id = answered_tool_call_id(part)
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
        prompt: UserPrompt | None,
        full_input: list[Message],
        attempt: Attempt,
        compaction: CompactionOutcome | None,
        started: float,
    ) -> TurnRecord:
        history = attempt.messages
        if len(history) < len(full_input):
            # The run ended (Ctrl-C, an error) before the framework held the history: while the agent was being
            # built or the run entered. What the engine has is not the session: the stored turns and the prompt are
            # kept as they were to be sent, or the save would wipe them (a file holding only `[INTERRUPTED]`).
            history = [*full_input, *([Message.request(prompt_part(prompt))] if prompt is not None else [])]
        pending_deferred = attempt.pending_deferred
        if not pending_deferred and (attempt.error is not None or attempt.interrupted):
            failure = attempt.error.message if attempt.error is not None else ""
            history = close_unanswered_calls(history, failed_call_id=attempt.failed_call_id, failure=failure)
        history = sanitize_history_for_resume(history)
        if attempt.interrupted:
            partial = (attempt.partial_text or "").strip()
            marker = INTERRUPTED_MARKER + (f" {partial}" if partial else "")
            history = [*history, Message.response(TextPart(content=marker))]
        if not pending_deferred:
            # Merge first: a resumed run keeps the stored results request and adds the host's results as a
            # request of its own; the dangling-call pass would otherwise see the deferred calls unanswered.
            history = run_cleanup_loop(merge_consecutive_requests(history))
        else:  # the pause's record, as pydantic-ai 2.78 marks it, on every engine and release (`with_pause_marks`)
            history = with_pause_marks(history)
        new_messages = tuple(history[common_prefix_length(full_input, history) :])
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
            current_model=self.session.current_model or self.engine.model_name,
        )
        self.session = replace(self.session, total_tokens=estimate_tokens(self.session.messages))
        index = self.turn_index
        self.turn_index += 1
        output = recorded_output(
            attempt.output,
            pending_deferred=pending_deferred,
            ended_normally=attempt.error is None and not attempt.interrupted,
        )
        return TurnRecord(
            index=index,
            request_id=self.runtime.request_id,
            prompt=describe_prompt(prompt),
            output=output.text,
            output_json=output.json,
            output_type=output.type_name,
            instructions=attempt.instructions,
            new_messages=new_messages,
            tool_calls=tuple(p for m in new_messages for p in m.parts if isinstance(p, ToolCallPart)),
            tool_statuses=tuple(self.runtime.registry.records()),
            usage=attempt.usage,
            error=attempt.error,
            interrupted=attempt.interrupted,
            compaction=compaction,
            steering=attempt.steering,
            cancellation=attempt.cancellation,
            duration_s=time.perf_counter() - started,
        )

    def turn_without_run(self) -> TurnRecord:
        """A turn whose request never reached the agent (a UI request its adapter refused): recorded, nothing run."""
        self.runtime.reset(uuid.uuid4().hex[:8], None)
        return self._held_turn(time.perf_counter())

    def _held_turn(self, started: float) -> TurnRecord:
        """A continuation that answered some of the pending calls: results held, the agent not run."""
        index = self.turn_index
        self.turn_index += 1
        self.native_dumps.append(None)
        record = TurnRecord(
            index=index,
            request_id=self.runtime.request_id,
            prompt=None,
            output=None,
            new_messages=(),
            tool_calls=(),
            tool_statuses=(),
            usage=Usage(),
            pending_calls=self.host.pending_calls,
            duration_s=time.perf_counter() - started,
        )
        self.last_record = record
        return record


def _explain_overflow(attempt: Attempt, compaction: CompactionOutcome) -> None:
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
