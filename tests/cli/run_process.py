"""`agentrig run` as a real process: for what only a process shows (it exits, signals, what it leaves running).

Each process starts a session of its own, so every process it starts (the forkserver, the workers) can be
found afterwards by its session id in /proc, however it was reparented.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from agentrig.runtime.runfolder import jsonio

EXIT_WITHIN_S = 60.0
"""How long a run that must end is given (the scenarios' own timeouts are a second or two)."""


def start_run(directory: Path, out: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "agentrig", "run", str(directory), "--out", str(out), *args],
        cwd=directory.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Wait for the run to end on its own (killing its whole session if it does not): its code and output."""
    try:
        stdout, stderr = process.communicate(timeout=EXIT_WITHIN_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        stdout, stderr = process.communicate()
        raise AssertionError(f"agentrig run did not exit within {EXIT_WITHIN_S:.0f}s:\n{stdout}\n{stderr}") from None
    return process.returncode, stdout + stderr


def wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    """Wait until `path` exists (a tool writes it when it starts hanging)."""
    deadline = time.monotonic() + EXIT_WITHIN_S
    while not path.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            os.killpg(process.pid, 9)
            raise AssertionError(f"{path.name} never appeared:\n{process.communicate()[0]}")
        time.sleep(0.05)


def session_processes(session: int) -> list[int]:
    """The live (not zombie) processes of `session`."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[3]) == session:
            found.append(int(entry.name))
    return found


def left_running(session: int, within_s: float = 15.0) -> list[int]:
    """The processes of `session` still alive after `within_s` (the forkserver and workers wind down)."""
    deadline = time.monotonic() + within_s
    while (alive := session_processes(session)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in alive:
        os.kill(pid, 9)
    return alive


def report(out: Path) -> dict[str, object]:
    return jsonio.read_json_file(out / "report.json")


def statuses(out: Path) -> dict[str, tuple[str, str]]:
    """Scenario name -> (status, error message or "")."""
    scenarios: list[dict[str, object]] = report(out)["scenarios"]  # type: ignore[assignment]
    result: dict[str, tuple[str, str]] = {}
    for scenario in scenarios:
        error = scenario.get("error")
        message = str(error["message"]) if isinstance(error, dict) else ""  # pyright: ignore[reportUnknownArgumentType]
        result[str(scenario["name"])] = (str(scenario["status"]), message)
    return result
