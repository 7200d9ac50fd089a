"""A real `agentrig` process held inside one import of its start-up, so that a test's signal lands there for certain:
the hook in tests/start_up_hook/ holds the import (`sitecustomize.py` says how), and says when the process is there.

No timing decides where a signal lands: the test sends it once the hook has said so, and releases the import after.
The bounds below only turn a process that never gets there (or never ends) into a failure with its threads' stacks,
instead of a test that waits for ever.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HOOK = Path(__file__).parent / "start_up_hook"
BOUND_S = 60
"""How long a process may take to reach the held import (a few seconds here), or to end once released."""
HOWS = ("plain", "callback", "module_lock")
"""Where the import is held (`tests/start_up_hook/sitecustomize.py`): in a loader's own frame, in a weakref callback
(CPython swallows what it raises), in importlib's module lock callback right after it took the import lock."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Ended:
    """How the held process ended."""

    returncode: int
    """Its exit code (negative: killed by that signal)."""
    stdout: str
    """Everything it wrote on stdout."""
    stderr: str
    """Everything it wrote on stderr."""
    notes: tuple[str, ...]
    """The lines the hook wrote after `inside` (`imported`: the hook's thread could import once it let the import
    lock go)."""


@dataclass(slots=True, kw_only=True)
class HeldProcess:
    """A process started by `start_held`, its import held by the hook."""

    process: subprocess.Popen[str]
    """The process."""
    notify: int
    """The read end of the pipe the hook writes its lines to."""
    release: int
    """The write end of the pipe the hook reads its release from."""
    pending: bytes = b""
    """What was read from `notify` past the last whole line."""
    lines: list[str] = field(default_factory=list[str])
    """Whole lines read from `notify` and not yet taken."""

    def _fail(self, why: str) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGABRT)  # PYTHONFAULTHANDLER: every thread's stack on stderr
        _, stderr = self.process.communicate(timeout=BOUND_S)
        pytest.fail(f"{why}:\n{stderr}")

    def _line(self) -> str | None:
        """The hook's next line; None once the process closed the pipe (it ended)."""
        limit = time.monotonic() + BOUND_S
        while not self.lines:
            remaining = limit - time.monotonic()
            if remaining <= 0:
                self._fail(f"the start-up hook said nothing for {BOUND_S} s")
            ready, _, _ = select.select([self.notify], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.notify, 4096)
            if not chunk:
                return None
            self.pending += chunk
            *whole, self.pending = self.pending.split(b"\n")
            self.lines.extend(line.decode() for line in whole)
        return self.lines.pop(0)

    def wait_inside(self) -> str:
        """Wait until the process is where the hook holds it; agentrig's functions on its main thread's stack."""
        line = self._line()
        if line is None or not line.startswith("inside "):
            self._fail(f"the process never reached the held import (the hook said {line!r})")
            raise AssertionError  # pytest.fail raised
        return line.removeprefix("inside ")

    def send(self, signum: int) -> None:
        self.process.send_signal(signum)

    def let_go(self) -> None:
        """Let the held import go on (a process that already ended has nothing to let go)."""
        with contextlib.suppress(BrokenPipeError):
            os.write(self.release, b"x")

    def finish(self) -> Ended:
        """Wait for the process to end (within `BOUND_S`, or fail with its stacks)."""
        try:
            stdout, stderr = self.process.communicate(timeout=BOUND_S * 2)  # the hook's exit may wait `BOUND_S`
        except subprocess.TimeoutExpired:
            self._fail(f"the process did not end within {BOUND_S * 2} s")
            raise
        notes: list[str] = []
        while (line := self._line()) is not None:
            notes.append(line)
        return Ended(returncode=self.process.returncode, stdout=stdout, stderr=stderr, notes=tuple(notes))

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()
        for descriptor in (self.notify, self.release):
            with contextlib.suppress(OSError):
                os.close(descriptor)


@contextlib.contextmanager
def held(
    command: list[str], *, module: str, how: str, cwd: Path, environment: dict[str, str]
) -> Generator[HeldProcess]:
    """`command` started, its first import of `module` held by the hook in the way `how` names (`HOWS`); killed
    at the end of the block if it still runs."""
    assert how in HOWS, how
    notify_read, notify_write = os.pipe()
    release_read, release_write = os.pipe()
    paths = [str(HOOK), *filter(None, [environment.get("PYTHONPATH")])]
    environment = {
        **environment,
        "PYTHONPATH": os.pathsep.join(paths),
        "PYTHONFAULTHANDLER": "1",
        "AGENTRIG_START_UP_HOOK": f"{module}:{how}:{notify_write}:{release_read}",
    }
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            pass_fds=(notify_write, release_read),
        )
    finally:
        os.close(notify_write)  # the process holds the only write end now: its exit ends the pipe
        os.close(release_read)
    started = HeldProcess(process=process, notify=notify_read, release=release_write)
    try:
        yield started
    finally:
        started.close()
