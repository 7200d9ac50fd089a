"""Ctrl-C (SIGINT) and SIGTERM during `agentrig run`: both stop the run the same way, with its reports written.

While a run holds them (`StopSignals`, in the main thread), a signal raises `RunInterrupted` (a
KeyboardInterrupt, so everything that handles Ctrl-C handles SIGTERM alike) only where the run waits for its
scenarios (`waiting()`): never in the middle of recording a result or writing a file. A signal that arrives
elsewhere is held and raised at the next wait. The first signal decides the exit code (130 for SIGINT, 143 for
SIGTERM); the run then stops its scenarios and writes its reports, and a second signal stops waiting for a
scenario that does not wind down (`sequential`). Before the run writes into `--out`, a signal raises at once:
there is nothing to protect yet. A long write checks between its pieces (`raise_if_stopped`: the reports, one
scenario at a time), so a signal held there ends the run within a moment, not when the write is done.

CPython runs a signal's handler in the main thread only, and the kernel may hand a signal sent to the process to
any of its threads (a lane's, an executor's: it does when the main thread has a signal pending already). The C
handler then only sets a flag, and a main thread asleep in a lock's wait or an event loop's `select` never learns of
the signal until something else wakes it: a run whose scenario hangs, or a prompt whose request is in flight, went
on as if Ctrl-C had not been pressed. So the run's waits last `WAIT_SLICE_S` at most (`wait_slice`), and a loop
the main thread runs is woken by the signal itself (`signals_wake_the_loop`).

Standard library only: workers and the CLI import it before anything heavy.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Generator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from asyncio import AbstractEventLoop

__all__ = [
    "WAIT_SLICE_S",
    "RunInterrupted",
    "StopSignals",
    "raise_if_stopped",
    "signals_wake_the_loop",
    "wait_slice",
    "waiting",
]

HANDLED = (signal.SIGINT, signal.SIGTERM)

WAIT_SLICE_S = 0.1
"""The longest the main thread waits for scenarios before it looks again: how late a signal that the kernel handed
to another thread is handled."""


def wait_slice(remaining: float | None) -> float:
    """How long the main thread may wait now, when it would wait `remaining` seconds (None: until woken)."""
    return WAIT_SLICE_S if remaining is None else min(remaining, WAIT_SLICE_S)


@contextmanager
def signals_wake_the_loop(loop: AbstractEventLoop) -> Generator[None]:
    """While the main thread runs `loop`, a signal wakes it whichever thread the kernel handed it to: Python's C
    handler writes to the wakeup descriptor from that thread, the loop sees it, and the main thread runs the
    handler (asyncio's, which cancels the run, or one of agentrig's). Elsewhere than in the main thread: nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    try:
        previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    except ValueError:  # not the main interpreter's main thread after all
        reader.close()
        writer.close()
        yield
        return
    loop.add_reader(reader.fileno(), _drain, reader)
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        loop.remove_reader(reader.fileno())
        reader.close()
        writer.close()


def _drain(reader: socket.socket) -> None:
    with contextlib.suppress(OSError):  # BlockingIOError once it is empty
        while reader.recv(512):
            pass


class RunInterrupted(KeyboardInterrupt):
    """The run was stopped by a signal (`signum`: SIGINT for Ctrl-C, or SIGTERM)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class StopSignals:
    """SIGINT and SIGTERM for the run in progress (installed by `with StopSignals():` in the main thread only;
    elsewhere, and in worker processes, it does nothing)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        """The first signal received (it decides the exit code); None while none came."""
        self._raise_anywhere = True
        self._waiting = 0
        self._pending = False
        self._previous: dict[int, object] = {}

    def __enter__(self) -> StopSignals:
        global _active
        if threading.current_thread() is threading.main_thread():
            for signum in HANDLED:
                self._previous[signum] = signal.signal(signum, self._handle)
            _active = self
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        global _active
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # pyright: ignore[reportArgumentType]
        self._previous.clear()
        if _active is self:
            _active = None

    def protect(self) -> None:
        """From now on a signal is raised only inside `waiting()` (the run has started writing into `--out`)."""
        self._raise_anywhere = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
        if self._raise_anywhere or self._waiting:
            self._pending = False
            raise RunInterrupted(self.signum)
        self._pending = True

    def raise_if_stopped(self) -> None:
        """Raise `RunInterrupted` now if a signal was held since it was last raised."""
        if self._pending:
            self._pending = False
            raise RunInterrupted(self.signum or signal.SIGINT)

    @contextmanager
    def waiting(self) -> Generator[None]:
        """A wait that a signal may interrupt (raising `RunInterrupted`); a signal held since is raised now."""
        self.raise_if_stopped()
        self._waiting += 1
        try:
            yield
        finally:
            self._waiting -= 1


_active: StopSignals | None = None


def raise_if_stopped() -> None:
    """Between two pieces of a long write: `RunInterrupted` if a signal came meanwhile (and the run in progress in
    this process holds the signals). What was being written is then left unfinished, atomically: not replaced."""
    if _active is not None:
        _active.raise_if_stopped()


@contextmanager
def waiting() -> Generator[None]:
    """`StopSignals.waiting()` of the run in progress in this process, if it holds the signals."""
    if _active is None:
        yield
        return
    with _active.waiting():
        yield
