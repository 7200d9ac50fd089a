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

A KeyboardInterrupt does not always reach the code it should stop: CPython swallows one raised in a weakref callback
or a `__del__` ("Exception ignored in ..."), and at start-up, while Python imports agentrig, pydantic-ai and the
provider's SDK, that is mostly importlib's own module lock callback, which also keeps the global import lock when
interrupted just after taking it: every other thread's import then waits for ever. So a signal is recorded before
anything is raised (`signum`: what the code checks where it matters, `raise_if_received`), and not raised at all
while the main thread is inside importlib's locking (`_inside_importlib_locking`). From the process's first line
(`guard_start_up`, called by `agentrig.__main__`) Ctrl-C is such a `StopSignals` of the command's start-up; `agentrig
run`'s own takes over from it, and `agentrig prompt` ends it (`end_start_up`) before its event loop, whose asyncio
handler takes Ctrl-C from there.

Standard library only, and light (`socket` imported where it is used): agentrig's entry point imports it first.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from contextlib import contextmanager

TYPE_CHECKING = False  # not typing's: the entry point imports this module before anything else, so it stays light
if TYPE_CHECKING:
    import socket
    from asyncio import AbstractEventLoop
    from collections.abc import Callable, Generator
    from types import FrameType, TracebackType

__all__ = [
    "WAIT_SLICE_S",
    "RunInterrupted",
    "StopSignals",
    "end_start_up",
    "guard_start_up",
    "raise_if_stopped",
    "signals_wake_the_loop",
    "start_up_signal",
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
    import socket

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
    elsewhere, and in worker processes, it does nothing). Entered inside another one (the start-up's), it takes over
    the signal that one received, and gives the signals back to it at its end."""

    def __init__(self, *, handled: tuple[signal.Signals, ...] = HANDLED) -> None:
        self.signum: int | None = None
        """The first signal received (it decides the exit code); None while none came. Set before anything is raised,
        so a KeyboardInterrupt that something swallowed still stops the run (`raise_if_received`)."""
        self._handled = handled
        self._raise_anywhere = True
        self._waiting = 0
        self._pending = False
        self._previous: dict[int, object] = {}
        self._outer: StopSignals | None = None

    def __enter__(self) -> StopSignals:
        global _active
        if threading.current_thread() is threading.main_thread():
            self._outer = _active
            if _active is not None and self.signum is None:
                self.signum = _active.signum  # a signal of the start-up whose exception did not end it
            for signum in self._handled:
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
            _active = self._outer
        self._outer = None

    def protect(self) -> None:
        """From now on a signal is raised only inside `waiting()` (the run has started writing into `--out`). A
        signal that came before is not raised here: the pytest plugin protects its report writing after pytest's
        own interrupt, which must still write the reports; a caller that must not start once a signal came checks
        `raise_if_received` first (`agentrig run` does, before it claims `--out`)."""
        self._raise_anywhere = False

    def raise_if_received(self) -> None:
        """`RunInterrupted` if a signal came, whatever became of the exception its handler raised (CPython swallows
        one raised in a weakref callback, a `__del__`). Where nothing is written yet: the start-up's ends."""
        if self.signum is not None:
            self._pending = False
            raise RunInterrupted(self.signum)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
        if (self._raise_anywhere or self._waiting) and not _inside_importlib_locking(frame):
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
_start_up: StopSignals | None = None

_IMPORTLIB = frozenset({"_frozen_importlib", "importlib._bootstrap"})
_LOCKING = frozenset({"cb", "_get_module_lock", "_lock_unlock_module", "__enter__", "__exit__", "release"})
"""importlib's functions that take the global import lock or a module lock before the `try` (or `with`) that gives
it back, or that run as a module lock's weakref callback (`cb`), in CPython 3.11-3.13's `importlib._bootstrap`. Not
`_ModuleLock.acquire`: it waits there for another thread's import of the same module, and a signal raised there
leaves it as any exception does (it must: that wait may never end)."""


def _inside_importlib_locking(frame: FrameType | None) -> bool:
    """Whether `frame` is importlib's locking (`_LOCKING`), where a KeyboardInterrupt is swallowed (`cb`) or leaves a
    lock held: the signal is then held (recorded, raised at the next wait or check) rather than raised there. Not
    raised again at once: a handler that re-arms its signal (`_thread.interrupt_main`) runs again within itself,
    right away, and would raise there, into the same callback."""
    return frame is not None and frame.f_code.co_name in _LOCKING and frame.f_globals.get("__name__") in _IMPORTLIB


def guard_start_up() -> None:
    """From agentrig's first line (`agentrig.__main__`), Ctrl-C is recorded before it is raised, and never raised
    inside importlib's locking (`StopSignals`, for SIGINT only: SIGTERM keeps Python's default until a command
    handles it, and kills the process, which cannot be swallowed). The command's start-up checks it where it
    matters (`start_up_signal`, `end_start_up`, a run's `StopSignals`), and a KeyboardInterrupt that CPython
    swallowed meanwhile is not reported as "Exception ignored": it stops the command there instead.

    Nothing when Ctrl-C is not Python's own handler (ignored, as in a shell's background job) or off the main
    thread."""
    global _start_up
    if _start_up is not None or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return
    _start_up = StopSignals(handled=(signal.SIGINT,)).__enter__()
    sys.unraisablehook = _quiet_while_starting(sys.unraisablehook)


def start_up_signal() -> int | None:
    """The signal the start-up's guard received (`guard_start_up`), whatever became of its KeyboardInterrupt; None
    while none came, or without the guard (agentrig called in-process)."""
    return None if _start_up is None else _start_up.signum


def end_start_up() -> None:
    """The command's start-up is over: `RunInterrupted` if a signal came during it, whatever became of the exception
    its handler raised; else Ctrl-C is Python's own handler again (`asyncio.run` handles it only over that one: it
    cancels the run, which nothing can swallow)."""
    global _start_up
    guard = _start_up
    if guard is None or _active is not guard:
        return
    guard.raise_if_received()
    _start_up = None
    guard.__exit__(None, None, None)


def _quiet_while_starting(
    previous: Callable[[sys.UnraisableHookArgs], object],
) -> Callable[[sys.UnraisableHookArgs], None]:
    """`previous` (Python's unraisable hook), but silent for a KeyboardInterrupt CPython swallowed after the signal
    handler in charge (the start-up's guard, or a command's own `StopSignals` that took over from it) recorded its
    signal: the command stops where it checks, with its one line."""

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        handler = _active
        if handler is not None and handler.signum is not None and isinstance(unraisable.exc_value, KeyboardInterrupt):
            return
        previous(unraisable)

    return hook


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
