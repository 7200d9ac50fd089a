"""A scenario that hangs never hangs the run: `settings.timeout` bounds the whole scenario, Ctrl-C and SIGTERM end
the run with its reports, and the process exits. Real processes: only a process shows that it exits."""

from __future__ import annotations

import os
import signal
import textwrap
from pathlib import Path

import pytest

from tests.cli.run_process import finish, left_running, report, start_run, statuses, wait_for
from tests.thread_signals import signal_another_thread

pytestmark = pytest.mark.process

_HANGING = textwrap.dedent(
    """
    import asyncio
    import pathlib
    import time
    from pydantic_ai import Agent

    agent = Agent()

    def _started() -> None:
        pathlib.Path("started").write_text("")

    @agent.tool_plain
    def hang() -> str:  # a sync tool: pydantic-ai runs it in a thread that nothing can stop
        _started()
        time.sleep(3600)
        return "never"

    @agent.tool_plain
    async def block() -> str:  # an async tool that blocks the event loop itself
        _started()
        time.sleep(3600)
        return "never"

    @agent.tool_plain
    def leave_a_thread() -> str:  # a thread of the agent's own that never ends (Python joins it at exit)
        import threading
        threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
        return "left"

    def slow_deps() -> None:  # a deps callable that never returns
        _started()
        time.sleep(3600)
    """
)


def _scenario(
    directory: Path, name: str, *, tool: str | None = None, deps: bool = False, timeout: float | None
) -> None:
    lines = [f"name: {name}"]
    if tool is not None or deps:
        lines.append("agent: hanging:agent")
    if deps:
        lines.append("deps: hanging:slow_deps")
    if timeout is not None:
        lines.append(f"settings: {{timeout: {timeout}}}")
    lines += ["turns:", "  - user: hi", "    model:"]
    if tool is not None:
        lines.append(f"      - tool_calls: [{{id: t1, name: {tool}, args: {{}}}}]")
    lines.append("      - text: done")
    (directory / f"{name}.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    directory = tmp_path / "suite"
    directory.mkdir()
    (directory / "hanging.py").write_text(_HANGING, encoding="utf-8")
    for name in ("a-healthy", "z-healthy"):
        _scenario(directory, name, timeout=None)
    return directory


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize(
    ("hang", "message"),
    [
        ({"tool": "hang"}, "the turn exceeded settings.timeout = 1.0s"),
        ({"tool": "block"}, "the scenario did not finish within 6s"),
        ({"deps": True}, "the scenario did not finish within 6s"),
    ],
    ids=["sync-tool", "loop-blocking-tool", "deps"],
)
def test_a_timeout_bounds_the_whole_scenario_and_the_process_exits(
    suite: Path, jobs: str, hang: dict[str, object], message: str
) -> None:
    _scenario(suite, "m-hung", timeout=1, **hang)  # pyright: ignore[reportArgumentType]
    out = suite.parent / "out"
    code, output = finish(start_run(suite, out, "-j", jobs))
    assert code == 1, output
    found = statuses(out)
    status, error = found.pop("m-hung")
    assert status == "failed"
    assert message in error
    assert found == {"a-healthy": ("passed", ""), "z-healthy": ("passed", "")}
    assert report(out)["interrupted"] is False


@pytest.mark.parametrize(
    ("hang", "presses"),
    [({"tool": "block"}, 1), ({"tool": "block"}, 2), ({"deps": True}, 1), ({"tool": "hang"}, 1)],
    ids=["loop", "loop-twice", "deps", "thread"],
)
def test_ctrl_c_ends_a_hung_run_at_j1_with_its_reports(suite: Path, hang: dict[str, object], presses: int) -> None:
    _scenario(suite, "m-hung", timeout=None, **hang)  # pyright: ignore[reportArgumentType]
    out = suite.parent / "out"
    process = start_run(suite, out)
    wait_for(suite.parent / "started", process)
    for _ in range(presses):
        os.kill(process.pid, signal.SIGINT)
    code, output = finish(process)
    assert code == 130, output
    assert report(out)["interrupted"] is True
    assert statuses(out) == {
        "a-healthy": ("passed", ""),
        "m-hung": ("skipped", ""),
        "z-healthy": ("skipped", ""),
    }


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigterm_is_an_interruption_with_reports_and_nothing_left_running(suite: Path, jobs: str) -> None:
    _scenario(suite, "m-hung", timeout=None, tool="hang")
    out = suite.parent / "out"
    process = start_run(suite, out, "-j", jobs)
    wait_for(suite.parent / "started", process)
    os.kill(process.pid, signal.SIGTERM)  # the main process alone, as a CI runner or `kill` does
    code, output = finish(process)
    assert code == 143, output
    assert "interrupted" in output
    assert report(out)["interrupted"] is True
    assert statuses(out)["m-hung"][0] == "skipped"
    assert left_running(process.pid) == []


@pytest.mark.parametrize(
    ("jobs", "signum", "code"), [("1", signal.SIGINT, 130), ("2", signal.SIGTERM, 143)], ids=["j1-sigint", "j2-sigterm"]
)
def test_a_signal_the_kernel_hands_to_another_thread_still_stops_the_run(
    suite: Path, jobs: str, signum: int, code: int
) -> None:
    # The main thread sleeps in a wait for its scenarios; the handler runs there only: it must wake and look.
    _scenario(suite, "m-hung", timeout=None, tool="hang")
    out = suite.parent / "out"
    process = start_run(suite, out, "-j", jobs)
    wait_for(suite.parent / "started", process)
    signal_another_thread(process.pid, signum)
    code_seen, output = finish(process)
    assert code_seen == code, output
    assert report(out)["interrupted"] is True
    assert statuses(out)["m-hung"][0] == "skipped"


def test_a_run_killed_outright_leaves_no_earlier_report_claiming_success(suite: Path) -> None:
    out = suite.parent / "out"
    code, output = finish(start_run(suite, out, "-j", "2"))
    assert code == 0, output
    assert report(out)["interrupted"] is False  # a green report of the first run
    _scenario(suite, "m-hung", timeout=None, tool="hang")
    process = start_run(suite, out, "-j", "2")
    wait_for(suite.parent / "started", process)
    os.kill(process.pid, signal.SIGKILL)  # nothing can be written now: what is there must not say "passed"
    finish(process)  # its pipes close once every process of the run is gone
    assert report(out)["interrupted"] is True
    assert report(out)["scenarios"] == []
    # Every report agrees: the run was interrupted before it reported a scenario (replaced when it started).
    assert '<testsuites name="agentrig" tests="0"' in (out / "junit.xml").read_text(encoding="utf-8")
    assert "**interrupted**" in (out / "summary.md").read_text(encoding="utf-8")
    assert left_running(process.pid) == []  # the workers go with the forkserver, which goes with the run
    # What the killed run wrote was recorded before it was written: the next run proves it all agentrig's and
    # replaces it, where an unprovable file would stop it.
    (suite / "m-hung.yaml").unlink()
    code, output = finish(start_run(suite, out, "-j", "2"))
    assert code == 0, output
    assert report(out)["interrupted"] is False
    assert not (out / "scenarios" / "m-hung").exists()


def test_a_thread_the_agent_leaves_running_does_not_keep_the_process_alive(suite: Path) -> None:
    _scenario(suite, "m-leaves-a-thread", timeout=None, tool="leave_a_thread")
    out = suite.parent / "out"
    code, output = finish(start_run(suite, out))  # exits within a few seconds of its reports, with their code
    assert code == 0, output
    assert set(statuses(out).values()) == {("passed", "")}
