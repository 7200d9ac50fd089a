"""A save after a writer was killed mid-save (kill -9) removes the temporary file it left, and only such files."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from agentrig.runtime.runfolder.jsonio import write_atomic
from agentrig.runtime.runfolder.stale_temps import STALE_AFTER_S


def _dead_pid() -> int:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(finished.stdout)


def test_a_save_removes_what_a_killed_writer_left_and_keeps_live_writers_files(tmp_path: Path) -> None:
    target = tmp_path / "session.json"
    killed = tmp_path / f".session.json.{_dead_pid()}.k1ll3d.tmp"
    killed.write_bytes(b"x" * 1000)
    live = tmp_path / f".session.json.{os.getppid()}.l1v3.tmp"  # a running process, writing right now
    live.write_bytes(b"partial")
    old_style = tmp_path / ".session.json.abc123.tmp"  # no pid: removed only once it is clearly abandoned
    old_style.write_bytes(b"old")
    abandoned = tmp_path / ".session.json.xyz789.tmp"
    abandoned.write_bytes(b"old")
    long_ago = time.time() - STALE_AFTER_S - 60
    os.utime(abandoned, (long_ago, long_ago))
    other_target = tmp_path / f".other.json.{_dead_pid()}.0th3r.tmp"
    other_target.write_bytes(b"not ours")

    write_atomic(target, b"{}")

    assert target.read_bytes() == b"{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [target.name, live.name, old_style.name, other_target.name]
    )


def test_a_save_leaves_no_temporary_file_of_its_own(tmp_path: Path) -> None:
    target = tmp_path / "history.json"
    write_atomic(target, b"[1]")
    write_atomic(target, b"[2]")
    assert [p.name for p in tmp_path.iterdir()] == ["history.json"]
