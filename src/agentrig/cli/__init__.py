"""The command line: argv -> calls into runtime/scenarios -> rendering -> exit codes.

One root Typer app, one module per verb; `main` parses with an app of the named verb alone. Verb modules
import only typer and the standard library at module level and import the engine inside the command, so
`agentrig --help` never pays for pydantic-ai. Domain errors (`agentrig.errors.AgentrigError`) are caught once,
here, and printed as one line on stderr with their documented exit code; `--debug` shows the traceback instead.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from types import ModuleType
from typing import Annotated

# Plain help and error text: rich would double `agentrig --help` start-up (it is imported by typer at
# import time unless this is set), and CI logs gain nothing from boxes. `TYPER_USE_RICH=1` opts back in.
os.environ.setdefault("TYPER_USE_RICH", "0")

import typer  # must follow the environment default above

from agentrig import __version__
from agentrig.cli import (
    check,
    convert,
    diff,
    help_names,
    interrupts,
    matrix,
    merge,
    prompt,
    report,
    run,
    scaffold,
    schema,
    validate,
)
from agentrig.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, AgentrigError

EXIT_CODES_HELP = (
    "Exit codes: 0 passed, 1 a scenario or check failed, 2 usage or file error, "
    "3 provider or infrastructure error, 130 interrupted (143: run stopped by SIGTERM)."
)

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentrig {__version__}")
        raise typer.Exit()


def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks instead of one-line errors.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    _state["debug"] = debug or bool(os.environ.get("AGENTRIG_DEBUG"))


def _new_app() -> typer.Typer:
    root = typer.Typer(
        name="agentrig",
        help="Run scripted pydantic-ai agent scenarios, check histories, and prove compatibility across versions."
        f"\n\n{EXIT_CODES_HELP}",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    root.callback()(_root)
    return root


_VERBS = {
    "run": run,
    "validate": validate,
    "schema": schema,
    "check": check,
    "convert": convert,
    "diff": diff,
    "prompt": prompt,
    "matrix": matrix,
    "merge": merge,
    "report": report,
    "scaffold": scaffold,
}


def _register(module: ModuleType, root: typer.Typer) -> None:
    """Add `module`'s verb to `root`, its interrupts carried past typer to `main` (`interrupts`), its help naming its
    arguments as its options are named (`help_names`)."""
    already = len(root.registered_commands)
    module.register(root)
    for info in root.registered_commands[already:]:
        if info.callback is not None:
            info.callback = interrupts.passing_interrupts(info.callback)
        info.cls = help_names.named_command(info.cls)


app = _new_app()
"""Every verb (what `agentrig --help` lists, and what tests and the generated CLI reference use)."""
for _module in _VERBS.values():
    _register(_module, app)


def _app_for(args: list[str]) -> typer.Typer:
    """The app that parses `args`: when they name a verb, an app of that verb alone. Typer converts every
    command's parameters (a pydantic adapter each) before it parses anything: 20 ms for the nine verbs, about 1 ms
    for one, paid by every `agentrig` process."""
    verb = next((arg for arg in args if not arg.startswith("-")), None)
    module = _VERBS.get(verb or "")
    if module is None:  # no verb (`agentrig --help`) or an unknown one: the whole app answers, as it always has
        return app
    single = _new_app()
    _register(module, single)
    return single


EXIT_GRACE_S = 5.0
"""How long the process may take to exit once the command is done, when threads it does not own are still
running (Python waits for them at exit): past that it exits anyway, with the command's code."""


def _exit_despite_threads(code: object) -> None:
    """A user's agent may leave a thread that never ends (Python joins every non-daemon thread at exit). The
    reports are written and the last line printed: exit with the command's code within `EXIT_GRACE_S`, however
    such a thread behaves (a daemon timer; an exit that does not hang finishes first and it never fires)."""
    current = threading.current_thread()
    if not any(t is not current and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return
    real_exit = os._exit

    def exit_anyway() -> None:
        time.sleep(EXIT_GRACE_S)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # closed or gone: nothing more can be said
                stream.flush()
        real_exit(code if isinstance(code, int) else (0 if code is None else 1))

    threading.Thread(target=exit_anyway, name="agentrig-exit", daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the app, turning domain errors into one line and an exit code.

    As the process's entry point (`argv` None), the process exits even if threads of a user's agent never end."""
    code: object = 0
    if argv is None:
        interrupts.watch_exit_code()
    try:
        _main(argv)
    except SystemExit as exit_:
        code = exit_.code
        raise
    finally:
        if argv is None:
            interrupts.keep_exit_code(code)
            _exit_despite_threads(code)


def _main(argv: list[str] | None) -> None:
    # pydantic-ai >= 2.39 prints a first-run banner on stderr in terminals; agentrig's stderr is for its own lines.
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    try:
        # Outside standalone mode Typer *returns* the code of `typer.Exit` instead of exiting.
        args = sys.argv[1:] if argv is None else argv
        exit_code = _app_for(args)(args=args, standalone_mode=False)
        if exit_code == EXIT_INTERRUPTED and not interrupts.command_started():  # Ctrl-C as typer parsed: it is mute
            typer.echo("agentrig: interrupted", err=True)
        if isinstance(exit_code, int) and exit_code != 0:
            sys.exit(exit_code)
    except AgentrigError as error:
        if _state["debug"]:
            raise
        typer.echo(f"agentrig: error: {error.message}", err=True)
        sys.exit(error.exit_code)
    # Ctrl-C, or SIGTERM (stop_signals.RunInterrupted, prompt's), raised in a command or around it.
    except (KeyboardInterrupt, interrupts.CommandInterrupted) as stopped:
        interrupt = stopped.interrupt if isinstance(stopped, interrupts.CommandInterrupted) else stopped
        typer.echo("agentrig: interrupted", err=True)
        sys.exit(EXIT_TERMINATED if getattr(interrupt, "signum", None) == signal.SIGTERM else EXIT_INTERRUPTED)
    except typer.Exit as exit_:
        sys.exit(exit_.exit_code)
    except typer.Abort:
        typer.echo("agentrig: aborted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except typer.TyperException as error:  # bad flags and arguments (click's usage errors) arrive here
        # The vendored click exceptions carry `show()` (usage line + message); the public base class does not.
        show = getattr(error, "show", None)
        if callable(show):
            show()
        else:
            typer.echo(f"agentrig: error: {error}", err=True)
        sys.exit(int(getattr(error, "exit_code", 2)))  # 2 for usage errors, matching the documented code
