"""`PydanticAIEngine`: one agent run through pydantic-ai's `Agent.iter`, node by node (the engine seam).

It converts the prepared canonical history to pydantic-ai messages, runs the agent with the model chain
(`RequestModel` around the scripted, real or replayed model), reports each `ModelRequestNode` and
`CallToolsNode` to the orchestrator's observer, and hands back the run's messages in canonical form.

How a run ends, and what is kept:
- normally: `all_messages()`, the output and the run's usage;
- stopped by the observer (max iterations, repeated empty responses): the messages so far, plus the request
  that was about to be sent (it is not in `all_messages()` until its node runs);
- `RunCancelled` (abort step, timeout, a cancel point): pydantic-ai's own snapshot of the cancelled run, plus
  the response a plain `during_response` cut held (`TurnControl.held_usage`);
- Ctrl-C or task cancellation: the snapshot, and the exception is re-raised after the turn is saved;
- any other exception: the messages `capture_run_messages` saw, and the error classified by
  `failures.classify` (failed runs carry no run usage, so it is summed from their responses).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import replace
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests, RunCancelled, capture_run_messages
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelRequest, ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.run import AgentRun
from pydantic_ai.usage import UsageLimits

from agentrig.errors import UsageError
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentHandle
from agentrig.runtime.engine.pydantic_ai_engine.deferred import (
    deferred_tool_results,
    last_instructions,
    misanswered_approvals,
)
from agentrig.runtime.engine.pydantic_ai_engine.held_failures import HeldFailures
from agentrig.runtime.engine.pydantic_ai_engine.run_failures import tool_failure, unscripted_model_error
from agentrig.runtime.engine.pydantic_ai_engine.session_conversion import SessionConversion
from agentrig.runtime.engine.pydantic_ai_engine.turn_control import TurnControl
from agentrig.runtime.engine.pydantic_ai_engine.ui_turn import UiTurn
from agentrig.runtime.engine.seam import Attempt, AttemptRequest, CompactedInput, TurnObserver
from agentrig.runtime.history.canonical import Message, ToolReturnPart
from agentrig.runtime.history.cleanup import drop_answers_from_failed_call
from agentrig.runtime.history.run_records import RunError
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models import chain, pydantic_ai_compat
from agentrig.runtime.models.conversion import to_canonical, to_pydantic_ai, user_prompt_to_pydantic_ai
from agentrig.runtime.models.failures import classify
from agentrig.runtime.models.request_model import InputPrefix, RequestModel
from agentrig.runtime.models.retrying import IncompleteResponseError
from agentrig.runtime.models.run_control import RunControl, open_run_control
from agentrig.runtime.models.stops import RunStopped, ScriptedToolFailure
from agentrig.runtime.models.timeouts import turn_timeout_error
from agentrig.scenarios.model import Settings

__all__ = ["PydanticAIEngine", "one_message"]


class PydanticAIEngine:
    """Runs a pydantic-ai `Agent` (a loaded `AgentHandle`) with an optional model override."""

    streams = False
    """Whether every model request is streamed (the streamed engine)."""

    def __init__(self, agent: AgentHandle, *, model: Model | None = None) -> None:
        self.agent = agent
        self.model = model
        """The model for every run; None uses the agent's own model."""
        self._awaiting_approval: set[str] = set()
        """Calls the last run deferred for approval (they must be answered under `approvals`)."""
        self._conversion = SessionConversion()
        """The session's pydantic-ai messages kept between attempts: each converts only what it adds."""
        self._turn: TurnControl | None = None
        """The running attempt's steering and cancellation point."""

    @property
    def label(self) -> str:
        return self.agent.label

    @property
    def model_name(self) -> str | None:
        if self.model is None:
            return None
        return f"{self.model.system}:{self.model.model_name}"

    async def attempt(self, request: AttemptRequest, observer: TurnObserver) -> Attempt:
        misanswered = misanswered_approvals(request.deferred_results, self._awaiting_approval)
        if misanswered is not None:
            return Attempt(messages=list(request.history), error=RunError(kind="agent_error", message=misanswered))
        model = self._run_model(request.compacted_input)
        attempt = await self._run(request, observer, model)
        # An output tool's kind, which pydantic-ai 2.78 marks itself, marked on every version.
        output_tools = model.output_tools if isinstance(model, RequestModel) else set[str]()
        attempt.messages = pydantic_ai_compat.with_release_marks(attempt.messages, output_tools=output_tools)
        return attempt

    async def _run(self, request: AttemptRequest, observer: TurnObserver, model: Model) -> Attempt:
        estimated = self._estimated()
        settings = request.settings
        control = RunControl()
        timer = None
        if settings.timeout is not None:
            timer = asyncio.get_running_loop().call_later(settings.timeout, lambda: control.stop("timeout"))
        retries: Any = self.agent.run_retries
        turn = self._turn = TurnControl(request, control, streamed=self.streams)
        held = HeldFailures()  # a failing tool call ends the run once its batch is done (`held_failures`)
        capabilities = [*self.agent.run_capabilities, *turn.capabilities()]
        if self.agent.tools_may_fail or self.agent.run_capabilities:  # else nothing can be held: no hooks to pay
            capabilities.append(held)
        options: dict[str, Any] = {"deferred_tool_results": deferred_tool_results(request.deferred_results)}
        ui = request.protocol_request
        if isinstance(ui, UiTurn):  # a UI turn: the adapter's messages, and what it adds to a run (ui_turn.py)
            history = ui.native_messages
            capabilities += ui.capabilities()
            options |= ui.run_options(self.agent)
        else:
            history = self._conversion.to_pydantic_ai(request.history)
        with capture_run_messages() as captured, open_run_control(control):
            try:
                async with self.agent.agent.iter(
                    user_prompt_to_pydantic_ai(request.prompt),
                    message_history=history,
                    model=model,
                    deps=self.agent.deps,
                    usage_limits=_usage_limits(settings),
                    cancellation_token=control.token,
                    retries=retries,
                    capabilities=capabilities,
                    **options,
                ) as run:
                    stopped, pending_request = await self._drive(run, observer, held)
                    return self._finished(run, stopped, pending_request, estimated, held)
            except RunCancelled as cancelled:
                attempt = held.unheld(self._cancelled(cancelled, control, settings, estimated, len(request.history)))
                attempt.usage = attempt.usage + turn.held_usage  # a plain `during_response` cut's response
                attempt.steering = turn.deliveries(list(cancelled.new_messages()))
                attempt.cancellation = turn.snapshot(cancelled) if control.reason == "abort" else None
                return attempt
            except (KeyboardInterrupt, asyncio.CancelledError) as external:  # Ctrl-C: save, then re-raise
                attempt = held.unheld(self._interrupted(external, list(captured), len(request.history), estimated))
                attempt.steering = turn.deliveries(list(captured)[len(request.history) :])
                return attempt
            except UsageLimitExceeded as error:  # a token limit: the response that crossed it is kept
                kept = pydantic_ai_compat.keep_over_limit_response(list(captured), _last_response(model))
                return self._failed(error, kept, len(request.history), estimated, turn)
            except Exception as error:  # every other failure is classified; the history stays intact
                return self._failed(error, list(captured), len(request.history), estimated, turn)
            finally:
                if timer is not None:
                    timer.cancel()

    def _finished(
        self,
        run: AgentRun[Any, Any],
        stopped: RunStopped | None,
        pending_request: ModelRequest | None,
        estimated: bool,
        held: HeldFailures,
    ) -> Attempt:
        """A run that ended normally, or that the observer stopped (with the request it was about to send), or that
        stopped after a batch in which a tool call failed."""
        messages = list(run.all_messages())
        first_new = len(messages) - len(run.new_messages())  # pydantic-ai's own count of the input
        usage = Usage.from_object(pydantic_ai_compat.run_usage(run), estimated=estimated)
        if held.failures:  # the batch's results, then the run's end: the failed calls' placeholders are dropped
            native = _native_dump(messages, first_new)  # pydantic-ai's own record holds no placeholder
            if pending_request is not None and (not messages or messages[-1] is not pending_request):
                messages.append(pending_request)
            return self._held_failure(messages, held, usage, native)
        if pending_request is not None and (not messages or messages[-1] is not pending_request):
            messages.append(pending_request)
        native = _native_dump(messages, first_new)
        if stopped is not None:
            return Attempt(
                messages=self._conversion.to_canonical(messages),
                usage=usage,
                error=classify(stopped),
                native_dump=native,
            )
        output = run.result.output if run.result is not None else None
        if isinstance(output, DeferredToolRequests):
            self._awaiting_approval = {call.tool_call_id for call in output.approvals}
        return Attempt(
            messages=self._conversion.to_canonical(messages),
            output=output,
            pending_deferred=isinstance(output, DeferredToolRequests),
            usage=usage,
            instructions=last_instructions(messages),
            native_dump=native,
            steering=self._turn.deliveries(messages[first_new:]) if self._turn is not None else (),
        )

    def _held_failure(self, messages: list[ModelMessage], held: HeldFailures, usage: Usage, native: bytes) -> Attempt:
        """A batch in which a tool call failed: the first failing call in call order fails the turn."""
        canonical = self._conversion.to_canonical(messages)
        failed_call_id, run_error = held.first_in_call_order(canonical)
        kept = drop_answers_from_failed_call(canonical, failed_call_id)
        return Attempt(
            messages=kept,
            # pydantic-ai counted the calls that returned (not the held ones): less those the history drops.
            usage=replace(
                usage, tool_calls=usage.tool_calls - _successes(canonical, but=held.failures.keys()) + _successes(kept)
            ),
            error=run_error,
            failed_call_id=failed_call_id,
            instructions=last_instructions(messages),
            native_dump=native,
        )

    def _interrupted(
        self, external: BaseException, captured: list[ModelMessage], input_count: int, estimated: bool
    ) -> Attempt:
        """Ctrl-C or task cancellation: pydantic-ai's snapshot of the run, saved before the exception goes on."""
        self.agent.invalidate()
        state = RunCancelled.from_cancellation(external)
        messages = list(state.all_messages()) if state is not None else captured
        return Attempt(
            messages=self._conversion.to_canonical(messages),
            usage=_responses_usage(messages[input_count:], estimated=estimated),
            interrupted=True,
            reraise=external,
            native_dump=_native_dump(messages, input_count),
        )

    def _failed(
        self,
        error: Exception,
        messages: list[ModelMessage],
        input_count: int,
        estimated: bool,
        turn: TurnControl | None = None,
    ) -> Attempt:
        """Any other failure, classified; a real tool's exception fails that call and names the tool."""
        failed_call_id = error.tool_call_id if isinstance(error, ScriptedToolFailure) else None
        run_error = classify(error)
        raised_by_tool = None if failed_call_id else tool_failure(error, _called_ids(messages))
        if raised_by_tool is not None:
            failed_call_id, run_error = raised_by_tool.tool_call_id, raised_by_tool.error
        else:
            run_error = unscripted_model_error(error) or run_error
        canonical = self._conversion.to_canonical(messages)
        usage = _responses_usage(messages[input_count:], estimated=estimated)
        if failed_call_id is not None:  # the calls after the failed one are interrupted, on every version
            kept = drop_answers_from_failed_call(canonical, failed_call_id)
            usage = replace(usage, tool_calls=usage.tool_calls - _successes(canonical) + _successes(kept))
            canonical = kept
        cut = error if isinstance(error, IncompleteResponseError) else None
        if cut is not None and not self.streams:
            # A response the provider ended early never reached pydantic-ai as a plain answer (a script's or a
            # replay's `cut`): counted here as the streamed engine counts the broken-off response it kept.
            usage = usage + Usage.from_object(cut.partial.usage, estimated=estimated)
        return Attempt(
            messages=canonical,
            usage=usage,
            error=run_error,
            interrupted=cut is not None,  # its text is kept as `[INTERRUPTED] ...`, as a stream that broke off keeps it
            partial_text=cut.partial_text if cut is not None else None,
            failed_call_id=failed_call_id,
            instructions=last_instructions(messages),
            native_dump=_native_dump(messages, input_count),
            steering=turn.deliveries(messages[input_count:]) if turn is not None else (),
        )

    async def _drive(
        self, run: AgentRun[Any, Any], observer: TurnObserver, held: HeldFailures
    ) -> tuple[RunStopped | None, ModelRequest | None]:
        """Walk the run node by node, reporting to `observer`; returns why it stopped early (or None) and the
        request that was about to be sent then (it is not in `all_messages()` until its node runs). A batch with
        a failed tool call stops the run before its results are sent (`held`)."""
        turn = self._turn
        async for node in run:
            observer.on_node()
            if Agent.is_model_request_node(node):
                if held.failures:
                    return None, node.request
                if turn is not None and turn.before_request_node(run, node.request):
                    continue  # cancelled before the request is sent: the next step raises RunCancelled
                stopped = observer.on_model_request(one_message(node.request))
                if stopped is not None:
                    return stopped, node.request
            elif Agent.is_call_tools_node(node):
                if turn is not None:
                    turn.on_response(run, node.model_response)
                stopped = observer.on_model_response(one_message(node.model_response))
                if stopped is not None:
                    return stopped, None
        return None, None

    def _run_model(self, compacted: CompactedInput | None) -> Model:
        base = self.model if self.model is not None else self.agent.agent.model
        if base is None:
            raise UsageError(f"agent {self.agent.label} has no model and none was given (pass --model)")
        if not isinstance(base, Model):
            from pydantic_ai.models import infer_model  # a model name on the user's agent, e.g. "openai:gpt-4o"

            base = infer_model(base)
        prefix = None
        if compacted is not None:
            prefix = InputPrefix(
                replaced_count=compacted.replaced_count, messages=tuple(to_pydantic_ai(compacted.messages))
            )
        return chain.for_request(base, input_prefix=prefix)

    def _estimated(self) -> bool:
        """Whether pydantic-ai estimates this model's usage (a FunctionModel or TestModel without exact usage)."""
        base = self.model if self.model is not None else self.agent.agent.model
        if getattr(base, "reports_exact_usage", False):
            return False
        return isinstance(base, FunctionModel | TestModel)

    def _cancelled(
        self, cancelled: RunCancelled, control: RunControl, settings: Settings, estimated: bool, history_length: int
    ) -> Attempt:
        self.agent.invalidate()
        error = None
        if control.reason == "timeout":  # `provider_timeout` when a request was waiting for its answer then
            error = turn_timeout_error(settings.timeout)
        messages = list(cancelled.all_messages())
        return Attempt(
            messages=self._conversion.to_canonical(list(cancelled.all_messages())),
            usage=Usage.from_object(pydantic_ai_compat.run_usage(cancelled), estimated=estimated),
            error=error,
            interrupted=True,
            partial_text=control.partial_text,
            native_dump=_native_dump(messages, history_length),
        )


def _called_ids(messages: list[ModelMessage]) -> set[str]:
    return {
        p.tool_call_id for m in messages if isinstance(m, ModelResponse) for p in m.parts if p.part_kind == "tool-call"
    }


def _successes(messages: list[Message], *, but: Collection[str] = ()) -> int:
    """How many calls of `messages` returned successfully (the calls `but` names aside)."""
    return sum(
        1
        for message in messages
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.outcome == "success" and part.tool_call_id not in but
    )


def _native_dump(messages: list[ModelMessage], start: int) -> bytes:
    """The messages from `start` on (what this run added), through the installed pydantic-ai's own serializer:
    the model names, usage, instructions and part fields it wrote, which the canonical form does not keep."""
    return ModelMessagesTypeAdapter.dump_json(messages[start:])


def one_message(message: ModelMessage) -> Message:
    converted = to_canonical([message])
    return converted[0] if converted else Message(kind=message.kind)


def _usage_limits(settings: Settings) -> UsageLimits:
    return UsageLimits(
        request_limit=settings.request_limit,
        tool_calls_limit=settings.tool_calls_limit,
        input_tokens_limit=settings.input_tokens_limit,
        output_tokens_limit=settings.output_tokens_limit,
        total_tokens_limit=settings.total_tokens_limit,
    )


def _responses_usage(messages: list[ModelMessage], *, estimated: bool) -> Usage:
    """Usage summed from responses (failed runs carry no run usage), with pydantic-ai's `tool_calls`: the tool
    calls that ran and returned successfully, counted from their returns."""
    total = Usage(estimated=estimated)
    returned = 0
    for message in messages:
        if isinstance(message, ModelResponse):
            total = total + Usage.from_object(message.usage, estimated=estimated)
        else:
            returned += sum(
                1 for part in message.parts if part.part_kind == "tool-return" and part.outcome == "success"
            )
    return total + Usage(tool_calls=returned)


def _last_response(model: Model) -> ModelResponse | None:
    """The response the run's outermost model (`RequestModel`, from `chain.for_request`) gave last."""
    return model.last_response if isinstance(model, RequestModel) else None
