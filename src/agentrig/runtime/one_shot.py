"""One-shot prompts (`agentrig prompt`): a real model, one request through the `RequestOrchestrator`.

The prompt runs exactly as a scenario turn does (same loop contract, same history preparation and
cleanup); with `session_path` the stored session is continued and saved back atomically, also when
the run is interrupted (then ending with the orchestrator's `[INTERRUPTED]` response).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentrig.runtime.engine.event_engine import EventingEngine
from agentrig.runtime.engine.orchestrator import RequestOrchestrator
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentHandle, agent_for_prompt, load_user_agent
from agentrig.runtime.engine.pydantic_ai_engine.plain import PydanticAIEngine
from agentrig.runtime.engine.pydantic_ai_engine.streamed import PydanticAIStreamedEngine
from agentrig.runtime.engine.seam import Engine
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.events import Event, EventLog
from agentrig.runtime.history.redaction import StreamRedactor, redact, redact_json, refresh_secrets
from agentrig.runtime.history.run_records import RunError, TurnRecord
from agentrig.runtime.history.session_lock import locked_session
from agentrig.runtime.history.sessions import (
    Session,
    load_session,
    new_session,
    save_session,
    session_from_json,
    session_to_json,
)
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.wire import message_to_json
from agentrig.runtime.models.providers import build_model, resolve_model_name
from agentrig.scenarios.model import Settings

__all__ = ["PromptOutcome", "PromptRequest", "outcome_to_json", "run_prompt"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptRequest:
    """Everything `agentrig prompt` was asked to do."""

    text: str
    """The user's prompt."""
    model: str | None = None
    """`provider:name`; None reads `AGENTRIG_MODEL`."""
    base_url: str | None = None
    """An OpenAI- or Anthropic-compatible server."""
    system: str | None = None
    """Instructions for the built-in agent (ignored with `agent`)."""
    agent: str | None = None
    """The user's own agent as `module:attribute`."""
    session_path: Path | None = None
    """A session file to continue and save back."""
    timeout: float | None = None
    """Seconds before the request is interrupted."""
    max_iterations: int = 20
    """Model requests before the run is stopped."""
    stream: bool = False
    """Run through the streaming API; `on_text` then gets the answer's text as it arrives."""
    on_text: Callable[[str], None] | None = None
    """Called with each piece of text as it streams (a newline goes between two messages' texts)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptOutcome:
    """What one prompt produced."""

    output: str | None
    """The answer text; None when the run failed before producing one."""
    messages: tuple[Message, ...]
    """The canonical messages this run added."""
    usage: Usage
    model: str
    duration_s: float
    error: RunError | None = None
    interrupted: bool = False


def _agent_handle(request: PromptRequest, settings: Settings) -> AgentHandle:
    if request.agent is None:
        return agent_for_prompt(request.system, settings)
    spec = request.agent
    search = [Path.cwd()]
    load_user_agent(spec, search_paths=search)  # fail now, with a clear line, rather than inside the run
    return AgentHandle(key=f"prompt-user:{spec}", build=lambda: load_user_agent(spec, search_paths=search), label=spec)


def _session(path: Path | None, model_name: str) -> Session:
    if path is not None and path.exists():
        return load_session(path)
    return new_session(current_model=model_name)


def _redacted(session: Session) -> Session:
    """The session with every secret in it redacted (a prompt or an answer may quote a key)."""
    return session_from_json(redact_json(session_to_json(session)))


class _TextStream:
    """Text deltas to `on_text`, with a newline between the texts of two messages (a text before tool calls, then
    the answer). Redacted over each message's joined text (`StreamRedactor`): a key a provider splits across
    deltas never reaches the terminal, at the cost of holding back the last few words until more arrives."""

    def __init__(self, on_text: Callable[[str], None]) -> None:
        self._on_text = on_text
        self._message: str | None = None
        self._shown_message: str | None = None
        self._redactor = StreamRedactor()

    def __call__(self, event: Event) -> None:
        message_id = str(event.get("message_id"))
        if event.type == "message_end" and message_id == self._message:
            self.flush()
        if event.type != "message_update" or event.get("part_kind") != "text" or not event.get("delta"):
            return
        if message_id != self._message:
            self.flush()
            self._message = message_id
        self._show(self._redactor.feed(str(event.get("delta"))))

    def flush(self) -> None:
        """Show what the redactor still holds of the current message (it has ended)."""
        self._show(self._redactor.finish())

    def _show(self, text: str) -> None:
        if not text:
            return
        if self._shown_message is not None and self._shown_message != self._message:
            self._on_text("\n")
        self._shown_message = self._message
        self._on_text(text)


async def run_prompt(
    request: PromptRequest, *, on_interrupt: Callable[[PromptOutcome], None] | None = None
) -> PromptOutcome:
    """Run the prompt; provider failures come back as `error` (kind and one redacted line), not as exceptions.

    With a session, its lock is held from loading to saving (`locked_session`: a second prompt on the same
    file fails before sending anything, and so does one whose session cannot be written). An interruption
    (Ctrl-C, task cancellation) saves the session first, passes what the turn produced to `on_interrupt`, and
    is then re-raised.
    """
    if request.session_path is None:
        return await _run_prompt(request, on_interrupt)
    with locked_session(request.session_path):
        return await _run_prompt(request, on_interrupt)


async def _run_prompt(request: PromptRequest, on_interrupt: Callable[[PromptOutcome], None] | None) -> PromptOutcome:
    started = time.perf_counter()
    refresh_secrets()
    model_name = resolve_model_name(request.model)
    model = build_model(model_name, base_url=request.base_url)
    settings = Settings(max_iterations=request.max_iterations, timeout=request.timeout)
    handle = _agent_handle(request, settings)
    engine: Engine = PydanticAIEngine(handle, model=model)
    text_stream = _TextStream(request.on_text) if request.stream and request.on_text is not None else None
    if request.stream:
        engine = PydanticAIStreamedEngine(handle, model=model)
        if text_stream is not None:
            engine = EventingEngine(engine, EventLog(listener=text_stream))
    orchestrator = RequestOrchestrator(engine, _session(request.session_path, model_name), settings=settings)
    try:
        record = await orchestrator.run(request.text)
    except (KeyboardInterrupt, asyncio.CancelledError):
        # The turn was finalized (and is saved below) before Ctrl-C was re-raised: report it, then re-raise.
        if on_interrupt is not None and orchestrator.last_record is not None:
            on_interrupt(_outcome(orchestrator.last_record, model_name, started))
        raise
    finally:
        if request.session_path is not None:
            save_session(_redacted(orchestrator.session), request.session_path)
        await model.aclose()
    return _outcome(record, model_name, started)


def _outcome(record: TurnRecord, model_name: str, started: float) -> PromptOutcome:
    error = record.error
    if error is not None:
        error = RunError(kind=error.kind, message=redact(error.message))
    return PromptOutcome(
        output=record.output,
        messages=record.new_messages,
        usage=record.usage,
        model=model_name,
        duration_s=time.perf_counter() - started,
        error=error,
        interrupted=record.interrupted,
    )


def outcome_to_json(outcome: PromptOutcome) -> dict[str, Any]:
    """The `--json` record (redacted): output, messages, usage, model, duration_s, and `error` on failure."""
    data: dict[str, Any] = {
        "output": outcome.output,
        "messages": [message_to_json(message) for message in outcome.messages],
        "usage": outcome.usage.to_json(),
        "model": outcome.model,
        "duration_s": round(outcome.duration_s, 3),
    }
    if outcome.interrupted:
        data["interrupted"] = True
    if outcome.error is not None:
        data["error"] = {"kind": outcome.error.kind, "message": outcome.error.message}
    redacted: dict[str, Any] = redact_json(data)
    return redacted
