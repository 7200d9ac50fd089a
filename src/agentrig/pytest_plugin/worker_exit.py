"""A pytest-xdist worker that ran scenarios ends without tearing its modules down.

Such a worker holds pydantic-ai, agentrig and the user's agent modules: hundreds of thousands of objects, which the
interpreter deallocates one by one as it finalizes (0.4-0.8 s here), after the worker has sent its last result and
while the controller waits for it to end (`xdist.workermanage.teardown_nodes`). `agentrig run -j N`'s workers never
pay it (ended by their pool), so pytest -n 2 did, twice, at the end of every session.

At the interpreter's exit, once every non-daemon thread has ended, the worker runs every `atexit` function (the
user's, logging's flush, coverage's...: in their usual order, and each once), flushes its standard streams and
ends with `os._exit(0)`, the status an execnet worker that ends normally has (the controller reads a worker's
results from its channel, never from its exit status). Registered at the worker's `pytest_unconfigure`, after the
session sent everything, so it is the last `atexit` function registered and the first to run; when another was
registered after it, the worker exits as any process does.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from collections.abc import Callable

__all__ = ["end_without_teardown"]


def end_without_teardown() -> None:
    """Make this process's exit skip module teardown (see the module's docstring)."""
    run_exit_functions: Callable[[], None] | None = getattr(atexit, "_run_exitfuncs", None)  # CPython's
    registered: Callable[[], int] | None = getattr(atexit, "_ncallbacks", None)
    if run_exit_functions is None or registered is None:
        return

    def end_now() -> None:
        if registered() != last:
            return  # one registered after this ran before it: running them all again would run it twice
        atexit.unregister(end_now)
        run_exit_functions()  # the others, last registered first, then none is left to run again
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(0)

    atexit.register(end_now)
    last = registered()
