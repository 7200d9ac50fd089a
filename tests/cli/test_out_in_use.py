"""Two agentrig commands on one output folder: while a run holds `--out`, a second run, a merge or a pytest session
with `--agentrig-out` on it is refused at once with one line (exit 2, pytest's 4), and the folder stays as the first
run has it. Real processes: the first run holds the folder inside a tool that waits for a file the test writes."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Generator
from pathlib import Path

import pytest

from agentrig.runtime.runfolder.folder_lock import lock_folder
from tests.cli.cli_helpers import exit_code_and_stderr
from tests.cli.out_shapes import snapshot
from tests.cli.run_process import EXIT_WITHIN_S, finish, start_run, statuses, wait_for

pytestmark = pytest.mark.process

_HOLDING = textwrap.dedent(
    """
    import pathlib
    import time
    from pydantic_ai import Agent

    agent = Agent()

    @agent.tool_plain
    def hold() -> str:
        pathlib.Path("started").write_text("")
        deadline = time.monotonic() + 60  # an upper bound only: the test writes `release` once it has looked
        while not pathlib.Path("release").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return "released"
    """
)

_SCENARIO = """\
name: held
agent: holding:agent
turns:
  - user: hi
    model:
      - tool_calls: [{id: t1, name: hold, args: {}}]
      - text: done
"""


def _in_use(out: Path, pid: int) -> str:
    return f"--out {out}: is in use by another agentrig command (pid {pid}); agentrig touched nothing"


@contextlib.contextmanager
def _first_run_holding(tmp_path: Path) -> Generator[tuple[subprocess.Popen[str], Path]]:
    """A real `agentrig run --out OUT`, stopped inside its scenario's tool (the folder claimed, reports started)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "holding.py").write_text(_HOLDING, encoding="utf-8")
    (suite / "held.yaml").write_text(_SCENARIO, encoding="utf-8")
    out = tmp_path / "out"
    process = start_run(suite, out)
    try:
        wait_for(tmp_path / "started", process)
        yield process, out
    finally:
        (tmp_path / "release").write_text("")
        code, output = finish(process)
    assert code == 0, output
    assert statuses(out) == {"held": ("passed", "")}  # the first run's files, whole


def test_a_second_run_on_the_same_out_is_refused_at_once(tmp_path: Path) -> None:
    with _first_run_holding(tmp_path) as (first, out):
        before = snapshot(out)
        second = subprocess.run(
            [sys.executable, "-m", "agentrig", "run", str(tmp_path / "suite"), "--out", str(out)],
            cwd=tmp_path,
            env={**os.environ, "PYDANTIC_AI_NO_BANNER": "1"},
            capture_output=True,
            text=True,
            timeout=EXIT_WITHIN_S,
        )
        assert second.returncode == 2, second.stdout + second.stderr
        assert second.stderr.startswith(f"agentrig: error: {_in_use(out, first.pid)}")
        assert second.stderr.count("\n") == 1, second.stderr
        assert snapshot(out) == before
    lock_folder(out, label="out").release()  # the first run let the folder go as it ended


def test_a_merge_into_an_out_a_run_holds_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shard = tmp_path / "shard"
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "plain.yaml").write_text("name: plain\nturns:\n  - user: hi\n    model: [{text: ok}]\n")
    assert exit_code_and_stderr(["run", str(tmp_path / "plain"), "--out", str(shard), "-q"], capsys)[0] == 0
    with _first_run_holding(tmp_path) as (first, out):
        before = snapshot(out)
        code, stderr = exit_code_and_stderr(["merge", str(shard), "--out", str(out)], capsys)
        assert code == 2, stderr
        assert stderr.startswith(f"agentrig: error: {_in_use(out, first.pid)}")
        assert stderr.count("\n") == 1, stderr
        assert snapshot(out) == before


def test_a_pytest_session_on_an_out_a_run_holds_is_refused(tmp_path: Path) -> None:
    with _first_run_holding(tmp_path) as (first, out):
        before = snapshot(out)
        session = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                str(tmp_path / "suite"),
                "--agentrig-out",
                str(out),
                "-p",
                "no:cacheprovider",
            ],
            cwd=tmp_path,
            env={**os.environ, "PYDANTIC_AI_NO_BANNER": "1"},
            capture_output=True,
            text=True,
            timeout=EXIT_WITHIN_S,
        )
        assert session.returncode == pytest.ExitCode.USAGE_ERROR, session.stdout + session.stderr
        errors = [line for line in session.stderr.splitlines() if line.startswith("ERROR: ")]
        assert len(errors) == 1, session.stderr
        assert errors[0].startswith(f"ERROR: --agentrig-{_in_use(out, first.pid).removeprefix('--')}")
        assert snapshot(out) == before
