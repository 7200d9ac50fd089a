"""`os._exit()` called by a scenario's agent ends that scenario, not the process running the whole run.

With `-j 1` one process runs every scenario: an agent's tool that calls `os._exit(0)` would end the run with
exit code 0 and no report, a verdict greener than the truth. While scenarios run, `os._exit` in this process
raises `ProcessExitCalled` instead (a BaseException, so the agent's own `except Exception` does not swallow
it), which becomes the scenario's `error`. Called in another process (a child a tool forked, a multiprocessing
worker), it exits as always. With `-j N` the workers do the same, so no worker is lost to it.

What cannot be intercepted (os.abort(), a crash, `posix._exit` called directly, a C extension's exit) still
ends a `-j 1` run; the report the run started with then says it was interrupted (`reports.mark_run_started`),
and `-j N` isolates such agents (a worker that dies errors its scenario only).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Generator
from contextlib import contextmanager
from typing import NoReturn

__all__ = ["PYTEST_TIMEOUT_THREAD", "ProcessExitCalled", "intercepted_process_exit"]

PYTEST_TIMEOUT_THREAD = "pytest_timeout "
"""How pytest-timeout names the timer thread of its `thread` method (2.x), which dumps every stack and calls
`os._exit(1)` when a test outlives its timeout: that exit is the user's choice of ending pytest, not an agent's."""


class ProcessExitCalled(BaseException):
    """The agent called `os._exit(code)` while its scenario ran."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@contextmanager
def intercepted_process_exit() -> Generator[None]:
    """While the block runs, `os._exit` called in this process raises `ProcessExitCalled`."""
    real_exit = os._exit
    pid = os.getpid()

    def scenario_exit(code: int) -> NoReturn:
        if os.getpid() != pid:  # a forked child of the agent's own: it really exits
            real_exit(code)
        if threading.current_thread().name.startswith(PYTEST_TIMEOUT_THREAD):
            real_exit(code)  # pytest-timeout's `thread` method ending a pytest run that outlived its timeout
        raise ProcessExitCalled(code)

    os._exit = scenario_exit
    try:
        yield
    finally:
        os._exit = real_exit
