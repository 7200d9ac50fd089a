"""A scenario's script as tinyagent's model: each model call answers with the next step of the current turn.

tinyagent's model hook is a stream function, `stream_fn(model, context, options) -> StreamResponse`, whose
response is a stream of `AssistantMessageEvent`s ending in `done`. A step becomes one `AssistantMessage`
(thought, text and tool calls, in that order, with the step's usage), delivered:

- plain: a single `done` event;
- streamed (`stream: true`): `start`, then per part `*_start` / `*_delta`... / `*_end` (text and thoughts in
  word chunks or the step's `chunks`, tool-call arguments in JSON fragments: `models/stream_chunks`, as the
  pydantic-ai script cuts them), then `done`.

The other step kinds are what a provider would do: `error` raises `ScriptedProviderError`, `delay` waits
(cut short when tinyagent's abort signal is set), `abort` raises `AbortRequested` without answering, and
`summary` answers only a compaction summarize request (`summarize`). Steps and mismatches are counted as
the pydantic-ai `ScriptedModel` counts them, so both engines report the same script errors.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from tinyagent.agent_types import (
    AssistantMessage,
    AssistantMessageEvent,
    Model,
    TextContent,
    ThinkingContent,
    ToolCallContent,
)

from agentrig.runtime.engine.tinyagent_engine.input_checks import input_checks
from agentrig.runtime.engine.tinyagent_engine.tools import wait_unless_aborted
from agentrig.runtime.history.canonical import Message, TextPart, ThoughtPart
from agentrig.runtime.history.run_records import Check, RunError
from agentrig.runtime.history.tinyagent_format import messages_to_tinyagent
from agentrig.runtime.models.stops import (
    ScriptExhausted,
    ScriptMismatch,
    describe_step,
    provider_error_message,
    provider_error_status,
)
from agentrig.runtime.models.stream_chunks import arguments_text, fragment_size, json_fragments, word_chunks
from agentrig.scenarios.model import ModelStep, ScriptedError, ScriptedThought

__all__ = [
    "SCRIPT_MODEL",
    "AbortRequested",
    "ScriptedProviderError",
    "TinyagentScript",
    "assistant_message",
    "object_arguments",
]

SCRIPT_MODEL = Model(provider="agentrig", id="agentrig-script", api="scripted")
"""The model a scripted tinyagent run names (the pydantic-ai script's name, `agentrig-script`)."""

_ZERO_COST = {"input": 0.0, "output": 0.0, "cache_read": 0.0, "cache_write": 0.0, "total": 0.0}


class ScriptedProviderError(Exception):
    """A scripted `error` step: the provider failure, already classified."""

    def __init__(self, error: ScriptedError) -> None:
        message = provider_error_message(error)
        status = provider_error_status(error)
        line = f"HTTP {status} from {SCRIPT_MODEL.id}: {message}" if status else f"{SCRIPT_MODEL.id}: {message}"
        super().__init__(line)
        self.error = RunError(kind=error.kind, message=line)


class AbortRequested(Exception):
    """A scripted `abort` step: the run is cancelled while the model writes `partial_text`."""

    def __init__(self, partial_text: str | None, where: str) -> None:
        super().__init__(f"{where}: aborted")
        self.partial_text = partial_text


def object_arguments(raw: str) -> dict[str, Any] | None:
    """Raw-string arguments as the canonical reader reads them: "" and a JSON object are an object."""
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _usage(step: ModelStep) -> dict[str, Any]:
    usage = step.usage
    inputs, outputs = (usage.input_tokens, usage.output_tokens) if usage else (0, 0)
    return {
        "input": inputs,
        "output": outputs,
        "cache_read": usage.cache_read_tokens if usage else 0,
        "cache_write": usage.cache_write_tokens if usage else 0,
        "total_tokens": inputs + outputs,
        "cost": dict(_ZERO_COST),
    }


def _tool_call(call_id: str, name: str, args: dict[str, Any] | str) -> ToolCallContent:
    if isinstance(args, dict):
        return ToolCallContent(id=call_id, name=name, arguments=dict(args))
    parsed = object_arguments(args)
    if parsed is not None:
        return ToolCallContent(id=call_id, name=name, arguments=parsed)
    # tinyagent keeps arguments that are no JSON object as its `partial_json` (the raw text a provider streamed).
    return ToolCallContent(id=call_id, name=name, arguments={}, partial_json=args)


def thinking_block(thought: ScriptedThought) -> dict[str, Any]:
    """tinyagent's thinking block of a scripted thought (its signature; the rest under the `agentrig` marker)."""
    part = ThoughtPart(
        content=thought.content,
        signature=thought.signature,
        provider_name=thought.provider_name,
        id=thought.id,
        provider_details=thought.provider_details,
    )
    block: dict[str, Any] = messages_to_tinyagent([Message.response(part)])[0]["content"][0]
    return block


def assistant_message(step: ModelStep, model: Model = SCRIPT_MODEL) -> AssistantMessage:
    """The `AssistantMessage` a response step stands for (an `empty` step: no content)."""
    content: list[Any] = []
    thought = step.scripted_thought
    if thought is not None:
        content.append(ThinkingContent.model_validate(thinking_block(thought)))
    if step.text is not None:
        content.append(TextContent(text=step.text))
    content.extend(_tool_call(c.id, c.name, c.args) for c in step.tool_calls)
    return AssistantMessage(
        content=content,
        stop_reason="tool_calls" if step.tool_calls else "stop",
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=_usage(step),
    )


class _Events:
    """tinyagent's `StreamResponse` for a scripted answer: its events, then its final message."""

    def __init__(self, events: list[AssistantMessageEvent], message: AssistantMessage) -> None:
        self._events = iter(events)
        self._message = message

    async def result(self) -> AssistantMessage:
        return self._message

    def __aiter__(self) -> AsyncIterator[AssistantMessageEvent]:
        return self

    async def __anext__(self) -> AssistantMessageEvent:
        try:
            return next(self._events)
        except StopIteration:
            raise StopAsyncIteration from None


def _streamed_events(message: AssistantMessage, chunks: Sequence[str] | None) -> list[AssistantMessageEvent]:
    """The events a provider streams for `message`: each part opened, filled by deltas, closed."""
    partial = message.model_copy(update={"content": []})
    events = [AssistantMessageEvent(type="start", partial=partial.model_copy(deep=True))]
    for index, block in enumerate(message.content):
        partial.content.append(block)
        snapshot = partial.model_copy(deep=True)
        if isinstance(block, ThinkingContent):
            kind, pieces = "thinking", word_chunks(block.thinking or "")
        elif isinstance(block, TextContent):
            kind, pieces = "text", list(chunks) if chunks is not None else word_chunks(block.text or "")
        elif isinstance(block, ToolCallContent):
            raw = block.partial_json if block.partial_json is not None else arguments_text(block.arguments)
            kind, pieces = "tool_call", json_fragments(raw, size=fragment_size(raw)) if raw else [""]
        else:
            continue
        events.append(AssistantMessageEvent(type=f"{kind}_start", partial=snapshot, content_index=index))  # type: ignore[arg-type]
        events.extend(
            AssistantMessageEvent(
                type=f"{kind}_delta",  # type: ignore[arg-type]
                partial=snapshot,
                content_index=index,
                delta=piece,
                tool_call=block if isinstance(block, ToolCallContent) else None,
            )
            for piece in pieces
        )
        events.append(AssistantMessageEvent(type=f"{kind}_end", partial=snapshot, content_index=index))  # type: ignore[arg-type]
    events.append(AssistantMessageEvent(type="done", message=message))
    return events


class TinyagentScript:
    """The scenario's steps, turn by turn, answering tinyagent's model calls (see the module docstring)."""

    def __init__(
        self, turns: Sequence[Sequence[ModelStep]], *, stream: bool = False, base_dir: Path | None = None
    ) -> None:
        self._turns = tuple(tuple(steps) for steps in turns)
        self._base_dir = base_dir or Path()
        self.stream = stream
        self._turn = 0
        self._step = 0
        self._checks: list[Check] = []

    def begin_turn(self, index: int) -> None:
        self._turn, self._step, self._checks = index, 0, []

    def take_checks(self) -> tuple[Check, ...]:
        return tuple(self._checks)

    def finish_turn(self) -> ScriptMismatch | None:
        """The mismatch to report when the turn ended with steps unused (the pydantic-ai script's words)."""
        left = self._steps()[self._step :]
        if not left:
            return None
        return ScriptMismatch(
            f"turn {self._turn + 1}: {len(left)} scripted step(s) left unused, from step {self._step + 1}"
            f" ({describe_step(left[0])}); the run ended before asking for them"
        )

    def _steps(self) -> tuple[ModelStep, ...]:
        return self._turns[self._turn] if self._turn < len(self._turns) else ()

    def _next(self, *, summarizing: bool) -> tuple[str, ModelStep]:
        steps = self._steps()
        where = f"turn {self._turn + 1}, step {self._step + 1}"
        if self._step >= len(steps):
            raise ScriptExhausted(f"{where}: the script has no response left (the turn has {len(steps)} step(s))")
        step = steps[self._step]
        if step.error is None and summarizing != (step.summary is not None):
            asked = "a compaction summary" if summarizing else "a normal response"
            raise ScriptMismatch(f"{where}: the model was asked for {asked} but the step is {describe_step(step)}")
        self._step += 1
        return where, step

    async def _before_answer(self, step: ModelStep, where: str, signal: asyncio.Event | None) -> None:
        if step.delay:
            await wait_unless_aborted(step.delay, signal)  # an abort shows at the next hook, as before
        if step.abort:
            raise AbortRequested(step.text, where)
        if step.error is not None:
            raise ScriptedProviderError(step.error)

    async def respond(
        self, context_messages: Sequence[Message], *, tools: Sequence[str], instructions: str, signal: Any
    ) -> _Events:
        """Answer one model call whose input is `context_messages` (canonical) with the next step."""
        where, step = self._next(summarizing=False)
        if step.expect_input is not None:
            self._checks.extend(
                input_checks(
                    step.expect_input,
                    context_messages,
                    tools,
                    instructions=instructions,
                    where=where,
                    base_dir=self._base_dir,
                )
            )
        await self._before_answer(step, where, signal)
        message = assistant_message(step)
        done = [AssistantMessageEvent(type="done", message=message)]
        return _Events(_streamed_events(message, step.chunks) if self.stream else done, message)

    async def summarize(self, transcript: str) -> str:
        """A compaction's summarize request: the next step must be a `summary` (or an `error`)."""
        where, step = self._next(summarizing=True)
        if step.expect_input is not None:
            request = [Message.request(TextPart(content=transcript))]
            self._checks.extend(
                input_checks(step.expect_input, request, (), instructions="", where=where, base_dir=self._base_dir)
            )
        await self._before_answer(step, where, None)
        return step.summary or ""
