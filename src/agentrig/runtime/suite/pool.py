"""The `-j N` worker pool, startable before anything heavy is imported: this module needs the standard library only.

The workers' forkserver imports pydantic-ai (about 0.7 s) once, and every worker forks from it warm. The sooner
it starts, the less of that a run waits for: `agentrig run -j N` starts it as soon as its options are read,
before this process imports the runner, so the two imports overlap on two cores.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sys
import threading
from concurrent.futures import ProcessPoolExecutor

__all__ = ["new_pool", "started_pool"]


def _worker_init(cwd: str) -> None:
    # The parent handles Ctrl-C (stops scheduling, writes partial reports); workers must not die mid-write.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    os.chdir(cwd)
    gc.freeze()  # the preloaded modules live as long as the worker: no full collection rescans them


# Imported once by the forkserver, so forked workers start warm: everything a scripted scenario touches
# (a module first imported inside a worker is imported again by every worker).
_WORKER_PRELOAD = [
    "agentrig.runtime.suite.workers",
    "agentrig.runtime.engine.pydantic_ai_engine.scenario_execution",
    "agentrig.runtime.engine.pydantic_ai_engine.warm_up",
    "agentrig.runtime.suite.reports",
    "agentrig.runtime.history.wire",
    "agentrig.runtime.history.sessions",
    "agentrig.scenarios.loader",
    "jsonschema",
]


def started_pool(jobs: int) -> ProcessPoolExecutor:
    """A worker pool whose processes are already starting (the executor would start them on first use).

    Starting a worker blocks until the forkserver has imported its preload, so it happens on a thread: the
    caller goes on (importing the runner, reading scenario files) meanwhile, and its first `submit` waits for the
    thread's lock.
    """
    pool = new_pool(jobs)
    threading.Thread(target=lambda: [pool.submit(os.getpid) for _ in range(jobs)], daemon=True).start()
    return pool


def new_pool(jobs: int) -> ProcessPoolExecutor:
    # forkserver: workers fork from a clean server that has pydantic-ai imported once (no fork of a
    # parent with threads, no per-worker re-import). Windows and macOS default to spawn.
    if sys.platform.startswith("linux"):
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(_WORKER_PRELOAD)
    else:
        context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_worker_init, initargs=(os.getcwd(),))
