"""Ctrl-C and SIGTERM at the edge of the CLI: one line and exit code 130 (143 for SIGTERM), whatever was running.

Two things between a KeyboardInterrupt and that code are not agentrig's:

- typer turns a KeyboardInterrupt into exit code 130 without a word (and a SIGTERM that a command handles as
  Ctrl-C would lose its 143): each command's KeyboardInterrupt is carried past typer as a `CommandInterrupted`
  (`passing_interrupts`), which `agentrig.cli.main` prints and maps; one in typer's own parsing, before the command
  started (`command_started`), is still said;
- CPython (3.8+) ends a process that let a KeyboardInterrupt escape by SIGINT, after its exit handlers, so a shell
  sees the interruption. It also counts one that merely passed through `exec()` of a string on its way to the
  `except` that caught it (dataclasses and pydantic build classes so while a module imports): a process that
  printed its line and chose exit code 130 then ends by SIGINT instead. `keep_exit_code` makes the chosen code
  the one the process ends with.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import sys
from collections.abc import Callable
from typing import Any

from agentrig.errors import EXIT_INTERRUPTED, EXIT_TERMINATED

__all__ = ["CommandInterrupted", "command_started", "keep_exit_code", "passing_interrupts", "watch_exit_code"]


class CommandInterrupted(Exception):
    """A KeyboardInterrupt (Ctrl-C, or SIGTERM where a command handles it as Ctrl-C) that left a command."""

    def __init__(self, interrupt: KeyboardInterrupt) -> None:
        super().__init__("interrupted")
        self.interrupt = interrupt


def passing_interrupts(callback: Callable[..., Any]) -> Callable[..., Any]:
    """`callback` (a command), its KeyboardInterrupt raised as `CommandInterrupted`."""

    @functools.wraps(callback)  # typer reads the parameters through __wrapped__
    def command(*args: Any, **kwargs: Any) -> Any:
        _started.append(True)
        try:
            return callback(*args, **kwargs)
        except KeyboardInterrupt as interrupt:
            raise CommandInterrupted(interrupt) from None

    return command


_started: list[bool] = []
_chosen: list[object] = []


def command_started() -> bool:
    """Whether a command (wrapped by `passing_interrupts`) started in this process."""
    return bool(_started)


def keep_exit_code(code: object) -> None:
    """End the process with `code` when it is an interruption's (130, 143), however CPython would end it. Called
    once the code is chosen; `watch_exit_code` must have been called when the process started."""
    _chosen.append(code)


def watch_exit_code() -> None:
    """Register the exit handler of `keep_exit_code` now, before any library registers its own: handlers run last
    registered first, so every other one still runs before it."""
    atexit.register(_exit_with_the_chosen_code)


def _exit_with_the_chosen_code() -> None:
    code = _chosen[-1] if _chosen else None
    if not isinstance(code, int) or code not in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed or gone: nothing more can be said
            stream.flush()
    os._exit(code)
