"""Temporary files an interrupted atomic write left behind, cleaned on the next write of the same target.

`write_atomic` names its temporary file `.NAME.PID.RANDOM.tmp` (PID: the writing process). A writer killed
with kill -9 between creating it and renaming it leaves it there, as large as the file it was writing.
The next write of NAME removes such files when their writer is gone: its PID no longer runs, or (a PID
may be reused, and files of older agentrig versions carry none) the file is older than `STALE_AFTER_S`,
far longer than any single write takes. A live writer's file is never touched.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

__all__ = ["STALE_AFTER_S", "is_temp_name", "remove_stale_temp_files", "temp_prefix"]

STALE_AFTER_S = 600.0
"""A temporary file this old is abandoned, whoever wrote it."""


def temp_prefix(target: Path) -> str:
    """The name prefix of this process's temporary files for `target`."""
    return f".{target.name}.{os.getpid()}."


_TEMP_NAME = re.compile(r"\..+\.\d+\.[A-Za-z0-9_]+\.tmp")


def is_temp_name(name: str) -> bool:
    """Whether `name` has the shape of an atomic write's temporary file, `.NAME.PID.RANDOM.tmp`."""
    return _TEMP_NAME.fullmatch(name) is not None


def _pid_is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it runs, as another user
        return True
    return True


def _writer_pid(name: str, target: Path) -> int | None:
    """The PID in `.NAME.PID.RANDOM.tmp`, None when the name has none."""
    middle = name[len(target.name) + 2 : -len(".tmp")]
    pid, _, rest = middle.partition(".")
    return int(pid) if pid.isdigit() and rest else None


def remove_stale_temp_files(target: Path) -> list[Path]:
    """Remove the abandoned temporary files of `target` (see the module docstring); returns what was removed."""
    removed: list[Path] = []
    prefix = f".{target.name}."
    try:
        candidates = [p for p in target.parent.iterdir() if p.name.startswith(prefix) and p.name.endswith(".tmp")]
    except OSError:
        return removed
    now = time.time()
    for path in candidates:
        pid = _writer_pid(path.name, target)
        try:
            age = now - path.stat().st_mtime
        except OSError:
            continue  # gone already (its writer renamed or removed it)
        writer_gone = pid is not None and pid != os.getpid() and not _pid_is_running(pid)
        if writer_gone or age > STALE_AFTER_S:
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed
