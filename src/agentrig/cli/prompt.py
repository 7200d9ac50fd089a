"""`agentrig prompt`: one non-interactive prompt against a real model, for scripts.

The answer goes to stdout (or one JSON record with `--json`); errors are one line on stderr.
Exit codes: 0 answered, 1 the run failed (e.g. --max-iterations reached), 2 usage error (no model, bad
flag), 3 provider error after retries or timeout,
130 interrupted (the session, if any, is saved with an `[INTERRUPTED]` response); SIGTERM is handled as Ctrl-C is,
with exit code 143. A session that cannot be saved (the disk is full) is exit code 3, after the answer is printed;
the file keeps the turns it had.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Generator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from agentrig.cli import provider_flags as flags
from agentrig.errors import (
    EXIT_FAILED,
    EXIT_TERMINATED,
    AgentrigError,
    Interrupted,
    OutputWriteError,
    ProviderError,
    UsageError,
)

if TYPE_CHECKING:
    from agentrig.runtime.one_shot import PromptOutcome

_HELP = """Send one prompt to a real model and print the answer.

TEXT is the prompt; `-` reads it from stdin. The model is --model provider:name (e.g. openai:gpt-4o,
anthropic:claude-sonnet-4-5) or $AGENTRIG_MODEL. --base-url points openai:NAME at any
OpenAI-compatible server (vLLM, Ollama, a gateway).

Exit codes: 0 answered, 1 run failed, 2 usage error, 3 provider error after retries or timeout, 130 interrupted
(143: by SIGTERM)."""


class PromptFailed(AgentrigError):
    """The run ended without an answer for a reason that is not the provider's (e.g. --max-iterations)."""

    exit_code = EXIT_FAILED


class PromptTerminated(Interrupted):
    """SIGTERM stopped the prompt: handled as Ctrl-C is, with its own exit code."""

    exit_code = EXIT_TERMINATED


class _TerminatedHere(KeyboardInterrupt):
    """SIGTERM where Ctrl-C would raise KeyboardInterrupt (`signum` tells the CLI's handler to exit with 143)."""

    signum = signal.SIGTERM


@contextlib.contextmanager
def _sigterm_as_ctrl_c() -> Generator[list[int]]:
    """SIGTERM (a CI job cancelled, `kill`, `timeout`) does what Ctrl-C does at the same moment: asyncio's handler
    cancels the run (the session is saved with its `[INTERRUPTED]` turn, a streamed line is ended), the session's
    save holds it off until the file is whole (`one_shot._sigint_deferred`), elsewhere KeyboardInterrupt. The list
    says whether it came (the exit code is then 143)."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def as_ctrl_c(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler) and handler is not signal.default_int_handler:
            handler(signum, frame)  # SIGTERM's number: the start-up's guard records it, and its exit code
        else:  # Python's own (or SIGINT ignored, as in a script's background job): stop here as Ctrl-C would
            raise _TerminatedHere

    previous = signal.signal(signal.SIGTERM, as_ctrl_c)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


class _TextPrinter:
    """Writes streamed text to stdout as it arrives, remembering the end of what it wrote."""

    def __init__(self) -> None:
        self.printed = False
        self.ends_with_newline = False

    def __call__(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()
        if text:
            self.printed = True
            self.ends_with_newline = text.endswith("\n")


def _utf8(text: str, what: str) -> str:
    """`text` from the command line, refused when it is not UTF-8: Python keeps each undecodable byte of argv as a
    lone surrogate, which no JSON file, session or request can hold (checked before any session is touched)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        byte = ord(text[error.start]) - 0xDC00 if 0xDC80 <= ord(text[error.start]) <= 0xDCFF else None
        shown = f"byte 0x{byte:02x}" if byte is not None else repr(text[error.start])
        raise UsageError(f"{what} is not UTF-8 text ({shown} at character {error.start + 1})") from None
    return text


def _read_stdin() -> str:
    """The prompt on stdin, decoded as UTF-8 whatever the locale says; newlines as text mode reads them. No more
    than `PROMPT_LIMIT` is read (`< /dev/zero` would never end)."""
    from agentrig.input_files import PROMPT_LIMIT, InputFileError, read_input_stream

    subject = "the prompt on stdin"
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream with no bytes under it (an embedding caller's): already text
        text = sys.stdin.read(PROMPT_LIMIT + 1)
        if len(text) > PROMPT_LIMIT:
            raise InputFileError(f"{subject} is over the limit of {PROMPT_LIMIT} characters")
        return _utf8(text, subject)
    data = read_input_stream(buffer, limit=PROMPT_LIMIT, subject=subject)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(
            f"the prompt on stdin is not UTF-8 text (byte 0x{data[error.start]:02x} at byte {error.start + 1})"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("prompt", help=_HELP)
    def prompt(  # pyright: ignore[reportUnusedFunction]
        text: Annotated[
            str, typer.Argument(metavar="PROMPT", help="The prompt, or - to read it from stdin.", show_default=False)
        ],
        model: Annotated[
            str | None,
            typer.Option(
                "--model", "-m", metavar="MODEL", help="provider:name; default $AGENTRIG_MODEL.", show_default=False
            ),
        ] = None,
        base_url: Annotated[
            str | None,
            typer.Option(
                "--base-url", metavar="URL", help="OpenAI- or Anthropic-compatible server URL.", show_default=False
            ),
        ] = None,
        system: Annotated[
            str | None,
            typer.Option("--system", metavar="INSTRUCTIONS", help="Instructions for the model.", show_default=False),
        ] = None,
        agent: Annotated[
            str | None,
            typer.Option(
                "--agent",
                metavar="MODULE:ATTR",
                help="Your own pydantic-ai Agent as module:attribute.",
                show_default=False,
            ),
        ] = None,
        session: Annotated[
            Path | None,
            typer.Option(
                "--session", metavar="FILE", help="Continue this session file and save it back.", show_default=False
            ),
        ] = None,
        timeout: Annotated[
            float | None,
            typer.Option(
                "--timeout",
                metavar="SECONDS",
                help="Seconds the whole prompt may take (its requests and tools) before it is interrupted.",
            ),
        ] = None,
        max_iterations: Annotated[
            int, typer.Option("--max-iterations", metavar="N", min=1, help="Model requests before the run is stopped.")
        ] = 20,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON record instead of the answer.")] = False,
        stream: Annotated[
            bool, typer.Option("--stream", help="Stream: print the answer's text as it arrives.")
        ] = False,
        quiet: Annotated[
            bool, typer.Option("--quiet", "-q", help="Print nothing on success (exit code only).")
        ] = False,
        request_timeout: flags.RequestTimeout = None,
        max_attempts: flags.MaxAttempts = None,
        max_retry_wait: flags.MaxRetryWait = None,
    ) -> None:
        with _sigterm_as_ctrl_c() as terminated:  # first: SIGTERM while pydantic-ai is imported is Ctrl-C too
            _prompt(
                text,
                model=model,
                base_url=base_url,
                system=system,
                agent=agent,
                session=session,
                timeout=timeout,
                max_iterations=max_iterations,
                as_json=as_json,
                stream=stream,
                quiet=quiet,
                terminated=terminated,
                request_timeout=request_timeout,
                max_attempts=max_attempts,
                max_retry_wait=max_retry_wait,
            )


@contextlib.contextmanager
def _warnings_said() -> Generator[None]:
    """Each distinct warning shown while the prompt runs (pydantic-ai's `DeprecatedModelWarning`, the agent's own) as
    one line on stderr when it ends, `agentrig: warning: CATEGORY: MESSAGE (MODULE)`, instead of Python's two lines
    with source text; the --json record and the session file hold them too (`one_shot`). Filters apply as ever:
    `-W error::...` makes one the prompt's error."""
    from agentrig.runtime.engine.warning_capture import capturing
    from agentrig.runtime.history.redaction import redact
    from agentrig.runtime.history.warning_records import describe_warning

    with capturing(show=False) as capture:
        try:
            yield
        finally:
            for record in capture.records():
                sys.stderr.write(redact(f"agentrig: warning: {describe_warning(record.to_json())}") + "\n")
            sys.stderr.flush()


@_warnings_said()
def _prompt(
    text: str,
    *,
    model: str | None,
    base_url: str | None,
    system: str | None,
    agent: str | None,
    session: Path | None,
    timeout: float | None,
    max_iterations: int,
    as_json: bool,
    stream: bool,
    quiet: bool,
    terminated: list[int],
    request_timeout: float | None,
    max_attempts: int | None,
    max_retry_wait: float | None,
) -> None:
    """The command itself; `terminated` says whether SIGTERM came (`_sigterm_as_ctrl_c`)."""
    import asyncio

    from agentrig.runtime.history.redaction import redact
    from agentrig.runtime.history.run_records import PROVIDER_ERROR_KINDS
    from agentrig.runtime.models.provider_options import check_positive_seconds
    from agentrig.runtime.one_shot import PromptRequest, outcome_to_json, run_prompt
    from agentrig.runtime.runfolder import jsonio
    from agentrig.runtime.suite.processes.stop_signals import end_start_up, signals_wake_the_loop

    check_positive_seconds(timeout, "--timeout")
    provider = flags.provider_options(
        max_attempts=max_attempts, max_retry_wait=max_retry_wait, request_timeout=request_timeout
    )

    prompt_text = _read_stdin() if text == "-" else _utf8(text, "the prompt")
    system = None if system is None else _utf8(system, "--system")
    if not prompt_text.strip():
        raise UsageError("the prompt is empty" + (" (nothing on stdin)" if text == "-" else ""))
    printer = _TextPrinter()
    request = PromptRequest(
        text=prompt_text,
        model=model,
        base_url=base_url,
        system=system,
        agent=agent,
        session_path=session,
        timeout=timeout,
        provider=provider,
        max_iterations=max_iterations,
        stream=stream,
        on_text=None if as_json or quiet else printer,
    )

    interrupted_turn: list[PromptOutcome] = []

    def on_interrupt(outcome: PromptOutcome) -> None:
        interrupted_turn.append(outcome)
        if as_json:
            sys.stdout.write(jsonio.dumps(outcome_to_json(outcome)).decode() + "\n")

    async def waking_on_signals() -> PromptOutcome:
        with signals_wake_the_loop(asyncio.get_running_loop()):  # Ctrl-C whichever thread the kernel hands it to
            return await run_prompt(request, on_interrupt=on_interrupt)

    # A signal of the start-up (imports, options, stdin) ends the prompt here, also one whose KeyboardInterrupt was
    # swallowed; then Ctrl-C is asyncio's: it cancels the run (`run_prompt` stops before the turn, if it comes sooner).
    end_start_up()
    try:
        outcome = asyncio.run(waking_on_signals())
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM; the session (if any) was saved on the way out
        turn = interrupted_turn[0] if interrupted_turn else None
        if printer.printed:
            if not printer.ends_with_newline:  # streamed text that had arrived: end its line
                sys.stdout.write("\n")
        elif turn is not None and not turn.interrupted and turn.output is not None and not (as_json or quiet):
            _print_answer(redact(turn.output))  # answered and saved before the interrupt took effect: paid for
        stopped = PromptTerminated if terminated else Interrupted
        raise stopped(_interrupted_message(session, turn)) from None
    if as_json:
        sys.stdout.write(jsonio.dumps(outcome_to_json(outcome)).decode() + "\n")
    elif printer.printed:  # streamed: the text is out; end the line as a plain answer would
        sys.stdout.write("" if printer.ends_with_newline else "\n")
    elif not quiet and outcome.output is not None:
        _print_answer(redact(outcome.output))  # a model (or a server) that echoes a key never shows it here
    # Raised, not typer.Exit: the root app runs with standalone_mode=False, where click returns an
    # Exit's code instead of exiting with it; AgentrigError is printed once and mapped to its code there.
    if outcome.session_error is not None:  # the answer is printed above; the file holds the turns it had
        raise OutputWriteError(outcome.session_error)
    if outcome.error is not None:
        if outcome.error.kind in PROVIDER_ERROR_KINDS or outcome.error.kind == "timeout":
            raise ProviderError(outcome.error.message)
        raise PromptFailed(outcome.error.message)
    if outcome.interrupted:
        raise (PromptTerminated if terminated else Interrupted)(_interrupted_message(session, outcome))


def _print_answer(answer: str) -> None:
    sys.stdout.write(answer if answer.endswith("\n") else answer + "\n")


def _interrupted_message(session: Path | None, outcome: PromptOutcome | None) -> str:
    """What an interrupted prompt says of its session: saved with the turn, or as it was before."""
    if session is None:
        return "interrupted"
    if outcome is None:  # interrupted before the turn was recorded: the file was written back as it was
        return f"interrupted; {session} keeps its earlier turns"
    if outcome.session_error is not None:
        return f"interrupted; {outcome.session_error}"
    if not outcome.interrupted:  # Ctrl-C came after the answer was saved
        return f"interrupted; {session} was saved with the answer"
    return f"interrupted; {session} keeps an [INTERRUPTED] response"
