"""`python -m agentrig` and the `agentrig` command (`[project.scripts]`): the CLI, imported under a guard.

Importing the CLI (typer and agentrig's verbs) takes the first tens of milliseconds of every command; Ctrl-C then
would end in a traceback of whatever module was being imported. So the import happens here, where Ctrl-C is
caught: one line and exit code 130, as anywhere later. Before it, Ctrl-C is made agentrig's own
(`stop_signals.guard_start_up`): recorded before it is raised, so one whose KeyboardInterrupt CPython swallowed (in
importlib's module lock callback, mostly) still ends the command where its start-up checks, here and later. This
module imports nothing but that light module before it: what comes before it (the interpreter's own start-up) is
out of any program's reach.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing it here would be one more import Ctrl-C could interrupt
if TYPE_CHECKING:
    from typing import NoReturn


def main() -> None:
    """The console entry point."""
    try:
        from agentrig.runtime.suite.processes.stop_signals import guard_start_up, start_up_signal

        guard_start_up()
        from agentrig.cli import main as run_cli
    except BaseException as error:
        if _ctrl_c_within(error):
            _interrupted_at_start_up(getattr(error, "signum", None))
        raise
    if start_up_signal() is not None:  # Ctrl-C came, and its KeyboardInterrupt was swallowed on the way
        _interrupted_at_start_up(start_up_signal())
    try:
        run_cli()
    except Exception as error:  # the CLI maps every KeyboardInterrupt itself; not one another library wrapped
        if _ctrl_c_within(error) or start_up_signal() is not None:
            _interrupted_at_start_up(start_up_signal())
        raise
    finally:
        _spare_the_exit_collections()


def _spare_the_exit_collections() -> None:
    """The command is over: what is alive now (pydantic-ai, the agent's modules, the run's results) lives until the
    process ends. The interpreter's exit runs full cyclic collections over all of it, 0.1 s of `agentrig run`'s
    1.9 s on the 200-scenario bench; frozen, they pass it by. Everything else about the exit is as it was: the
    `atexit` functions run, the streams are flushed and the modules are torn down, freeing what they hold."""
    import gc

    gc.freeze()


def _ctrl_c_within(error: BaseException) -> bool:
    """Whether `error` is a Ctrl-C, or one that another library wrapped on its way out: pydantic-core turns a
    KeyboardInterrupt raised while it builds a schema (a model class or a TypeAdapter being defined, as a module
    imports) into a SchemaError that only names it in its text."""
    seen: BaseException | None = error
    for _ in range(8):  # a chain of causes is short; a cycle must not loop for ever
        if seen is None:
            return False
        if isinstance(seen, KeyboardInterrupt):
            return True
        if type(seen).__name__ == "SchemaError" and "KeyboardInterrupt" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _interrupted_at_start_up(signum: int | None) -> NoReturn:
    """One line, and 130 (143 for SIGTERM, which a command handles as Ctrl-C)."""
    import os
    import signal
    import sys

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # it was pressed: a second press changes nothing now
    from agentrig.errors import EXIT_INTERRUPTED, EXIT_TERMINATED

    sys.stderr.write("agentrig: interrupted\n")
    sys.stderr.flush()
    # Nothing was done yet: nothing to finish, nor an unfinished import to run at exit.
    os._exit(EXIT_TERMINATED if signum == signal.SIGTERM else EXIT_INTERRUPTED)


if __name__ == "__main__":
    main()
