"""The second engine: a self-contained scenario run through tinyagent's own `Agent` (`agentrig run --engine tinyagent`).

The scenario's script answers through a stream function (tinyagent's model hook): each scripted step becomes
one `AssistantMessage` (thought, text and tool calls, with the step's usage). YAML tools become `AgentTool`s
whose outcomes come from the same rules as the pydantic-ai engine (`tool_rules`). The history is converted to
the canonical one by `tinyagent_format`, so its golden file, invariants and expectations are checked exactly
as for the pydantic-ai engine. Nothing here imports pydantic-ai.

Where the frameworks differ, the difference is mapped through the canonical layer when the contract allows:

- a `fail` rule: tinyagent hands the error to the model as an error result; the loop contract ends the turn
  with `tool_failed`, so the engine stops the loop after the tool results (`after_tool_call` terminate);
- a `retry` rule: tinyagent has no retry message, only an error result; the engine records which calls were
  retries and turns their failed tool returns into retry prompts, as pydantic-ai writes them.

Everything else a scenario may ask for that tinyagent cannot express the same way raises `EngineUnsupported`
naming the feature, so the scenario is reported as an error with that reason, never silently passed.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tinyagent import Agent, AgentOptions
from tinyagent.agent_types import (
    AgentTool,
    AgentToolResult,
    AssistantMessage,
    AssistantMessageEvent,
    CustomAgentMessage,
    Model,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolLoopControl,
    ToolResultMessage,
    UserMessage,
)

from agentrig.runtime.engine.session_registry import scenario_registry
from agentrig.runtime.engine.tinyagent_engine.agents import UNSUPPORTED_PREFIX, EngineUnsupported, load_tinyagent_agent
from agentrig.runtime.engine.tinyagent_engine.input_checks import input_checks
from agentrig.runtime.engine.tool_rules import ToolCallCounts, describe_args, matching_result
from agentrig.runtime.history import jsonio
from agentrig.runtime.history.canonical import Message, Part, RetryPromptPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.cleanup import answered_tool_call_id, prepare_history, run_cleanup_loop
from agentrig.runtime.history.run_records import Check, RunError, ToolCallStatusRecord, TurnRecord
from agentrig.runtime.history.sessions import Session, load_session, new_session
from agentrig.runtime.history.tinyagent_format import messages_from_tinyagent, messages_to_tinyagent
from agentrig.runtime.history.tinyagent_sessions import ZERO_COST
from agentrig.runtime.history.tool_registry import ToolCallRegistry
from agentrig.runtime.history.usage import Usage
from agentrig.scenarios.loader import LoadedScenario
from agentrig.scenarios.model import ModelStep, Scenario, ToolSpec

__all__ = ["EngineUnsupported", "TinyagentExecution", "execute_scenario_tinyagent"]

_MODEL = Model(provider="agentrig", id="scripted", api="scripted")


@dataclass(frozen=True, slots=True, kw_only=True)
class TinyagentExecution:
    """What running one scenario on tinyagent produced (the runner's `ExecutionLike`)."""

    turns: tuple[TurnRecord, ...]
    session: Session
    pydantic_ai_dump: bytes
    """No pydantic-ai here: the final history as tinyagent messages (the run directory's dump slot)."""
    scripted: bool
    registry: ToolCallRegistry


def unsupported_features(scenario: Scenario) -> list[str]:
    """What in `scenario` this engine cannot run; empty when it can run it."""
    found: list[str] = []
    if scenario.settings.compaction is not None:
        found.append("compaction settings")
    settings = scenario.settings
    limits = (
        settings.request_limit,
        settings.tool_calls_limit,
        settings.input_tokens_limit,
        settings.output_tokens_limit,
        settings.total_tokens_limit,
        settings.timeout,
    )
    if any(value is not None for value in limits):  # 0 is a limit too
        found.append("usage limits and timeouts")
    if scenario.stream:
        found.append("stream: true (streamed scripted deltas)")
    events = scenario.expect.events
    if events.order or events.counts:
        # This engine runs its own turn loop, outside the engine seam that writes events.jsonl.
        found.append("expect.events order or counts (this engine writes no event log yet)")
    for name, spec in scenario.tools.items():
        if any(result.defer for result in spec.results):
            found.append(f"tool {name!r}: deferred results")
    for index, turn in enumerate(scenario.turns):
        if turn.user is None or turn.deferred_results is not None:
            found.append(f"turn {index + 1}: a turn without a prompt (pending or deferred calls)")
        for step in turn.model:
            found.extend(f"turn {index + 1}: {feature}" for feature in _step_features(step))
    return list(dict.fromkeys(found))


def _step_features(step: ModelStep) -> list[str]:
    features: list[str] = []
    if step.empty:
        features.append("an empty model response")
    if step.abort or step.delay:
        features.append("an abort or a delay")
    if step.summary is not None:
        features.append("a compaction summary step")
    if any(isinstance(call.args, str) and _object_args(call.args) is None for call in step.tool_calls):
        features.append("tool arguments that are not a JSON object (tinyagent keeps only objects)")
    if step.text is not None and "<tool_call>" in step.text:
        features.append("fallback tool-call parsing from text")
    return features


def _object_args(raw: str) -> dict[str, Any] | None:
    """Raw-string arguments as the canonical reader reads them: "" and a JSON object are an object."""
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _arguments(args: dict[str, Any] | str) -> dict[str, Any]:
    return (_object_args(args) or {}) if isinstance(args, str) else dict(args)


def _usage_object(step: ModelStep) -> dict[str, Any]:
    usage = step.usage
    if usage is None:
        return {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "total_tokens": 0, "cost": dict(ZERO_COST)}
    return {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "cache_read": usage.cache_read_tokens,
        "cache_write": usage.cache_write_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "cost": dict(ZERO_COST),
    }


def _assistant_message(step: ModelStep) -> AssistantMessage:
    content: list[Any] = []
    if step.thought is not None:
        content.append(ThinkingContent(thinking=step.thought))
    if step.text is not None:
        content.append(TextContent(text=step.text))
    content.extend(ToolCallContent(id=c.id, name=c.name, arguments=_arguments(c.args)) for c in step.tool_calls)
    return AssistantMessage(
        content=content,
        stop_reason="tool_calls" if step.tool_calls else "stop",
        api=_MODEL.api,
        provider=_MODEL.provider,
        model=_MODEL.id,
        usage=_usage_object(step),
    )


class _Finished:
    """tinyagent's stream protocol for an answer that is complete at once: one `done` event."""

    def __init__(self, message: AssistantMessage) -> None:
        self._message = message
        self._sent = False

    async def result(self) -> AssistantMessage:
        return self._message

    def __aiter__(self) -> _Finished:
        return self

    async def __anext__(self) -> AssistantMessageEvent:
        if self._sent:
            raise StopAsyncIteration
        self._sent = True
        return AssistantMessageEvent(type="done", message=self._message)


class _Script:
    """The scripted steps of the current turn, answered one per model call; `expect_input` checks recorded."""

    def __init__(self) -> None:
        self.steps: list[ModelStep] = []
        self.used = 0
        self.turn = 0
        self.checks: list[Check] = []
        self.failed: RunError | None = None
        """The model call that failed this turn: the script ran out, or a step is a provider error."""

    def begin(self, turn: int, steps: Sequence[ModelStep]) -> None:
        self.turn, self.steps, self.used, self.checks, self.failed = turn, list(steps), 0, [], None

    async def stream(self, model: Any, context: Any, options: Any) -> _Finished:
        if self.used >= len(self.steps):
            self.failed = RunError(kind="script_exhausted", message=f"the script has no step {self.used + 1}")
            raise _ModelCallFailed(self.failed.message)
        step = self.steps[self.used]
        self.used += 1
        if step.expect_input is not None:
            received, _ = messages_from_tinyagent([m.model_dump(exclude_none=True) for m in context.messages])
            tools = [tool.name for tool in context.tools or ()]
            where = f"turn {self.turn + 1}, step {self.used}"
            instructions = context.system_prompt or ""
            self.checks.extend(input_checks(step.expect_input, received, tools, instructions=instructions, where=where))
        if step.error is not None:
            self.failed = RunError(kind=step.error.kind, message=step.error.message or f"scripted {step.error.kind}")
            raise _ModelCallFailed(self.failed.message)
        return _Finished(_assistant_message(step))


class _ModelCallFailed(Exception):
    """tinyagent turns it into an error assistant message; the engine reports it as the turn's error."""


class _ToolFailed(Exception):
    """A YAML `fail` rule: the loop contract ends the turn (`tool_failed`)."""


class _ToolRetry(Exception):
    """A YAML `retry` rule: the model is told why and may try again."""


@dataclass(slots=True)
class _TurnState:
    retried: set[str]
    returned: dict[str, Any]
    failure: str | None = None
    mismatch: str | None = None
    iterations: int = 0
    max_reached: bool = False


def _tools(specs: Mapping[str, ToolSpec], counts: ToolCallCounts, state: _TurnState) -> list[AgentTool]:
    def executor(name: str, spec: ToolSpec) -> Any:
        async def execute(tool_call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
            ordinal = counts.next_ordinal(name)
            result = matching_result(spec, args, ordinal)
            if result is None:
                state.mismatch = (
                    f"tool {name!r} call #{ordinal} with args {describe_args(args)}: no result rule matches"
                )
                raise _ToolFailed(state.mismatch)
            if result.delay:
                await asyncio.sleep(result.delay)
            if result.retry is not None:
                state.retried.add(tool_call_id)
                raise _ToolRetry(result.retry)
            if result.fail is not None:
                message = f"tool {name!r} call #{ordinal} failed: {result.fail}"
                state.failure = state.failure or message
                raise _ToolFailed(message)
            value = result.return_
            if isinstance(value, str):
                return AgentToolResult(content=[TextContent(text=value)])
            state.returned[tool_call_id] = value  # the model reads JSON text; the history keeps the value
            return AgentToolResult(content=[TextContent(text=json.dumps(value))])

        return execute

    return [
        AgentTool(
            name=name,
            description=spec.description,
            parameters=dict(spec.parameters),
            label=name,
            execute=executor(name, spec),
        )
        for name, spec in specs.items()
    ]


def _canonical(items: Sequence[Any], state: _TurnState) -> list[Message]:
    """The canonical history of tinyagent messages, mapped where the frameworks differ: retried calls' error
    results are retry prompts, and a tool's non-text return value is kept as the value (tinyagent's content is
    its JSON text)."""
    dumped = [item.model_dump(exclude_none=True) for item in items]
    messages, _ = messages_from_tinyagent(dumped)
    return [message.with_parts(_mapped(p, state) for p in message.parts) for message in messages]


def _mapped(part: Part, state: _TurnState) -> Part:
    if not isinstance(part, ToolReturnPart):
        return part
    if part.tool_call_id in state.retried and part.outcome == "failed":
        return RetryPromptPart(content=str(part.content), tool_name=part.tool_name, tool_call_id=part.tool_call_id)
    if part.tool_call_id in state.returned and part.outcome == "success":
        return replace(part, content=state.returned[part.tool_call_id])
    return part


def _turn_usage(new_items: Sequence[Any]) -> Usage:
    total = Usage()
    for item in new_items:
        if item.role == "assistant" and item.usage:
            usage = item.usage
            total = total + Usage(
                requests=1,
                input_tokens=int(usage.get("input", 0)),
                output_tokens=int(usage.get("output", 0)),
                cache_read_tokens=int(usage.get("cache_read", 0)),
                cache_write_tokens=int(usage.get("cache_write", 0)),
            )
        elif isinstance(item, ToolResultMessage):
            total = total + Usage(tool_calls=1)
    return total


def _statuses(new_items: Sequence[Any]) -> tuple[ToolCallStatusRecord, ...]:
    return tuple(
        ToolCallStatusRecord(
            tool_call_id=item.tool_call_id or "",
            tool_name=item.tool_name or "",
            status="failed" if item.is_error else "completed",
        )
        for item in new_items
        if isinstance(item, ToolResultMessage)
    )


def _initial_history(loaded: LoadedScenario) -> list[Message]:
    path = loaded.initial_history_path()
    return [] if path is None else list(load_session(path).messages)


def _prepared(history: list[Message], keep_recent: int | None) -> list[Message]:
    """Loop contract step 3 on the canonical history, as the pydantic-ai engine's orchestrator does it before a
    prompt: a trailing request holding tool results stays (the prompt joins it), the rest is prepared."""
    last = history[-1] if history else None
    results = [p for p in last.parts if answered_tool_call_id(p) is not None] if last and last.kind == "request" else []
    if results:
        head = prepare_history(history[:-1], prune_keep_recent=keep_recent, keep_pending_tool_calls=True)
        combined = run_cleanup_loop([*head, Message.request(*results)])
        if combined and combined[-1].kind == "request":
            return combined
        return prepare_history(combined, prune_keep_recent=None)
    return prepare_history(history, prune_keep_recent=keep_recent)


def _tinyagent_models(messages: Sequence[Message]) -> list[Any]:
    models: dict[str, Any] = {"user": UserMessage, "assistant": AssistantMessage, "tool_result": ToolResultMessage}
    return [
        models.get(item["role"], CustomAgentMessage).model_validate(item) for item in messages_to_tinyagent(messages)
    ]


async def execute_scenario_tinyagent(loaded: LoadedScenario, *, model: Any = None) -> TinyagentExecution:
    """Run every turn of a self-contained scripted scenario through one tinyagent `Agent`."""
    scenario = loaded.scenario
    if model is not None:
        raise EngineUnsupported("--engine tinyagent runs the scenario's script only (no --model, --record, --replay)")
    missing = unsupported_features(scenario)
    if missing:
        raise EngineUnsupported(UNSUPPORTED_PREFIX + "; ".join(missing))
    script = _Script()
    state = _TurnState(retried=set(), returned={})
    counts = ToolCallCounts()

    def after_tool_call(call: ToolCallContent, result: ToolResultMessage) -> ToolLoopControl | None:
        # The loop contract: a failed (not retried) tool ends the turn instead of asking the model again.
        return ToolLoopControl(terminate=True) if state.failure or state.mismatch else None

    def should_stop_after_turn(message: AssistantMessage, results: list[ToolResultMessage], *_: Any) -> bool:
        # The loop contract's `max_iterations`: no more model requests than that in one turn.
        state.iterations += 1
        wants_more = any(isinstance(block, ToolCallContent) for block in message.content)
        state.max_reached = wants_more and state.iterations >= scenario.settings.max_iterations
        return state.max_reached

    if scenario.agent is None:
        agent = Agent(
            AgentOptions(
                stream_fn=script.stream, after_tool_call=after_tool_call, should_stop_after_turn=should_stop_after_turn
            )
        )
        agent.set_model(_MODEL)
        agent.set_system_prompt(loaded.system_prompt_text() or "")
        agent.set_tools(_tools(scenario.tools, counts, state))
        return await _run_turns(loaded, agent, script, state)

        # The user's agent keeps its prompt, tools and hooks (its tools' errors go back to the model, as
    # tinyagent does); only its model calls are answered by the script, and max_iterations is enforced.
    agent = load_tinyagent_agent(loaded)
    # tinyagent takes the stop hook only in its constructor; an agent the user built is patched in place.
    own_stream, own_stop = agent.stream_fn, agent._should_stop_after_turn  # pyright: ignore[reportPrivateUsage]
    agent.stream_fn = script.stream
    agent._should_stop_after_turn = _chained(own_stop, should_stop_after_turn)  # pyright: ignore[reportPrivateUsage]
    if agent.state.model is None:
        agent.set_model(_MODEL)
    try:
        return await _run_turns(loaded, agent, script, state)
    finally:  # the user's agent is theirs again
        agent.stream_fn, agent._should_stop_after_turn = own_stream, own_stop  # pyright: ignore[reportPrivateUsage]


def _chained(own: Any, ours: Any) -> Any:
    """tinyagent's should_stop_after_turn: the engine's limit, then the agent's own hook."""

    async def stop(*args: Any) -> bool:
        if ours(*args):
            return True
        if own is None:
            return False
        answer = own(*args)
        return bool(await answer) if inspect.isawaitable(answer) else bool(answer)

    return stop


async def _run_turns(loaded: LoadedScenario, agent: Agent, script: _Script, state: _TurnState) -> TinyagentExecution:
    scenario = loaded.scenario
    history = _initial_history(loaded)
    session = new_session(working_directory=loaded.base_dir)
    turns: list[TurnRecord] = []
    for index, turn in enumerate(scenario.turns):
        started = time.perf_counter()
        keep = scenario.settings.prune_keep_recent_tool_outputs
        agent.replace_messages(_tinyagent_models(_prepared(history, keep)))
        before = len(agent.state.messages)
        script.begin(index, turn.model)
        state.iterations, state.max_reached = 0, False
        state.failure = state.mismatch = None
        await agent.prompt(turn.user or "")
        new_items = list(agent.state.messages[before:])
        error = _turn_error(agent, new_items, state, script)
        if script.failed is not None:
            # tinyagent appends an empty error message: the failed call answered nothing, as with pydantic-ai.
            agent.replace_messages(list(agent.state.messages[:-1]))
            new_items = new_items[:-1]
        history = _canonical(agent.state.messages, state)
        before_history = _canonical(agent.state.messages[:before], state)  # the prepared input
        new_messages = tuple(history[len(before_history) :])
        last = new_items[-1] if new_items else None
        output = _text(last) if error is None and last is not None and last.role == "assistant" else None
        turns.append(
            TurnRecord(
                index=index,
                request_id=uuid.uuid4().hex[:8],
                prompt=turn.user,
                output=output,
                new_messages=new_messages,
                tool_calls=tuple(p for m in new_messages for p in m.parts if isinstance(p, ToolCallPart)),
                tool_statuses=_statuses(new_items),
                usage=_turn_usage(new_items),
                error=error,
                model_input_checks=tuple(script.checks),
                duration_s=time.perf_counter() - started,
            )
        )
    history = _canonical(agent.state.messages, state)
    total = Usage.total(turn.usage for turn in turns)
    session = replace(session, messages=tuple(history), session_total_usage=total)
    return TinyagentExecution(
        turns=tuple(turns),
        session=session,
        pydantic_ai_dump=jsonio.dumps(messages_to_tinyagent(history), pretty=True),
        scripted=True,
        registry=scenario_registry(turns, history),
    )


def _text(message: Any) -> str:
    return "".join(block.text or "" for block in message.content if isinstance(block, TextContent))


def _turn_error(agent: Agent, new_items: Sequence[Any], state: _TurnState, script: _Script) -> RunError | None:
    if script.failed is not None:
        return script.failed
    last = new_items[-1] if new_items else None
    if last is not None and last.role == "assistant" and last.stop_reason == "error":
        return RunError(kind="agent_error", message=last.error_message or agent.state.error or "the model call failed")
    if state.mismatch is not None:
        return RunError(kind="script_mismatch", message=state.mismatch)
    if state.failure is not None:
        return RunError(kind="tool_failed", message=state.failure)
    if state.max_reached:
        return RunError(kind="max_iterations", message=f"stopped after {state.iterations} model requests")
    if script.used < len(script.steps):
        return RunError(
            kind="script_mismatch", message=f"{len(script.steps) - script.used} scripted step(s) left unused"
        )
    return None
