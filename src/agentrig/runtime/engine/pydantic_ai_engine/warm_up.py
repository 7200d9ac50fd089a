"""Imported by the `-j N` workers' forkserver and by pytest's warm server (`pytest_plugin/warm_server.py`) only:
builds, once, what every scenario's run builds on first use. pydantic-ai builds its messages' validator and
serializer (`ModelMessagesTypeAdapter`) the first time either is used, 40-60 ms, and a first run imports 20 ms more;
every scenario's run uses the serializer for `pydantic_ai_dump.json`. Built here, in the process the workers fork
from, each worker starts with it instead of building its own. `-j 1` builds it during its first scenario, as any
process would. The user's own modules are imported here too (`_import_user_modules`). Imported last of the
forkserver's preload: it ends the import phase (freezes the imported objects, turns collection on).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import shutil
import signal
import time
from collections.abc import Generator
from pathlib import Path

from pydantic_ai.messages import ModelMessagesTypeAdapter

from agentrig.runtime.engine.module_loading import on_sys_path
from agentrig.runtime.engine.pydantic_ai_engine.deps import offline_import
from agentrig.runtime.engine.warning_capture import importing

ModelMessagesTypeAdapter.dump_json([])
ModelMessagesTypeAdapter.validate_python([])
# Imported on a first run's first use, 20 ms together: anyio's asyncio backend and genai-prices' price data.
with contextlib.suppress(ImportError):
    import anyio._backends._asyncio  # noqa: F401  # pyright: ignore[reportUnusedImport, reportPrivateUsage]
    import genai_prices.data  # noqa: F401  # pyright: ignore[reportUnusedImport]


def _import_user_modules() -> None:
    """The user's agent and deps modules, when the run that started this forkserver names them
    (`pool.started_pool(..., user_modules_later=True)`): imported here once, so that every worker forked from
    this process starts with them, as `-j 1` imports them once. The run writes their names once it has read its
    scenario files; this waits for that (or for the run to end). An import that fails is left to the worker,
    which imports the module again and reports the failure as its scenario's error."""
    path = os.environ.pop("AGENTRIG_WORKER_IMPORTS", None)
    # The process that writes it, named by itself: by the time this runs it may have died already (a SIGTERM early
    # in its start-up), and this process's parent would then be whoever adopted it.
    writer = int(os.environ.pop("AGENTRIG_WORKER_IMPORTS_FROM", "0") or 0) or os.getppid()
    if not path:
        return
    while not os.path.exists(path):
        if os.getppid() != writer:  # the run is gone: this process is about to end too
            return
        time.sleep(0.01)
    try:
        with open(path, encoding="utf-8") as handle:
            modules: list[tuple[str, list[str], bool, float | None]] = json.load(handle)
    finally:
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    for module, directories, offline, seconds in modules:
        paths = [Path(directory) for directory in directories]
        # An import that fails here (or is given up) is imported again by the worker, within its scenario's own
        # deadline, which reports what goes wrong. What it warns is the module's: each scenario naming it lists it.
        with (
            offline_import(offline),
            on_sys_path(paths),
            contextlib.suppress(BaseException),
            _given(seconds),
            importing(module),
        ):
            importlib.import_module(module)


class _ImportTooSlow(BaseException):
    """Raised into an import that outlived the time its scenarios may take."""


@contextlib.contextmanager
def _given(seconds: float | None) -> Generator[None]:
    """At most `seconds` (None: no bound) for what runs inside. A scenario that imports its agent itself, as at
    `-j 1`, is stopped past its deadline; here nothing would stop an import that hangs, and no worker would ever fork.
    So the import is given up (SIGALRM raises into it) and left to the workers, where the scenario's deadline
    applies. This process is single-threaded, and the alarm is cleared before anything else runs."""
    if seconds is None:
        yield
        return

    def give_up(_signum: int, _frame: object) -> None:
        raise _ImportTooSlow

    previous = signal.signal(signal.SIGALRM, give_up)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_import_user_modules()
# Everything imported so far lives as long as the forkserver and its workers: frozen, no collection scans it again.
# Collection was off while importing (`suite.processes.forkserver_start`); each worker forks with it on.
gc.freeze()
gc.enable()
