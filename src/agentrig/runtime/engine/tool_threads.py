"""The threads a scenario's sync tools (and other sync callbacks of the agent) run in: daemon threads.

pydantic-ai runs a sync tool in a worker thread, and by default those threads (anyio's) are not daemons: a tool
stuck in `time.sleep(3600)` outlives its turn's timeout and then keeps the whole process from exiting (Python
joins such threads at exit), with every report already written. Here each call runs in a daemon thread, idle
ones reused as anyio reuses its own. The awaiting turn is cancelled as soon as its timeout asks (the call is
awaited through `loop.run_in_executor`, whose cancellation does not wait for the thread); the thread is left to
finish on its own, and does not hold the process.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

__all__ = ["DaemonThreads"]

_P = ParamSpec("_P")
_T = TypeVar("_T")

_Work = tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class DaemonThreads(Executor):
    """An executor whose threads are daemons; a thread idle for `idle_s` ends."""

    def __init__(self, idle_s: float = 10.0) -> None:
        self._idle_s = idle_s
        self._lock = threading.Lock()
        self._idle = 0
        self._work: queue.SimpleQueue[_Work] = queue.SimpleQueue()

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> Future[_T]:
        future: Future[_T] = Future()
        work: _Work = (future, fn, args, kwargs)
        with self._lock:
            if self._idle:
                self._idle -= 1
                self._work.put(work)
                return future
        threading.Thread(target=self._serve, args=(work,), name="agentrig-tool", daemon=True).start()
        return future

    def _serve(self, work: _Work | None) -> None:
        while work is not None:
            future, fn, args, kwargs = work
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as error:  # the awaiting task gets whatever the call raised
                    future.set_exception(error)
                else:
                    future.set_result(result)
            del work, future, fn, args, kwargs  # hold nothing of the call while idle
            with self._lock:
                self._idle += 1
            try:
                work = self._work.get(timeout=self._idle_s)
            except queue.Empty:
                with self._lock:  # a submit counts idle threads under this lock: take its work or leave the count
                    try:
                        work = self._work.get_nowait()
                    except queue.Empty:
                        self._idle -= 1
                        work = None
