"""A scenario item that hangs never hangs pytest: `settings.timeout` bounds the whole scenario as `agentrig run`
does, Ctrl-C and SIGTERM stop the session with its `--agentrig-out` reports marked interrupted, and pytest-timeout's
failure is a `timeout`. Real pytest processes and real signals: only a process shows that it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli.run_process import finish, left_running, report, statuses, wait_for
from tests.thread_signals import signal_another_thread

pytestmark = pytest.mark.process

_BLOCKING = textwrap.dedent(
    """
    import pathlib
    import time
    from pydantic_ai import Agent

    agent = Agent(None)

    @agent.tool_plain
    async def block() -> str:  # an async tool that blocks the event loop itself: asyncio cannot cancel it
        pathlib.Path("started").write_text("")
        time.sleep(3600)
        return "never"
    """
)

_HEALTHY = """\
name: {name}
system_prompt: You are terse.
turns:
  - user: hi
    model:
      - text: fine
    expect:
      output: {{equals: fine}}
"""

_HUNG = """\
name: m-hung
agent: blocking:agent
{settings}turns:
  - user: hi
    model:
      - tool_calls: [{{id: t1, name: block}}]
      - text: never
"""


def _project(tmp_path: Path, *, timeout: float | None) -> Path:
    project = tmp_path / "project"
    (project / "scenarios").mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (project / "blocking.py").write_text(_BLOCKING, encoding="utf-8")
    for name in ("a-healthy", "z-healthy"):
        (project / "scenarios" / f"{name}.yaml").write_text(_HEALTHY.format(name=name), encoding="utf-8")
    settings = f"settings: {{timeout: {timeout}}}\n" if timeout is not None else ""
    (project / "scenarios" / "m-hung.yaml").write_text(_HUNG.format(settings=settings), encoding="utf-8")
    return project


def _start_pytest(project: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)  # this suite's own worker's: under -n the session forks its workers warm
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--agentrig-out", "out", *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_a_scenario_blocking_its_loop_is_abandoned_past_its_timeout_and_the_rest_run(tmp_path: Path) -> None:
    project = _project(tmp_path, timeout=1)

    code, output = finish(_start_pytest(project))

    assert code == 1, output
    assert "the scenario did not finish within 6s" in output
    found = statuses(project / "out")
    assert found.pop("m-hung")[0] == "failed"
    assert found == {"a-healthy": ("passed", ""), "z-healthy": ("passed", "")}
    assert report(project / "out")["interrupted"] is False


@pytest.mark.parametrize(
    ("signum", "exit_code", "to_another_thread"),
    [(signal.SIGINT, 2, False), (signal.SIGTERM, 143, False), (signal.SIGINT, 2, True)],
    ids=["ctrl-c", "term", "ctrl-c-that-another-thread-receives"],
)
def test_a_signal_stops_a_blocked_scenario_and_the_reports_say_interrupted(
    tmp_path: Path, signum: int, exit_code: int, to_another_thread: bool
) -> None:
    project = _project(tmp_path, timeout=None)
    process = _start_pytest(project)
    wait_for(project / "started", process)

    if to_another_thread:  # the kernel's choice when the main thread has a signal pending: pytest's must still wake
        signal_another_thread(process.pid, signum)
    else:
        os.kill(process.pid, signum)
    code, output = finish(process)

    assert code == exit_code, output  # Ctrl-C: pytest's own "interrupted"; SIGTERM: 143, as `agentrig run`
    assert report(project / "out")["interrupted"] is True
    assert statuses(project / "out") == {
        "a-healthy": ("passed", ""),
        "m-hung": ("skipped", ""),  # interrupted before it finished, as `agentrig run` reports it
        "z-healthy": ("skipped", ""),
    }
    assert left_running(process.pid) == []


def test_sigterm_to_the_xdist_controller_writes_the_interrupted_reports(tmp_path: Path) -> None:
    project = _project(tmp_path, timeout=None)
    process = _start_pytest(project, "-n", "2")
    wait_for(project / "started", process)

    os.kill(process.pid, signal.SIGTERM)  # the controller alone, as a CI runner or `kill` does
    code, output = finish(process)

    assert code == 143, output
    assert report(project / "out")["interrupted"] is True
    found = statuses(project / "out")
    assert found["m-hung"] == ("skipped", "")
    assert set(found) == {"a-healthy", "m-hung", "z-healthy"}  # known from the workers' collections
    assert left_running(process.pid) == []


def test_pytest_timeout_ends_a_blocked_scenario_as_a_timeout(tmp_path: Path) -> None:
    pytest.importorskip("pytest_timeout")
    project = _project(tmp_path, timeout=None)

    code, output = finish(_start_pytest(project, "--timeout", "2", "--timeout-method", "signal"))

    assert code == 1, output
    assert "cause timeout: Timeout (>2.0s) from pytest-timeout: the scenario was abandoned" in output
    found = statuses(project / "out")
    assert found.pop("m-hung") == ("failed", "Timeout (>2.0s) from pytest-timeout: the scenario was abandoned")
    assert found == {"a-healthy": ("passed", ""), "z-healthy": ("passed", "")}


def test_an_agent_calling_os_exit_errors_its_scenario_not_the_session(tmp_path: Path) -> None:
    project = _project(tmp_path, timeout=None)
    exits = _BLOCKING.replace("time.sleep(3600)", "import os; os._exit(0)")
    (project / "blocking.py").write_text(exits, encoding="utf-8")

    code, output = finish(_start_pytest(project))

    assert code == 1, output  # never 0: the agent's exit code is not pytest's
    assert "error agent_error (raised while running the scenario" in output
    assert "the agent called os._exit(0)" in output
    found = statuses(project / "out")
    assert found.pop("m-hung") == ("error", "the agent called os._exit(0)")
    assert found == {"a-healthy": ("passed", ""), "z-healthy": ("passed", "")}


def test_ctrl_c_in_the_terminal_ends_a_session_of_warm_workers_and_everything_it_started(tmp_path: Path) -> None:
    # A terminal's Ctrl-C reaches the whole foreground process group: the controller, the warm server, the shims
    # and the workers forked from the server (`pytest_plugin/warm_workers.py`).
    project = _project(tmp_path, timeout=None)
    process = _start_pytest(project, "-n", "2")
    wait_for(project / "started", process)

    os.killpg(process.pid, signal.SIGINT)
    code, output = finish(process)

    assert code == 2, output  # pytest's own "interrupted"
    assert report(project / "out")["interrupted"] is True
    assert statuses(project / "out")["m-hung"] == ("skipped", "")
    assert left_running(process.pid) == []
