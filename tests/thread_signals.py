"""A signal sent to one thread of another process, not to the process: where the kernel may put a signal sent to
the process as a whole (it hands it to another thread when the main one has a signal pending already), made
certain for a test. CPython runs every handler in the main thread, which must still learn of it."""

from __future__ import annotations

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)


def signal_another_thread(pid: int, signum: int) -> int:
    """Send `signum` to a thread of process `pid` other than its main thread (glibc's `tgkill`); its thread id."""
    others = sorted(int(task) for task in os.listdir(f"/proc/{pid}/task") if int(task) != pid)
    assert others, f"process {pid} has no thread but its main one"
    thread = others[-1]
    if _libc.tgkill(pid, thread, signum) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return thread
