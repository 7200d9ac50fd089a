"""Holds one module's import at a chosen point, so that a test's signal lands there for certain.

Python's `site` imports this file at start-up, before `agentrig`'s first line, when its folder is on PYTHONPATH
and `AGENTRIG_START_UP_HOOK` is set (`tests/start_up_signals.py` does both). It does nothing otherwise, and it takes
the variable out of the environment, so no process the command starts is held too.

`AGENTRIG_START_UP_HOOK` is `MODULE:HOW:NOTIFY:RELEASE`: the module whose import is held, how, and two pipe
descriptors the test passed. The hook writes one line to NOTIFY once the process is where the test wants the signal
(`inside FUNCTION,FUNCTION,...`: agentrig's functions on the main thread's stack, outermost first, so the test can
check which part of the start-up it is in), and reads a byte from RELEASE when the import may go on:

- `plain`: the module's loader waits before it runs the module, in a frame of its own; the signal's
  KeyboardInterrupt is raised there and leaves the import as any exception does.
- `callback`: the loader waits inside a weakref callback. CPython reports what such a callback raises as
  "Exception ignored in ..." and goes on: the KeyboardInterrupt is swallowed and the import goes on.
- `module_lock`: the module runs, then a thread of the hook takes CPython's global import lock (`_imp`), and the
  main thread blocks in the module lock's weakref callback (importlib's own `cb`, CPython 3.11-3.13), which takes
  that lock first thing. The hook says `inside` once the main thread waits there, and lets the lock go once the
  signal has arrived (its number is written to a wakeup descriptor the hook set), so Python runs the signal's
  handler in `cb`, right after `cb` took the lock: a KeyboardInterrupt raised there is swallowed and leaves the
  lock held by the main thread for ever. The thread then imports a module of its own: it writes `imported` once
  that import is done, which never happens while the lock is held; the process's exit waits up to a minute for it.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

_VARIABLE = "AGENTRIG_START_UP_HOOK"
_KEPT: list[object] = []


def _main_thread_stack() -> str:
    frame = sys._getframe(1)  # pyright: ignore[reportPrivateUsage]
    names: list[str] = []
    while frame is not None:
        if f"{os.sep}agentrig{os.sep}" in frame.f_code.co_filename:
            names.append(frame.f_code.co_name)
        frame = frame.f_back
    return ",".join(reversed(names))


def _install(module: str, how: str, notify: int, release: int) -> None:
    import importlib.machinery
    import weakref
    from types import ModuleType

    def say(line: str) -> None:
        os.write(notify, f"{line}\n".encode())

    def wait_here() -> None:
        say(f"inside {_main_thread_stack()}")
        os.read(release, 1)

    def wait_in_a_callback() -> None:
        class Held:
            pass

        def callback(reference: object) -> None:
            wait_here()

        held = Held()
        reference = weakref.ref(held, callback)
        del held  # the callback runs now, and waits
        assert reference() is None

    def block_in_the_module_lock_callback() -> None:
        import _imp
        import atexit
        import signal
        import socket
        import threading
        import time

        reader, writer = socket.socketpair()
        _KEPT.extend((reader, writer))  # the wakeup descriptor lives as long as the process: signals write to it
        writer.setblocking(False)
        signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        main = threading.get_ident()
        stack = _main_thread_stack()
        taken = threading.Event()

        def hold_the_import_lock() -> None:
            _imp.acquire_lock()
            taken.set()
            while True:  # until the main thread waits for the lock in its module lock's callback
                frame = sys._current_frames().get(main)  # pyright: ignore[reportPrivateUsage]
                if frame is not None and frame.f_code.co_name == "cb" and "importlib" in frame.f_code.co_filename:
                    break
                time.sleep(0.001)
            say(f"inside {stack},cb")
            reader.recv(1)  # the signal came: Python's C handler wrote its number here
            _imp.release_lock()
            importlib.import_module("start_up_hook_after")  # waits for ever if the main thread kept the import lock

            say("imported")

        thread = threading.Thread(target=hold_the_import_lock, name="start-up-hook", daemon=True)
        thread.start()
        taken.wait()
        atexit.register(thread.join, 60)  # registered after agentrig's own exit handler: it runs before that one

    class HoldingLoader(importlib.machinery.SourceFileLoader):
        def exec_module(self, module: ModuleType) -> None:
            if how == "plain":
                wait_here()
            elif how == "callback":
                wait_in_a_callback()
            super().exec_module(module)
            if how == "module_lock":
                block_in_the_module_lock_callback()

    class Finder:
        held = False

        def find_spec(
            self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None, /
        ) -> importlib.machinery.ModuleSpec | None:
            if self.held or fullname != module:
                return None
            self.held = True
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or spec.origin is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
                say(f"cannot hold {fullname}: not a source module")
                return spec
            spec.loader = HoldingLoader(fullname, spec.origin)
            return spec

    sys.meta_path.insert(0, Finder())


def _from_environment() -> None:
    value = os.environ.pop(_VARIABLE, None)
    if not value:
        return
    module, how, notify, release = value.split(":")
    _install(module, how, int(notify), int(release))


_from_environment()
