"""One-shot prompts (`agentrig prompt`): a real model, one request through the `RequestOrchestrator`.

The prompt runs exactly as a scenario turn does (same loop contract, same history preparation and
cleanup); with `session_path` the stored session is continued and saved back atomically, also when
the run is interrupted (then ending with the orchestrator's `[INTERRUPTED]` response).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Any

from agentrig.errors import HistoryFormatError, OutputWriteError
from agentrig.runtime.engine.event_engine import EventingEngine
from agentrig.runtime.engine.orchestrator import RequestOrchestrator
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import (
    AgentHandle,
    agent_for_prompt,
    load_user_agent,
    resolve_user_agent,
)
from agentrig.runtime.engine.pydantic_ai_engine.plain import PydanticAIEngine
from agentrig.runtime.engine.pydantic_ai_engine.streamed import PydanticAIStreamedEngine
from agentrig.runtime.engine.seam import Engine
from agentrig.runtime.engine.warning_capture import capture_here, current_warnings
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.events import Event, EventLog
from agentrig.runtime.history.provider_attempts import ProviderAttempts
from agentrig.runtime.history.redaction import StreamRedactor, redact, redact_json, refresh_secrets
from agentrig.runtime.history.run_records import RunError, TurnRecord
from agentrig.runtime.history.sessions import (
    Session,
    new_session,
    refuse_to_continue,
    save_session,
    session_from_json,
    session_to_json,
)
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.warning_records import WarningRecord, merge_warnings
from agentrig.runtime.history.wire import message_to_json
from agentrig.runtime.models.attempt_log import AttemptLog, recording_attempts
from agentrig.runtime.models.provider_options import ProviderOptions
from agentrig.runtime.models.providers import build_model, resolve_model_name
from agentrig.runtime.models.timeouts import timeout_flag
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.runfolder.session_lock import SessionLock, locked_session
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
    """Seconds before the turn is interrupted (`--timeout`)."""
    provider: ProviderOptions = field(default_factory=ProviderOptions)
    """Retries and the request timeout (`--max-attempts`, `--max-retry-wait`, `--request-timeout`)."""
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
    session_error: str | None = None
    """Why the session could not be saved (the disk is full); the file then holds what it held before."""
    attempts: ProviderAttempts | None = None
    """How the requests went on the wire: attempts, retries, waits."""
    warnings: tuple[WarningRecord, ...] = ()
    """The warnings shown while the prompt ran (`engine/warning_capture`), one per distinct warning, counted."""


def _agent_handle(request: PromptRequest, settings: Settings) -> AgentHandle:
    search = [Path.cwd()]
    if request.agent is not None:
        resolve_user_agent(request.agent, search_paths=search)  # the module imported: the start-up's last step
    _unless_stopped_at_start_up()
    if request.agent is None:
        return agent_for_prompt(request.system, settings)
    spec = request.agent
    load_user_agent(spec, search_paths=search)  # fail now, with a clear line, rather than inside the run
    return AgentHandle(key=f"prompt-user:{spec}", build=lambda: load_user_agent(spec, search_paths=search), label=spec)


def _unless_stopped_at_start_up() -> None:
    """Ctrl-C or SIGTERM while the prompt started in its event loop (the session read, the provider's SDK and the
    agent's module imported): asyncio's handler has asked the run to stop (it cancels its task; SIGTERM is sent to
    it too, `cli/prompt`). Stop here, before the turn begins: nothing was sent, and the session is left as it was,
    rather than saved with an `[INTERRUPTED]` turn at the turn's first wait."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def _session(path: Path | None, model_name: str) -> Session:
    """The session to continue. A file `save_session` would refuse to overwrite (a canonical history, a bare list
    of messages, a session of another version) is refused now, before the request is sent and paid for."""
    if path is None or not path.exists() or path.stat().st_size == 0:  # empty: made to lock it (`session_lock`)
        return new_session(current_model=model_name)
    data = jsonio.read_json_file(path)
    try:
        refuse_to_continue(data, path, doing="--session would overwrite")
    except HistoryFormatError as error:
        raise HistoryFormatError(f"{error.reason}; nothing was sent", path=path) from None
    return session_from_json(data, source=path)


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

    The warnings shown meanwhile are the outcome's and the session's (`warning_capture`: the capture `agentrig
    prompt` opened, or one of this call's own that also lets Python show them).
    """
    with capture_here():
        if request.session_path is None:
            return await _run_prompt(request, on_interrupt, None)
        with locked_session(request.session_path) as lock:
            return await _run_prompt(request, on_interrupt, lock)


async def _run_prompt(
    request: PromptRequest, on_interrupt: Callable[[PromptOutcome], None] | None, lock: SessionLock | None
) -> PromptOutcome:
    started = time.perf_counter()
    refresh_secrets()
    model_name = resolve_model_name(request.model)
    session = _session(request.session_path, model_name)  # before anything is sent: a file it cannot save back to
    model = build_model(model_name, base_url=request.base_url, options=request.provider)
    settings = Settings(max_iterations=request.max_iterations, timeout=request.timeout)
    handle = _agent_handle(request, settings)
    engine: Engine = PydanticAIEngine(handle, model=model)
    text_stream = _TextStream(request.on_text) if request.stream and request.on_text is not None else None
    if request.stream:
        engine = PydanticAIStreamedEngine(handle, model=model)
        if text_stream is not None:
            engine = EventingEngine(engine, EventLog(listener=text_stream))
    orchestrator = RequestOrchestrator(engine, session, settings=settings)
    save_failure: str | None = None
    log = AttemptLog()
    try:
        try:
            with recording_attempts(log), timeout_flag("--timeout" if request.timeout is not None else None):
                record = await orchestrator.run(request.text)
        finally:
            save_failure = _save(orchestrator.session, request.session_path, lock)  # first: nothing may come between
            if text_stream is not None:
                text_stream.flush()
            await model.aclose()
    except (KeyboardInterrupt, asyncio.CancelledError):
        # The turn was finalized and saved before Ctrl-C was re-raised (or Ctrl-C came after the save, while
        # closing): report it, then re-raise.
        if on_interrupt is not None and orchestrator.last_record is not None:
            on_interrupt(_outcome(orchestrator.last_record, model_name, started, save_failure, log))
        raise
    return _outcome(record, model_name, started, save_failure, log)


def _save(session: Session, path: Path | None, lock: SessionLock | None) -> str | None:
    """Save the session back, Ctrl-C held off until the file is whole; the one-line reason when the disk is full
    (the file then holds what it held before: `save_session` writes atomically), or when another program removed
    or replaced the session meanwhile (saved over, what it wrote would be lost)."""
    if path is None:
        return None
    if lock is not None and not lock.still_held():
        return (
            f"{path}: removed or replaced by another program while this prompt ran; not saved over it, so it lacks "
            "this turn"
        )
    session = replace(session, warnings=merge_warnings(session.warnings, current_warnings()))  # its prompts' warnings
    with _sigint_deferred():
        try:
            save_session(_redacted(session), path, over_empty=True)  # empty: locked as a new session
        except OutputWriteError as error:
            return f"{path}: cannot save the session ({error.reason}); it keeps the turns it had, not this one"
    return None


@contextlib.contextmanager
def _sigint_deferred() -> Generator[None]:
    """Ctrl-C during the block takes effect when it ends, as it would have then (asyncio's handler cancels the run,
    a second one raises KeyboardInterrupt): the session is written whole, with the turn, before the interrupt."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is None:
        yield
        return
    received: list[int] = []

    def remember(number: int, frame: FrameType | None) -> None:
        received.append(number)

    signal.signal(signal.SIGINT, remember)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            signal.raise_signal(signal.SIGINT)


def _outcome(
    record: TurnRecord, model_name: str, started: float, save_failure: str | None, log: AttemptLog
) -> PromptOutcome:
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
        session_error=save_failure,
        attempts=log.snapshot(),
        warnings=current_warnings(),
    )


def outcome_to_json(outcome: PromptOutcome) -> dict[str, Any]:
    """The `--json` record (redacted): output, messages, usage, model, duration_s, warnings, and `error` on
    failure."""
    data: dict[str, Any] = {
        "output": outcome.output,
        "messages": [message_to_json(message) for message in outcome.messages],
        "usage": outcome.usage.to_json(),
        "model": outcome.model,
        "duration_s": round(outcome.duration_s, 3),
    }
    if outcome.attempts is not None:
        data["attempts"] = outcome.attempts.to_json()
    data["warnings"] = [record.to_json() for record in outcome.warnings]
    if outcome.interrupted:
        data["interrupted"] = True
    if outcome.error is not None:
        data["error"] = {"kind": outcome.error.kind, "message": outcome.error.message}
    redacted: dict[str, Any] = redact_json(data)
    return redacted
