"""The `-j N` worker pool, startable before anything heavy is imported: this module needs the standard library only.

The workers' forkserver imports pydantic-ai (about 0.7 s) once, and every worker forks from it warm. The sooner
it starts, the less of that a run waits for: `agentrig run -j N` starts it as soon as its options are read,
before this process imports the runner, so the two imports overlap on two cores.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import select
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

__all__ = [
    "WORKER_IMPORTS_FROM_VARIABLE",
    "WORKER_IMPORTS_VARIABLE",
    "WorkerImport",
    "new_pool",
    "send_worker_imports",
    "started_pool",
    "worker_imports",
]

WORKER_IMPORTS_VARIABLE = "AGENTRIG_WORKER_IMPORTS"
"""Names, for the forkserver being started, the file the run will write the user's modules into (`warm_up`)."""
WORKER_IMPORTS_FROM_VARIABLE = "AGENTRIG_WORKER_IMPORTS_FROM"
"""The process that will write that file: if it is gone, the forkserver stops waiting for it (`warm_up`)."""

WorkerImport = tuple[str, list[str], bool, float | None]
"""A module the workers' forkserver imports: its name, the directories to import it from, whether with placeholder
provider keys, and the seconds its import may take (None: no bound)."""

_imports_file: str | None = None
"""The file a forkserver this process started waits for, until `send_worker_imports` writes it."""


def _worker_init(cwd: str, run_pid: int) -> None:
    # The parent handles Ctrl-C and SIGTERM (stops scheduling, ends the workers, writes partial reports); a
    # signal sent to the whole process group must not kill workers mid-write before the parent decides.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _die_with_run(run_pid)
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    os.chdir(cwd)
    gc.enable()  # off while the forkserver imported (`forkserver_start`); on here even if its `warm_up` failed
    gc.freeze()  # the preloaded modules live as long as the worker: no full collection rescans them


def _die_with_run(run_pid: int) -> None:
    """End this worker as soon as the run's process ends, however it ended (SIGKILL included).

    Nothing else would: a worker waits for work on a queue whose write end it holds itself, so it never sees
    the run go, and it keeps the forkserver alive (each worker holds the forkserver's liveness pipe). Such a
    worker would go on with its batch and write into `--out` after its run. Linux 5.3+: a pidfd of the run's
    process becomes readable when it ends; elsewhere the run's liveness is polled."""

    def watch() -> None:
        try:
            pidfd = os.pidfd_open(run_pid)
        except ProcessLookupError:
            pidfd = None  # already gone
        except (AttributeError, OSError):  # no pidfd: poll
            while _alive(run_pid):
                time.sleep(0.5)
            pidfd = None
        if pidfd is not None:
            select.select([pidfd], [], [])
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="agentrig-run-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# Imported once by the forkserver, so forked workers start warm: everything a scripted scenario touches
# (a module first imported inside a worker is imported again by every worker).
# `forkserver_start` first (no cyclic collection while importing), `warm_up` last (it imports the user's modules,
# then freezes everything and turns collection back on).
_WORKER_PRELOAD = [
    "agentrig.runtime.suite.processes.forkserver_start",
    "agentrig.runtime.suite.processes.workers",
    "agentrig.runtime.engine.pydantic_ai_engine.scenario_execution",
    "agentrig.runtime.suite.outputs.reports",
    "agentrig.runtime.history.wire",
    "agentrig.runtime.history.sessions",
    "agentrig.scenarios.loader",
    "jsonschema",
    "agentrig.runtime.engine.pydantic_ai_engine.warm_up",
]


def started_pool(jobs: int, *, user_modules_later: bool = False) -> ProcessPoolExecutor:
    """A worker pool whose processes are already starting (the executor would start them on first use).

    Starting a worker blocks until the forkserver has imported its preload, so it happens on a thread: the
    caller goes on (importing the runner, reading scenario files) meanwhile, and its first `submit` waits for the
    thread's lock.

    `user_modules_later`: the forkserver, once it has imported pydantic-ai, waits for `send_worker_imports` (the
    caller must call it, with nothing if need be) and imports the user's agent and deps modules too, so that
    every worker starts with them imported, instead of each importing them again (pandas, DuckDB, logfire...).
    """
    pool = new_pool(jobs)
    if user_modules_later:
        _start_forkserver_awaiting_imports()
    threading.Thread(target=lambda: [pool.submit(os.getpid) for _ in range(jobs)], daemon=True).start()
    return pool


def _start_forkserver_awaiting_imports() -> None:
    global _imports_file
    if not sys.platform.startswith("linux"):
        return
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    running = getattr(server, "_forkserver_pid", None)
    directory = tempfile.mkdtemp(prefix="agentrig-imports-")
    path = os.path.join(directory, "imports.json")
    os.environ[WORKER_IMPORTS_VARIABLE] = path  # read by the forkserver's `warm_up` as it starts
    os.environ[WORKER_IMPORTS_FROM_VARIABLE] = str(os.getpid())
    try:
        forkserver.ensure_running()  # starts it now, with this environment (or keeps one already running)
    finally:
        del os.environ[WORKER_IMPORTS_VARIABLE]
        del os.environ[WORKER_IMPORTS_FROM_VARIABLE]
    if running is not None and getattr(server, "_forkserver_pid", None) == running:
        os.rmdir(directory)  # one started earlier in this process (a second run) serves, and waits for nothing
        return
    _imports_file = path


def worker_imports(
    scenarios: Iterable[tuple[Iterable[str], Path | None, float | None]],
    *,
    default_deps: str | None,
    offline: bool,
    cwd: Path,
) -> list[WorkerImport]:
    """What a process the workers fork from imports before it forks them (`warm_up` reads it): each module the
    scenarios name (their `agent:` and `deps:` modules, with the scenario's directory, and the seconds the scenario
    may take) and the default deps' module, once, from where its first scenario would import it; `offline`: with
    placeholder provider keys. The import is given the longest time a scenario naming it may take (no bound if one
    may take any time): a scenario importing it itself, as at `-j 1`, would have been stopped past that."""
    modules: dict[str, WorkerImport] = {}
    for names, base_dir, budget in scenarios:
        if default_deps:
            names = (*names, default_deps.partition(":")[0])
        for name in names:
            if name not in modules:
                directories = [str(base_dir.resolve())] if base_dir is not None else []
                modules[name] = (name, [*directories, str(cwd)], offline, budget)
            else:
                known = modules[name]
                longest = None if known[3] is None or budget is None else max(known[3], budget)
                modules[name] = (*known[:3], longest)
    return list(modules.values())


def send_worker_imports(modules: list[WorkerImport]) -> None:
    """Tell the forkserver `started_pool(..., user_modules_later=True)` started which modules to import before it
    forks workers: (module, directories to import it from, with placeholder provider keys, seconds it may take or
    None). Once per forkserver;
    a forkserver that was already running (a second run in one process) never reads it, and imports nothing."""
    global _imports_file
    path, _imports_file = _imports_file, None
    if path is None:
        return
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(modules, handle)
    os.replace(partial, path)  # whole or not there: the forkserver polls for it


def new_pool(jobs: int) -> ProcessPoolExecutor:
    # forkserver: workers fork from a clean server that has pydantic-ai imported once (no fork of a
    # parent with threads, no per-worker re-import). Windows and macOS default to spawn.
    if sys.platform.startswith("linux"):
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(_WORKER_PRELOAD)
    else:
        context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_worker_init, initargs=(os.getcwd(), os.getpid())
    )
