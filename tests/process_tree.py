"""The processes a process started, from /proc (Linux), for tests that look at the warm server and its shims. Also
copied into pytester projects, whose plugins import it: standard library only."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any


def children(pid: int, named: bytes) -> list[int]:
    """The running children of `pid` whose command line holds `named`."""
    found: list[int] = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid and named in cmdline:
            found.append(int(stat.parent.name))
    return found


def first_child(process: subprocess.Popen[Any], named: bytes, *, within: float = 60) -> int:
    """The first running child of `process` whose command line holds `named`, once there is one (`process` must
    still be running meanwhile)."""
    deadline = time.monotonic() + within
    while not (found := children(process.pid, named)):
        assert time.monotonic() < deadline, f"no child holding {named!r} within {within} s"
        assert process.poll() is None, f"the process ended ({process.returncode}) before a child holding {named!r}"
        time.sleep(0.002)
    return found[0]


def ends_within(pid: int, seconds: float) -> bool:
    """Whether process `pid` ends (or is only a zombie) within `seconds`."""
    deadline = time.monotonic() + seconds
    while Path(f"/proc/{pid}").exists() and Path(f"/proc/{pid}/cmdline").read_bytes():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
