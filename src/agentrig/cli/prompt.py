"""`agentrig prompt`: one non-interactive prompt against a real model, for scripts.

The answer goes to stdout (or one JSON record with `--json`); errors are one line on stderr.
Exit codes: 0 answered, 1 the run failed (e.g. --max-iterations reached), 2 usage error (no model, bad
flag), 3 provider error after retries or timeout,
130 interrupted (the session, if any, is saved with an `[INTERRUPTED]` response). A session that cannot be saved
(the disk is full) is exit code 3, after the answer is printed; the file keeps the turns it had.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentrig.cli import provider_flags as flags
from agentrig.errors import EXIT_FAILED, AgentrigError, Interrupted, OutputWriteError, ProviderError, UsageError

if TYPE_CHECKING:
    from agentrig.runtime.one_shot import PromptOutcome

_HELP = """Send one prompt to a real model and print the answer.

TEXT is the prompt; `-` reads it from stdin. The model is --model provider:name (e.g. openai:gpt-4o,
anthropic:claude-sonnet-4-5) or $AGENTRIG_MODEL. --base-url points openai:NAME at any
OpenAI-compatible server (vLLM, Ollama, a gateway).

Exit codes: 0 answered, 1 run failed, 2 usage error, 3 provider error after retries or timeout, 130 interrupted."""


class PromptFailed(AgentrigError):
    """The run ended without an answer for a reason that is not the provider's (e.g. --max-iterations)."""

    exit_code = EXIT_FAILED


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
    """The prompt on stdin, decoded as UTF-8 whatever the locale says; newlines as text mode reads them."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream with no bytes under it (an embedding caller's): already text
        return _utf8(sys.stdin.read(), "the prompt on stdin")
    data: bytes = buffer.read()
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
        text: Annotated[str, typer.Argument(help="The prompt, or - to read it from stdin.", show_default=False)],
        model: Annotated[
            str | None,
            typer.Option("--model", "-m", help="provider:name; default $AGENTRIG_MODEL.", show_default=False),
        ] = None,
        base_url: Annotated[
            str | None,
            typer.Option("--base-url", help="OpenAI- or Anthropic-compatible server URL.", show_default=False),
        ] = None,
        system: Annotated[
            str | None, typer.Option("--system", help="Instructions for the model.", show_default=False)
        ] = None,
        agent: Annotated[
            str | None,
            typer.Option("--agent", help="Your own pydantic-ai Agent as module:attribute.", show_default=False),
        ] = None,
        session: Annotated[
            Path | None,
            typer.Option("--session", help="Continue this session file and save it back.", show_default=False),
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
            int, typer.Option("--max-iterations", min=1, help="Model requests before the run is stopped.")
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
        import asyncio

        from agentrig.runtime.history import jsonio
        from agentrig.runtime.history.redaction import redact
        from agentrig.runtime.history.run_records import PROVIDER_ERROR_KINDS
        from agentrig.runtime.models.provider_options import check_positive_seconds
        from agentrig.runtime.one_shot import PromptRequest, outcome_to_json, run_prompt

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

        try:
            outcome = asyncio.run(run_prompt(request, on_interrupt=on_interrupt))
        except KeyboardInterrupt:  # the session (if any) was saved on the way out
            if printer.printed and not printer.ends_with_newline:  # streamed text that had arrived: end its line
                sys.stdout.write("\n")
            turn = interrupted_turn[0] if interrupted_turn else None
            raise Interrupted(_interrupted_message(session, turn)) from None
        if as_json:
            sys.stdout.write(jsonio.dumps(outcome_to_json(outcome)).decode() + "\n")
        elif printer.printed:  # streamed: the text is out; end the line as a plain answer would
            sys.stdout.write("" if printer.ends_with_newline else "\n")
        elif not quiet and outcome.output is not None:
            answer = redact(outcome.output)  # a model (or a server) that echoes a key never puts it on the terminal
            sys.stdout.write(answer if answer.endswith("\n") else answer + "\n")
        # Raised, not typer.Exit: the root app runs with standalone_mode=False, where click returns an
        # Exit's code instead of exiting with it; AgentrigError is printed once and mapped to its code there.
        if outcome.session_error is not None:  # the answer is printed above; the file holds the turns it had
            raise OutputWriteError(outcome.session_error)
        if outcome.error is not None:
            if outcome.error.kind in PROVIDER_ERROR_KINDS or outcome.error.kind == "timeout":
                raise ProviderError(outcome.error.message)
            raise PromptFailed(outcome.error.message)
        if outcome.interrupted:
            raise Interrupted(_interrupted_message(session, outcome))


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
