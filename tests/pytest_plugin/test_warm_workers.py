"""pytest-xdist workers forked from the warm server (`warm_workers`, `warm_server`, `warm_shim`): the same
verdicts and files as cold workers, no warning of ours, nothing left running, and every way back to a cold start."""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentrig.pytest_plugin import warm_shim
from agentrig.pytest_plugin.warm_workers import WarmWorkers
from agentrig.runtime.runfolder import jsonio
from tests.pytest_plugin.project import scenario, write

pytestmark = pytest.mark.process

pytest_plugins = ["pytester"]

_WHERE_CONFTEST = """
import os
from pathlib import Path

_WHO = os.environ.get("PYTEST_XDIST_WORKER", "controller")
_PARENT = os.getppid()
_CMDLINE = Path(f"/proc/{_PARENT}/cmdline").read_bytes().replace(b"\\0", b" ").decode()
(Path(__file__).parent / f"parent-{_WHO}").write_text(f"{_PARENT}\\n{_CMDLINE}")
"""

_DIES = """
import os
import signal


def test_dies():
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _parents(project: Path) -> dict[str, tuple[int, str]]:
    found: dict[str, tuple[int, str]] = {}
    for path in project.glob("parent-gw*"):
        pid, cmdline = path.read_text().split("\n", 1)
        found[path.name.removeprefix("parent-")] = (int(pid), cmdline)
        path.unlink()
    return found


def _statuses(out: Path) -> dict[str, str]:
    report = jsonio.loads((out / "report.json").read_bytes())
    assert isinstance(report, dict)
    return {entry["name"]: entry["status"] for entry in report["scenarios"]}


def test_workers_fork_warm_and_give_the_cold_workers_verdicts(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test's own worker's, not the inner controller's
    files = {f"scenarios/{name}.yaml": scenario(name) for name in ("alpha", "bravo", "charlie")}
    files["scenarios/delta.yaml"] = scenario("delta", answer="Two files.")
    write(pytester, files | {"conftest.py": _WHERE_CONFTEST})

    warm = pytester.runpytest_subprocess("-n", "2", "--agentrig-out", "warm", "-p", "no:cacheprovider")

    warm.assert_outcomes(passed=3, failed=1)
    assert "cannot be rewritten" not in warm.stdout.str() + warm.stderr.str()  # anyio, agentrig: imported by us
    parents = _parents(pytester.path)
    assert set(parents) == {"gw0", "gw1"}
    assert {cmdline for _pid, cmdline in parents.values()} == {f"{sys.executable} -u -c {_server_command()} "}
    server = next(iter(parents.values()))[0]
    assert not Path(f"/proc/{server}").exists()  # the server ended with the session

    cold = pytester.runpytest_subprocess(
        "-n", "2", "--agentrig-out", "cold", "-p", "no:cacheprovider", "-o", "agentrig_warm_workers=false"
    )

    cold.assert_outcomes(passed=3, failed=1)
    assert all("warm_server" not in cmdline for _pid, cmdline in _parents(pytester.path).values())
    assert _statuses(pytester.path / "warm") == _statuses(pytester.path / "cold")
    assert _statuses(pytester.path / "warm")["delta"] == "failed"


def _server_command() -> str:
    from agentrig.pytest_plugin.warm_workers import _SERVER  # pyright: ignore[reportPrivateUsage]

    return _SERVER


def test_a_warm_worker_that_dies_is_a_crash_and_its_replacement_forks_warm(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    files = {f"scenarios/{name}.yaml": scenario(name) for name in ("alpha", "bravo", "charlie", "delta")}
    write(pytester, files | {"test_dies.py": _DIES})

    result = pytester.runpytest_subprocess("-n", "2", "--agentrig-out", "out", "-p", "no:cacheprovider")

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*worker 'gw*' crashed while running 'test_dies.py::test_dies'*"])
    result.assert_outcomes(passed=4, failed=1)
    assert set(_statuses(pytester.path / "out").values()) == {"passed"}


def test_the_shim_starts_the_cold_interpreter_when_no_server_answers(tmp_path: Path) -> None:
    shim = [sys.executable, "-I", "-S", warm_shim.__file__, str(tmp_path / "none.sock")]

    result = subprocess.run([*shim, "-c", "import sys; print('cold', sys.argv)"], capture_output=True, text=True)

    assert (result.returncode, result.stdout) == (0, "cold ['-c']\n"), result.stderr


def _bootstrap(source: str) -> bytes:
    """What execnet writes first to a worker's standard input: one line, the repr of the source to run."""
    return (repr(source) + "\n").encode()


def _shim(server: WarmWorkers, cwd: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-I", "-S", warm_shim.__file__, str(server.socket_path), "-u", "-c", "unused"]
    return subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(path: Path) -> str:
    deadline = time.monotonic() + 30
    while not path.exists() or not path.read_text():
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.02)
    return path.read_text()


def test_the_forked_worker_is_the_shims_stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTRIG_WARM_TEST_VALUE", "from the shim")
    server = WarmWorkers.start(("json",))
    assert server is not None
    try:
        # Streams, directory, environment and exit status are the shim's.
        shim = _shim(server, tmp_path)
        source = (
            "import os, sys; print(os.getcwd(), os.environ['AGENTRIG_WARM_TEST_VALUE'], sys.argv, 'json' in"
            " sys.modules); sys.stderr.write('to stderr'); sys.exit(3)"
        )
        out, err = shim.communicate(_bootstrap(source), timeout=30)
        assert (shim.returncode, out, err) == (3, f"{tmp_path} from the shim ['-c'] True\n".encode(), b"to stderr")

        # SIGTERM to the shim ends the worker, and the shim ends as the worker did.
        shim = _shim(server, tmp_path)
        assert shim.stdin is not None
        shim.stdin.write(_bootstrap("import os, time; open('pid', 'w').write(str(os.getpid())); time.sleep(60)"))
        shim.stdin.flush()
        worker = int(_wait_for(tmp_path / "pid"))
        shim.send_signal(signal.SIGTERM)
        shim.communicate(timeout=30)
        assert shim.returncode == -signal.SIGTERM
        assert not Path(f"/proc/{worker}").exists()

        # A shim killed outright (execnet's last resort) takes its worker with it.
        (tmp_path / "pid").unlink()
        shim = _shim(server, tmp_path)
        assert shim.stdin is not None
        shim.stdin.write(_bootstrap("import os, time; open('pid', 'w').write(str(os.getpid())); time.sleep(60)"))
        shim.stdin.flush()
        worker = int(_wait_for(tmp_path / "pid"))
        shim.kill()
        shim.communicate(timeout=30)
        deadline = time.monotonic() + 30
        while Path(f"/proc/{worker}").exists():  # reaped by the server: gone, not a zombie
            assert time.monotonic() < deadline, "the worker outlived its shim"
            time.sleep(0.02)

        # ... and the server goes on forking workers (pytest-xdist starts a replacement).
        shim = _shim(server, tmp_path)
        out, _err = shim.communicate(_bootstrap("import os; print(os.getppid())"), timeout=30)
        assert (shim.returncode, int(out)) == (0, server.process.pid)
    finally:
        server.close()
    assert server.process.returncode == 0
    assert not server.directory.exists()


def test_a_large_environment_reaches_the_worker_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # More than one read of the shim's request: the environment of a CI job can be that large.
    for index in range(3):  # 300 kB (one variable may hold at most 128 kB)
        monkeypatch.setenv(f"AGENTRIG_WARM_TEST_LARGE_{index}", str(index) * 100_000)
    server = WarmWorkers.start(("json",))
    assert server is not None
    try:
        shim = _shim(server, tmp_path)
        source = "import os; print(sum(len(v) for k, v in os.environ.items() if 'WARM_TEST_LARGE' in k))"
        out, err = shim.communicate(_bootstrap(source), timeout=30)
        assert (shim.returncode, out) == (0, b"300000\n"), err
    finally:
        server.close()


def test_no_server_where_its_socket_cannot_be_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    too_long = tmp_path / ("d" * 120)  # past the 108 bytes of a unix socket's path
    too_long.mkdir()
    monkeypatch.setenv("TMPDIR", str(too_long))
    monkeypatch.setattr("tempfile.tempdir", None)

    assert WarmWorkers.start(("json",)) is None  # the workers start cold
    assert list(too_long.iterdir()) == []  # and nothing is left behind


def test_the_server_ends_when_the_controller_is_gone() -> None:
    server = WarmWorkers.start(("json",))
    assert server is not None
    assert server.process.stdin is not None
    server.process.stdin.close()  # what the kernel does for a controller killed outright
    assert server.process.wait(timeout=30) == 0
    server.close()
    assert not server.directory.exists()


_LOGGED_AGENT = """
import os
from pathlib import Path
from pydantic_ai import Agent

with Path(__file__).with_name("{name}.log").open("a") as log:  # one line per process that imports this
    log.write(f"{{os.getpid()}} {{os.environ.get('OPENAI_API_KEY', '')}}\\n")

agent = Agent({model})

@agent.tool_plain
def where() -> str:
    return "here"
"""


def _agent_scenario(name: str, agent: str) -> str:
    return (
        f"name: {name}\nagent: {agent}:agent\nturns:\n  - user: hi\n    model:\n"
        "      - tool_calls: [{id: t1, name: where, args: {}}]\n      - text: done\n"
    )


def test_the_server_imports_the_agent_modules_as_a_test_module_would(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    files = {
        "keyless.py": _LOGGED_AGENT.format(name="keyless", model="None"),
        "keyed.py": _LOGGED_AGENT.format(name="keyed", model='"openai:gpt-4o"'),  # builds its provider at import
        "conftest.py": _WHERE_CONFTEST,
    }
    files |= {f"scenarios/keyless_{index}.yaml": _agent_scenario(f"keyless-{index}", "keyless") for index in range(6)}
    files |= {f"scenarios/keyed_{index}.yaml": _agent_scenario(f"keyed-{index}", "keyed") for index in range(6)}
    write(pytester, files)

    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=12)
    server = {pid for pid, _cmdline in _parents(pytester.path).values()}
    assert len(server) == 1
    # Imported once, by the server the workers forked from, not once per worker.
    assert (pytester.path / "keyless.log").read_text().split() == [str(*server)]
    # Without `agentrig_placeholder_keys` a test module imports with the environment as it is: so does the server.
    # That import fails (no key); each worker then imports the module for its scenarios, offline, as a cold one.
    keyed = [line.split(" ") for line in (pytester.path / "keyed.log").read_text().splitlines()]
    assert keyed[0] == [str(*server), ""]
    assert {key for _pid, key in keyed[1:]} == {"agentrig-offline-placeholder"}
    assert 1 <= len(keyed[1:]) <= 2


@pytest.mark.parametrize(
    "args", [("--collect-only", "-q"), ("-k", "nothing-matches"), ("--agentrig-engine", "tinyagent")]
)
def test_sessions_that_read_no_module_list_never_wait_for_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    # The server waits for the controller's list of the user's modules only when the controller writes one.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    write(pytester, {"keyless.py": _LOGGED_AGENT.format(name="keyless", model="None")})
    write(pytester, {f"scenarios/s{index}.yaml": _agent_scenario(f"s{index}", "keyless") for index in range(3)})

    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", *args, timeout=60)

    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED, pytest.ExitCode.TESTS_FAILED)


def test_the_shims_request_is_what_json_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shim builds its request from the interpreter's C modules (it starts in 6 ms, not 15): the server must read
    the same working directory, environment and arguments as from `json.dumps`, odd characters included."""
    monkeypatch.setenv("AGENTRIG_ODD_\u00e9", 'quote " backslash \\ newline \n undecodable \udcff snowman \u2603')

    request = warm_shim._request(["-u", "-c", 'print("x")\n'])  # pyright: ignore[reportPrivateUsage]

    assert request.count(b"\n") == 1
    assert request.endswith(b"\n")  # one line, whatever the values hold
    assert json.loads(request) == {"cwd": os.getcwd(), "env": dict(os.environ), "args": ["-u", "-c", 'print("x")\n']}


def test_the_bootstrap_from_cached_bytecode_is_the_compiled_text() -> None:
    """The server takes execnet's `gateway_base` from its cached bytecode: what a worker runs is what compiling the
    bootstrap's text would give, under the same file name."""
    from execnet import gateway_base

    from agentrig.pytest_plugin.warm_server import _Bootstrap  # pyright: ignore[reportPrivateUsage]

    _Bootstrap.prepare()
    source = inspect.getsource(gateway_base) + "\n"

    assert _Bootstrap.source == source
    assert _Bootstrap.code == compile(source, "<string>", "exec")
    nested = [_Bootstrap.code]
    while nested:
        code = nested.pop()
        assert code.co_filename == "<string>"
        nested.extend(value for value in code.co_consts if isinstance(value, type(code)))


_SLOW_AGENT = """
import time
from pathlib import Path
from pydantic_ai import Agent

with Path(__file__).with_name("slow_imports.log").open("a") as log:  # one line per import begun
    log.write("begun\\n")
time.sleep(120)
agent = Agent(None)
"""


def test_an_agent_import_past_its_scenarios_deadline_fails_the_item_as_a_cold_worker_would(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server gives the import up at the longest deadline of the scenarios naming it (or no worker would ever
    # fork, and then the scenario would pass where `agentrig run -j 1` fails it); the worker imports the module
    # within the scenario's own deadline, and the item fails for a timeout.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    scenario_text = (
        "name: slow\nagent: slow_agent:agent\nsettings: {timeout: 0.5}\nturns:\n  - user: hi\n    model:\n"
        "      - text: done\n"
    )
    write(pytester, {"slow_agent.py": _SLOW_AGENT, "scenarios/slow.yaml": scenario_text})

    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "--agentrig-out", "out", timeout=60)

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*did not finish within 5.5s*"])
    assert (pytester.path / "slow_imports.log").read_text().split() == ["begun", "begun"]  # the server's, the worker's
