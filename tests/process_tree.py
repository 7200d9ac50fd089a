"""The processes a process started, from /proc (Linux), for tests that look at the warm server and its shims. Also
copied into pytester projects, whose plugins import it: standard library only."""

from __future__ import annotations

from pathlib import Path


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
