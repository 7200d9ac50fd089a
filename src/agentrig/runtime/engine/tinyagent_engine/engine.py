"""`TinyagentEngine`: one agent run through tinyagent's `Agent`, behind the engine seam (`seam.Engine`).

The `RequestOrchestrator` prepares the history, compacts, retries an overflow, finalizes and handles aborts,
for this engine as for pydantic-ai's; the engine only runs tinyagent and translates. Per attempt it loads the
prepared canonical history into the agent (`replace_messages`), drives it with `Agent.stream(prompt)` (or
`continue_()` after the host answered deferred calls), and hands back the agent's messages in canonical form.

tinyagent's agent events reach a consumer through a queue filled by a background task, so by the time a
consumer sees `message_end` the loop may already be running the tools. The orchestrator's decisions (stop
before a request, stop before a response's tools run) must be taken *in* the loop, so the engine reports at
tinyagent's model boundary, its `stream_fn` and the `AssistantMessageEvent` stream it returns (the source of
tinyagent's own `message_update` events), and enforces with tinyagent's hooks:

- `stream_fn`: the request (the new messages before the call) goes to `on_model_request`; a stop raises,
  which tinyagent turns into an error message the engine removes; the request limit is checked; the model
  is shown the compacted input (`AttemptRequest.compacted_input`) while the agent keeps the full history;
- the response stream: deltas go to the event log (`StreamListener`), the complete response to
  `on_model_response`; tool calls written as text are parsed (fallback parsing) before tinyagent sees them;
  an empty response is answered with the contract's intervention (a follow-up message, as pydantic-ai's
  output retry), token limits are checked;
- `before_tool_call` / `after_tool_call` / `should_stop_after_turn`: a stopped run runs no tools and asks
  no more; the tool-calls limit; malformed arguments are answered with a retry; a YAML `fail` or deferred
  call ends the loop after its batch (`tools.py`).

An abort or a timeout sets tinyagent's abort signal (`Agent.abort()`: the signal it hands the stream function
and the tools) and the run ends at the next hook; tinyagent's loop does not watch the signal itself, so a
user's tool that ignores it runs to its end first.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tinyagent import Agent
from tinyagent.agent_types import (
    AgentToolResult,
    AssistantMessage,
    TextContent,
    ToolCallContent,
    ToolLoopControl,
    ToolResultMessage,
    UserMessage,
)

from agentrig.runtime.engine.orchestrator import EMPTY_RESPONSE_RETRY
from agentrig.runtime.engine.seam import Attempt, AttemptRequest, CompactedInput, TurnObserver
from agentrig.runtime.engine.tinyagent_engine.messages import (
    agent_messages,
    canonical_messages,
    fallback_parsed,
    host_results,
    invalid_arguments_error,
    response_usage,
    token_limit_error,
)
from agentrig.runtime.engine.tinyagent_engine.output_rules import OutputRules
from agentrig.runtime.engine.tinyagent_engine.response_stream import ObservedResponse
from agentrig.runtime.engine.tinyagent_engine.script import AbortRequested, ScriptedProviderError, TinyagentScript
from agentrig.runtime.engine.tinyagent_engine.tools import DEFERRED_PLACEHOLDER, ToolOutcomes, argument_errors
from agentrig.runtime.engine.tool_rules import ToolCallCounts
from agentrig.runtime.history.canonical import Message, TextPart, ToolCallPart, ToolReturnPart, prompt_part
from agentrig.runtime.history.events import StreamListener
from agentrig.runtime.history.run_records import RunError
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models.stops import RunStopped
from agentrig.runtime.models.timeouts import turn_timeout_error
from agentrig.scenarios.model import Settings

__all__ = ["DeferredCalls", "TinyagentEngine"]


@dataclass(frozen=True, slots=True)
class DeferredCalls:
    """A run's output when it ended waiting for the host: the shape of pydantic-ai's `DeferredToolRequests`
    (`calls`, `approvals`), so a turn records it the same way on both engines."""

    calls: list[ToolCallPart]
    approvals: list[ToolCallPart] = field(default_factory=list[ToolCallPart])


class _Halt(Exception):
    """Raised in a hook to end tinyagent's loop; the engine knows why (`_Run.error` / `_Run.interrupted`)."""


def _text(message: Message) -> str:
    return "".join(p.content for p in message.parts if isinstance(p, TextPart))


def _is_empty(message: Message) -> bool:
    return not message.tool_calls and not any(isinstance(p, TextPart) and p.content.strip() for p in message.parts)


def _model_input(
    messages: list[Message], history: Sequence[Message], compacted: CompactedInput | None
) -> list[Message]:
    """What the model is sent: the compaction's summary instead of the messages it replaces. When the agent's
    own `transform_context` already changed those messages (its own compaction), the agent's input stands."""
    if compacted is None or messages[: compacted.replaced_count] != list(history[: compacted.replaced_count]):
        return messages
    head, tail = list(compacted.messages), messages[compacted.replaced_count :]
    if head and tail and head[-1].kind == "request" and tail[0].kind == "request":
        # Never two requests in a row: the summary's request and the next one are sent as one (as on pydantic-ai).
        return [*head[:-1], head[-1].with_parts([*head[-1].parts, *tail[0].parts]), *tail[1:]]
    return [*head, *tail]


async def _chain(ours: Callable[..., Any], own: Callable[..., Any] | None, *args: Any) -> Any:
    """Our hook first; the agent's own hook when ours has nothing to say."""
    answer = ours(*args)
    if answer is None and own is not None:
        answer = own(*args)
    return await answer if inspect.isawaitable(answer) else answer


class TinyagentEngine:
    """Runs a tinyagent `Agent` (the scenario's, or a user's own) with its model calls answered by the script."""

    def __init__(
        self,
        agent: Agent,
        script: TinyagentScript,
        *,
        label: str,
        outcomes: ToolOutcomes,
        output_rules: OutputRules | None = None,
    ) -> None:
        self.agent = agent
        self.script = script
        self._label = label
        self.outcomes = outcomes
        self.output_rules = output_rules or OutputRules(counts=ToolCallCounts())
        self.last_usage: Usage | None = None
        """The newest response's usage, until the event log takes it."""

    @property
    def label(self) -> str:
        return self._label

    @property
    def model_name(self) -> str | None:
        model = self.agent.state.model
        return f"{model.provider}:{model.id}" if model is not None else None

    def take_usage(self) -> Usage | None:
        """The latest response's usage, once (the event log's `message_end`)."""
        usage, self.last_usage = self.last_usage, None
        return usage

    async def attempt(self, request: AttemptRequest, observer: TurnObserver) -> Attempt:
        return await _Run(self, request, observer).run()


@dataclass(slots=True)
class _Hooks:
    stream_fn: Any
    before: Any
    after: Any
    stop: Any


class _Run:
    """One attempt: the hooks installed on the agent, and what they saw."""

    def __init__(self, engine: TinyagentEngine, request: AttemptRequest, observer: TurnObserver) -> None:
        self.engine = engine
        self.agent = engine.agent
        self.request = request
        self.settings: Settings = request.settings
        self.observer = observer
        self.listener = observer if isinstance(observer, StreamListener) else None
        self.error: RunError | None = None
        """Why the run stopped early (a guard, a limit, the script, a provider failure)."""
        self.interrupted = False
        self.partial_text: str | None = None
        self.interrupted_request = False
        """Stopped between a response and its tools' results (pydantic-ai keeps an `interrupted` request then)."""
        self.reraise: BaseException | None = None
        self.usage = Usage()
        self.tool_calls = 0
        """Calls that returned successfully in this run (pydantic-ai's `tool_calls`, checked by the limit)."""
        self.signal: asyncio.Event | None = None
        self.response: AssistantMessage | None = None
        """The newest response, as tinyagent acts on it (its tool-call blocks are the ones its tools get)."""
        self.judged: set[int] = set()
        """Responses whose batch the tool-calls limit has checked (by id of the message)."""
        self.limit_response: AssistantMessage | None = None
        """The response that went over a token limit (kept, marked `interrupted`)."""
        self.retry_queued: UserMessage | None = None
        """The empty-response intervention, while it waits in tinyagent's follow-up queue."""
        self.agent_error: str | None = None
        self.observer_stopped = False
        """The orchestrator stopped the run (a guard); such a run reports no instructions, as pydantic-ai's."""

    # --- the run ---

    async def run(self) -> Attempt:
        agent, request = self.agent, self.request
        self.engine.outcomes.begin_run()
        self.engine.output_rules.begin_run()
        self.engine.outcomes.request_abort = lambda: self.stop(None, interrupted=True)
        agent.replace_messages(agent_messages(request.history))
        if request.deferred_results:
            for result in host_results(request.history, request.deferred_results, self.engine.outcomes):
                agent.append_message(result)
        saved = _Hooks(agent.stream_fn, agent._before_tool_call, agent._after_tool_call, agent._should_stop_after_turn)  # pyright: ignore[reportPrivateUsage]
        agent.stream_fn = self.stream_fn

        async def before(*args: Any) -> Any:
            return await _chain(self.before_tool_call, saved.before, *args)

        async def after(*args: Any) -> Any:
            return await _chain(self.after_tool_call, saved.after, *args)

        async def should_stop(*args: Any) -> Any:
            return await _chain(self.should_stop, saved.stop, *args)

        agent._before_tool_call, agent._after_tool_call = before, after  # pyright: ignore[reportPrivateUsage]
        agent._should_stop_after_turn = should_stop  # pyright: ignore[reportPrivateUsage]
        timer = None
        if self.settings.timeout is not None:
            timer = asyncio.get_running_loop().call_later(self.settings.timeout, self._time_out)
        try:
            if request.prompt is not None:
                prompt = request.prompt
                # Text and images: one user message of text and image blocks (tinyagent_format writes it).
                message = (
                    prompt if isinstance(prompt, str) else agent_messages([Message.request(prompt_part(prompt))])[0]
                )
                async for event in agent.stream(message):
                    self.on_event(event)
            else:
                unsubscribe = agent.subscribe(self.on_event)
                try:
                    await agent.continue_()
                finally:
                    unsubscribe()
        except (KeyboardInterrupt, asyncio.CancelledError) as external:  # Ctrl-C: save the turn, then re-raise
            self.stop(None, interrupted=True)
            self.reraise = external
        finally:
            if timer is not None:
                timer.cancel()
            agent.stream_fn = saved.stream_fn
            agent._before_tool_call, agent._after_tool_call = saved.before, saved.after  # pyright: ignore[reportPrivateUsage]
            agent._should_stop_after_turn = saved.stop  # pyright: ignore[reportPrivateUsage]
        return self._attempt()

    def _attempt(self) -> Attempt:
        queue: list[Any] = self.agent._follow_up_queue  # pyright: ignore[reportPrivateUsage]
        if self.retry_queued is not None and any(item is self.retry_queued for item in queue):
            # The run stopped before asking again: the intervention must not reach the next request.
            self.agent._follow_up_queue = [item for item in queue if item is not self.retry_queued]  # pyright: ignore[reportPrivateUsage]
        items = list(self.agent.state.messages)
        last = items[-1] if items else None
        if isinstance(last, AssistantMessage) and last.stop_reason in ("error", "aborted"):
            items.pop()  # tinyagent's record of the exception that ended the loop: the engine says why instead
            if self.error is None and not self.interrupted:
                self.error = RunError(
                    kind="agent_error", message=last.error_message or self.agent_error or "the tinyagent run failed"
                )
        outcomes = self.engine.outcomes
        deferred_now = {
            item.tool_call_id
            for item in items
            if isinstance(item, ToolResultMessage)
            and item.tool_call_id in outcomes.deferred
            and _result_text(item) == DEFERRED_PLACEHOLDER
        }
        dropped = deferred_now | (outcomes.aborted if self.interrupted else set())
        items = [item for item in items if not (isinstance(item, ToolResultMessage) and item.tool_call_id in dropped)]
        messages = canonical_messages(items, outcomes)
        if self.limit_response is not None:  # the run stopped right after it: it is the last response
            last = max(i for i, message in enumerate(messages) if message.kind == "response")
            messages[last] = replace(messages[last], state="interrupted")
        if self.interrupted_request and messages and messages[-1].kind == "response" and messages[-1].tool_calls:
            messages.append(Message(kind="request", state="interrupted"))
        elif self.interrupted_request and len(messages) > len(self.request.history) and messages[-1].kind == "request":
            messages[-1] = replace(messages[-1], state="interrupted")  # the results kept of an interrupted batch
        added = messages[len(self.request.history) :]
        returned = sum(
            1
            for message in added
            for part in message.parts
            if isinstance(part, ToolReturnPart)
            # pydantic-ai counts a call whose tool ran and returned, a `ToolDenied` answer included
            and (part.outcome == "success" or part.tool_call_id in self.engine.outcomes.denied)
            and part.tool_call_id not in (self.request.deferred_results or {})
        )
        self.agent.replace_messages(items)
        pending = bool(deferred_now) and self.error is None and not self.interrupted
        output: Any = None
        if pending:  # what the run hands the host: the calls it waits for (pydantic-ai's DeferredToolRequests)
            calls = [call for message in messages for call in message.tool_calls if call.tool_call_id in deferred_now]
            output = DeferredCalls(calls=calls)
        if self.error is None and not self.interrupted and not pending and messages and messages[-1].kind == "response":
            output = "".join(p.content for p in messages[-1].parts if isinstance(p, TextPart))
        failed_call_id = (
            outcomes.failure[0] if outcomes.failure and self.error and self.error.kind == "tool_failed" else None
        )
        return Attempt(
            messages=messages,
            output=output,
            pending_deferred=pending,
            usage=self.usage + Usage(tool_calls=returned),
            error=self.error,
            interrupted=self.interrupted,
            partial_text=self.partial_text,
            failed_call_id=failed_call_id,
            reraise=self.reraise,
            # What pydantic-ai reports: the instructions of a run that ended by itself or failed, none of a run
            # that was cancelled or stopped by a guard.
            instructions=None if self.interrupted or self.observer_stopped else self.agent.state.system_prompt or None,
        )

    def stop(self, error: RunError | None, *, interrupted: bool = False, partial_text: str | None = None) -> None:
        """End the run at the next hook (the first reason wins); an interruption also sets tinyagent's signal."""
        if self.error is None and not self.interrupted:
            self.error, self.interrupted, self.partial_text = error, interrupted, partial_text
        if interrupted:
            self.agent.abort()  # tinyagent's signal, handed to the stream function and the tools
            if self.signal is not None:
                self.signal.set()

    @property
    def stopped(self) -> bool:
        return self.error is not None or self.interrupted

    def _time_out(self) -> None:
        self.stop(turn_timeout_error(self.settings.timeout), interrupted=True)

    def on_event(self, event: Any) -> None:
        """tinyagent's agent events, as they are consumed: the errors the engine did not raise itself."""
        if event.type == "message_end" and isinstance(event.message, AssistantMessage) and event.message.error_message:
            self.agent_error = event.message.error_message

    # --- the model boundary ---

    async def stream_fn(self, model: Any, context: Any, options: Any) -> ObservedResponse:
        self.signal = options.signal
        if self.stopped:
            raise _Halt("stopped")
        self.observer.on_node()
        messages = canonical_messages(list(context.messages), self.engine.outcomes)
        request = messages[-1] if messages and messages[-1].kind == "request" else Message(kind="request")
        stopped = self.observer.on_model_request(request)
        if stopped is not None:
            self.observer_stopped = True
            self.stop(RunError(kind=stopped.kind, message=stopped.message))
            raise _Halt(stopped.message)
        limit = self.settings.request_limit
        if limit is not None and self.usage.requests >= limit:
            self.stop(
                RunError(kind="usage_limit", message=f"The next request would exceed the request_limit of {limit}")
            )
            raise _Halt("request limit")
        tools = [tool.name for tool in context.tools or ()]
        try:
            response = await self.engine.script.respond(
                _model_input(messages, self.request.history, self.request.compacted_input),
                tools=tools,
                instructions=context.system_prompt or "",
                signal=options.signal,
            )
        except AbortRequested as abort:
            self.stop(None, interrupted=True, partial_text=abort.partial_text)
            raise _Halt("aborted") from None
        except ScriptedProviderError as failure:
            self.stop(failure.error)
            raise
        except RunStopped as stop:
            self.stop(RunError(kind=stop.kind, message=stop.message))
            raise
        if self.stopped:  # timed out while the model was answering
            raise _Halt("stopped")
        self.observer.on_node()
        return ObservedResponse(
            response, listener=self.listener, on_response=lambda m: self.response_arrived(m, messages)
        )

    def response_arrived(self, message: AssistantMessage, history: list[Message]) -> AssistantMessage:
        """The complete response, before tinyagent acts on it (see the module docstring)."""
        message = fallback_parsed(message, history)
        self.response = message
        self.engine.outcomes.next_step()
        usage = response_usage(message)
        self.usage = self.usage + usage
        self.engine.last_usage = usage
        over_limit = token_limit_error(self.usage, self.settings)
        if over_limit is not None:
            # pydantic-ai checks token limits inside the model request: the response is kept but marked
            # `interrupted`, and the run never hands it to tool execution (nor to the observer).
            self.stop(over_limit)
            self.limit_response = message
            return message
        response = canonical_messages([message], self.engine.outcomes)[0]
        stopped = self.observer.on_model_response(response)
        if stopped is not None:
            self.observer_stopped = True
            self.stop(RunError(kind=stopped.kind, message=stopped.message))
        elif _is_empty(response):
            self._ask_again(EMPTY_RESPONSE_RETRY)  # the contract's intervention
        elif not response.tool_calls and (retry := self.engine.output_rules.retry_for(_text(response))) is not None:
            self._ask_again(retry)  # an output-validator rule (output_rules.py)
        return message

    def _ask_again(self, text: str) -> None:
        """An output retry, as pydantic-ai sends one: tinyagent's loop ends at a response without tool calls, so the
        retry prompt (a user message carrying agentrig's retry marker) is queued as tinyagent's follow-up; past the
        output-retry budget the run ends instead."""
        exceeded = self.engine.output_rules.spend(self.settings.output_retries)
        if exceeded is not None:
            self.stop(exceeded)
            return
        retry = {"role": "user", "content": [{"type": "text", "text": text, "agentrig": {"retry": True}}]}
        self.retry_queued = UserMessage.model_validate(retry)
        self.agent.follow_up(self.retry_queued)

    # --- tinyagent's tool hooks ---

    def before_tool_call(self, call: ToolCallContent, tool: Any, args: Any) -> ToolLoopControl | None:
        if self.stopped:
            raise _Halt("stopped")
        message = self.response if self.response is not None and call in self.response.content else None
        limit = self.settings.tool_calls_limit
        if message is not None and id(message) not in self.judged:
            self.judged.add(id(message))
            calls = sum(1 for block in message.content if isinstance(block, ToolCallContent))
            if limit is not None and self.tool_calls + calls > limit:
                self.interrupted_request = True
                self.stop(
                    RunError(
                        kind="usage_limit",
                        message=f"The next tool call(s) would exceed the tool_calls_limit of {limit}"
                        f" (tool_calls={self.tool_calls + calls})",
                    )
                )
                raise _Halt("tool calls limit")
        invalid = invalid_arguments_error(call) or argument_errors(
            self.engine.outcomes, call.name or "", call.arguments
        )
        if invalid is not None:
            if not self.engine.outcomes.may_retry(call.name or ""):
                self._retries_exhausted()
            self.engine.outcomes.retried.add(call.id or "")
            self.engine.outcomes.retry_details[call.id or ""] = invalid
            return ToolLoopControl(
                result=AgentToolResult(content=[TextContent(text=json.dumps(invalid))]), is_error=True
            )
        return None

    def after_tool_call(self, call: ToolCallContent, result: ToolResultMessage) -> ToolLoopControl | None:
        if self.interrupted:
            # tinyagent hands the results over once the whole batch ran: the calls that completed before the
            # interruption keep their results, as pydantic-ai's cancelled run keeps them; the calls the stop caught
            # running (`outcomes.aborted`) are dropped in `_attempt` and closed as interrupted.
            self.interrupted_request = True
            return ToolLoopControl(terminate=True)
        if self.stopped:
            self.interrupted_request = True
            raise _Halt("stopped")
        outcomes = self.engine.outcomes
        if outcomes.exhausted is not None:
            self._retries_exhausted()
        if outcomes.failure is not None and outcomes.failure[0] == call.id:
            kind = "script_mismatch" if outcomes.mismatch else "tool_failed"
            self.stop(RunError(kind=kind, message=outcomes.failure[1]))
            return ToolLoopControl(terminate=True)
        if call.id in outcomes.deferred:
            return ToolLoopControl(terminate=True)
        if not result.is_error:
            self.tool_calls += 1
        return None

    def _retries_exhausted(self) -> None:
        """A tool asked for one retry more than its budget: pydantic-ai ends the run before the step's results."""
        name, budget = self.engine.outcomes.exhausted or ("", 0)
        self.interrupted_request = True
        self.stop(
            RunError(kind="unexpected_model_behavior", message=f"Tool {name!r} exceeded max retries count of {budget}")
        )
        raise _Halt("retries exhausted")

    def should_stop(self, *_: Any) -> bool | None:
        return True if self.stopped else None


def _result_text(item: ToolResultMessage) -> str:
    return "".join(block.text or "" for block in item.content if isinstance(block, TextContent))
