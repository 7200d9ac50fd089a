"""The warm server started early, on a guess from the raw command line, as agentrig's plugin registers and before
pytest imports the plugins after it (`warm_workers.guess_early`): adopted when the session wants it, ended at once
when it does not, never a second server."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentrig.pytest_plugin.warm_workers import WarmWorkers
from tests import process_tree
from tests.process_tree import children, ends_within, first_child
from tests.pytest_plugin.project import scenario, write

pytestmark = pytest.mark.process

pytest_plugins = ["pytester"]

# Loaded right after agentrig's plugin (`-p`), as logfire's or anyio's plugin would be: which warm servers does this
# process have when this plugin is imported? With FAKE_COVERAGE it then looks like coverage is measuring, which
# turns warm workers off (`warm_workers.wanted`), though the early guess said yes.
_PROBE = """
import os
import sys
import types
from pathlib import Path

from process_tree import children

if not os.environ.get("PYTEST_XDIST_WORKER"):  # the controller's import, not a worker's
    Path("servers-at-probe").write_text(" ".join(str(pid) for pid in children(os.getpid(), b"warm_server")))
if os.environ.get("FAKE_COVERAGE"):
    sys.modules["coverage"] = types.ModuleType("coverage")
"""

# The workers' parent (the server they forked from), and, when the conftest is imported (after the plugin decided),
# whether the servers the probe saw are still running.
_CONFTEST = """
import os
from pathlib import Path

_WHO = os.environ.get("PYTEST_XDIST_WORKER", "controller")
(Path(__file__).parent / f"parent-{_WHO}").write_text(str(os.getppid()))
(Path(__file__).parent / f"pid-{_WHO}").write_text(str(os.getpid()))
if _WHO == "controller":
    seen = Path(__file__).with_name("servers-at-probe").read_text().split()
    alive = [pid for pid in seen if Path(f"/proc/{pid}/cmdline").exists() and Path(f"/proc/{pid}/cmdline").read_bytes()]
    Path(__file__).with_name("servers-alive-at-conftest").write_text(" ".join(alive))
"""


def _project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    files = {f"scenarios/{name}.yaml": scenario(name) for name in ("alpha", "bravo", "charlie")}
    helper = Path(process_tree.__file__).read_text(encoding="utf-8")
    write(pytester, files | {"probe.py": _PROBE, "conftest.py": _CONFTEST, "process_tree.py": helper})


_PLUGINS = ("-p", "agentrig.pytest_plugin", "-p", "probe", "-p", "xdist.plugin", "-p", "no:cacheprovider")


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(*_PLUGINS, *args, timeout=120)


def _read(pytester: pytest.Pytester, name: str) -> list[str]:
    return (pytester.path / name).read_text().split()


def test_the_server_starts_before_later_plugins_import_and_is_the_one_the_workers_fork_from(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(pytester, monkeypatch)

    result = _run(pytester, "-n", "2")

    result.assert_outcomes(passed=3)
    early = _read(pytester, "servers-at-probe")
    assert len(early) == 1  # running before the next plugin was imported
    assert _read(pytester, "parent-gw0") == _read(pytester, "parent-gw1") == early  # adopted, not started again
    assert not Path(f"/proc/{early[0]}").exists()  # and ended with the session


@pytest.mark.parametrize(
    ("workers", "servers"),
    [
        (("-n", "2"), 1),
        (("-n2",), 1),
        (("--numprocesses=2",), 1),
        (("--numprocesses", "2"), 1),
        (("-n", "0"), 0),
        (("-n0",), 0),
        (("--numprocesses=0",), 0),
        ((), 0),
    ],
)
def test_the_guess_reads_every_spelling_of_the_workers_option(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...], servers: int
) -> None:
    _project(pytester, monkeypatch)

    result = _run(pytester, *workers)

    result.assert_outcomes(passed=3)
    assert len(_read(pytester, "servers-at-probe")) == servers


def test_the_guess_reads_addopts(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(pytester, monkeypatch)
    pytester.makeini("[pytest]\naddopts = -n 2\n")

    result = _run(pytester)

    result.assert_outcomes(passed=3)
    early = _read(pytester, "servers-at-probe")
    assert len(early) == 1
    assert _read(pytester, "parent-gw0") == early


def test_a_server_started_on_a_wrong_guess_is_ended_before_the_session_goes_on(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(pytester, monkeypatch)
    monkeypatch.setenv("FAKE_COVERAGE", "1")  # a plugin after agentrig's started coverage: workers start cold

    result = _run(pytester, "-n", "2")

    result.assert_outcomes(passed=3)
    assert len(_read(pytester, "servers-at-probe")) == 1  # the guess said yes
    assert _read(pytester, "servers-alive-at-conftest") == []  # ended as soon as the options said no
    assert _read(pytester, "parent-gw0") == _read(pytester, "pid-controller")  # the workers started cold


def test_discard_ends_the_server_at_once_and_removes_its_folder() -> None:
    server = WarmWorkers.start(("json",), user_modules=True)  # it would wait for a module list that never comes
    assert server is not None

    server.discard()

    assert server.process.returncode is not None
    assert not server.directory.exists()


_SLOW_AGENT = """
import time
from pathlib import Path

from pydantic_ai import Agent

Path(__file__).with_name("slow-import-started").touch()
time.sleep(60)  # the server is still importing this when the session is interrupted
agent = Agent(None)
"""


def _session(pytester: pytest.Pytester) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "pytest", *_PLUGINS, "-n", "2"]
    return subprocess.Popen(
        command, cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )


def _slow_session(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> subprocess.Popen[bytes]:
    """A `pytest -n 2` session whose warm server spends a minute importing an agent module."""
    _project(pytester, monkeypatch)
    scenario_text = "name: slow\nagent: slow_agent:agent\nturns:\n  - user: hi\n    model:\n      - text: done\n"
    write(pytester, {"slow_agent.py": _SLOW_AGENT, "scenarios/slow.yaml": scenario_text})
    return _session(pytester)


def test_a_ctrl_c_before_the_server_is_ready_ends_the_session_at_once_and_quietly(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A terminal's Ctrl-C reaches the whole process group: the controller, the server in the middle of its imports,
    # and the shim waiting for it. The session ends as an interrupted one, without waiting for those imports (the
    # server has no worker yet), and neither the server nor a shim prints a traceback or starts a cold worker.
    session = _slow_session(pytester, monkeypatch)
    first_child(session, b"warm_shim")  # execnet starts the second worker's shim once the first worker answered
    deadline = time.monotonic() + 60
    while not (pytester.path / "slow-import-started").exists():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    server = children(session.pid, b"warm_server")

    os.killpg(session.pid, signal.SIGINT)
    interrupted = time.monotonic()
    out, err = session.communicate(timeout=60)

    assert session.returncode == pytest.ExitCode.INTERRUPTED
    assert "KeyboardInterrupt" in out.decode()  # pytest's own summary line
    assert "Traceback" not in err.decode()  # none from the server, a shim or a cold worker
    # Not the 5 s a server that serves is given to end its workers, nor the 60 s of the import.
    assert time.monotonic() - interrupted < 4
    assert len(server) == 1
    assert not Path(f"/proc/{server[0]}").exists()
    assert children(session.pid, b"warm_shim") == []


def test_nothing_the_server_writes_reaches_the_users_terminal() -> None:
    # Not a traceback when a Ctrl-C interrupts its imports, nor what the user's modules print as it imports them
    # (a worker writes to the streams its shim hands over).
    server = WarmWorkers.start(("json",))
    assert server is not None
    try:
        assert os.readlink(f"/proc/{server.process.pid}/fd/2") == os.devnull
        assert os.readlink(f"/proc/{server.process.pid}/fd/1") == os.devnull
    finally:
        server.close()


def test_a_controller_killed_outright_leaves_no_server_behind(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Killed before it named the user's modules, the controller never will: the server watches it by the pid the
    # controller gave it (its parent may already be whoever adopted it when it looks), and ends.
    _project(pytester, monkeypatch)
    session = _session(pytester)
    server = first_child(session, b"warm_server")

    os.kill(session.pid, signal.SIGKILL)

    try:
        assert ends_within(server, 30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(server, signal.SIGKILL)
        session.communicate(timeout=60)


def test_a_launcher_whose_controller_is_gone_stops_waiting_for_the_server(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server is still importing the user's modules (a minute here) when the controller is killed outright: the
    # launcher waiting for it ends, instead of waiting that minute (or for ever) with the session's streams open.
    session = _slow_session(pytester, monkeypatch)
    shim = first_child(session, b"warm_shim")
    server = children(session.pid, b"warm_server")

    os.kill(session.pid, signal.SIGKILL)

    try:
        assert ends_within(shim, 10)
    finally:
        for pid in (shim, *server):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        session.communicate(timeout=60)
