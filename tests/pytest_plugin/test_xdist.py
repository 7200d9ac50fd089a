"""Scenarios under pytest-xdist (`-n 2`, real worker processes): distributed one by one, goldens written by the
worker that ran their scenario, reports gathered by the controller."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.runfolder import jsonio
from tests.pytest_plugin.project import scenario, write

pytestmark = pytest.mark.process

pytest_plugins = ["pytester"]

NAMES = ("alpha", "bravo", "charlie", "delta")


def test_update_golden_and_reports_under_n_2(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # One test, two sessions of three processes each: starting pydantic-ai in a process is most of the time here.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test's own worker's: not the inner controller's
    write(pytester, {f"scenarios/{name}.yaml": scenario(name, golden=True) for name in NAMES})

    updated = pytester.runpytest_subprocess(
        "-n", "2", "--agentrig-update-golden", "--agentrig-out", "out", "-p", "no:cacheprovider", "-v"
    )

    updated.assert_outcomes(passed=4)
    output = updated.stdout.str()
    workers = {line.split("]")[0].lstrip("[") for line in updated.outlines if line.startswith("[gw")}
    assert workers == {"gw0", "gw1"}, output  # the items were spread over both workers
    golden_dir = pytester.path / "scenarios" / "golden"
    for name in NAMES:
        assert output.count(f"golden written: scenarios/golden/{name}.json") == 1, output
    updated.stdout.fnmatch_lines(["golden files: 4 written or updated, 0 unchanged"])
    assert sorted(path.name for path in golden_dir.iterdir()) == [f"{name}.json" for name in NAMES]  # no temp files
    assert _report_names(pytester.path / "out") == sorted(NAMES)  # every worker's scenarios, in one report

    write(pytester, {"scenarios/bravo.yaml": scenario("bravo", golden=True, answer="x")})
    compared = pytester.runpytest_subprocess("-n", "2", "--agentrig-out", "out", "-p", "no:cacheprovider")

    compared.assert_outcomes(passed=3, failed=1)
    assert "golden files:" not in compared.stdout.str()
    report = jsonio.loads((pytester.path / "out" / "report.json").read_bytes())
    assert isinstance(report, dict)
    assert report["summary"] | {"duration_s": 0} == {
        "passed": 3,
        "failed": 1,
        "error": 0,
        "skipped": 0,
        "total": 4,
        "duration_s": 0,
    }

    # The goldens hold the bytes `agentrig run --update-golden` writes.
    monkeypatch.chdir(pytester.path)
    written = {path.name: path.read_bytes() for path in golden_dir.iterdir()}
    for path in golden_dir.iterdir():
        path.unlink()
    cli = CliRunner().invoke(app, ["run", "scenarios", "-k", "not bravo", "--update-golden", "--out", "cli", "-q"])
    assert cli.exit_code == 0, cli.output
    written.pop("bravo.json")
    assert {path.name: path.read_bytes() for path in golden_dir.iterdir()} == written


def _report_names(out: Path) -> list[str]:
    report = jsonio.loads((out / "report.json").read_bytes())
    assert isinstance(report, dict)
    return [entry["name"] for entry in report["scenarios"]]


_EXIT_CONFTEST = """
import atexit
import os
from pathlib import Path

_WHO = os.environ.get("PYTEST_XDIST_WORKER", "controller")
_HERE = Path(__file__).parent


def _at_exit():
    (_HERE / f"atexit-{_WHO}").write_text("ran")


atexit.register(_at_exit)


class _TornDown:
    def __init__(self, path):
        # Late in teardown modules and builtins are gone: keep what __del__ calls (C functions) on the object.
        self.path, self.open, self.close, self.flags = path, os.open, os.close, os.O_CREAT | os.O_WRONLY

    def __del__(self):
        self.close(self.open(self.path, self.flags))


KEPT = _TornDown(str(_HERE / f"torn-down-{_WHO}"))  # deallocated only when the interpreter tears modules down
"""


def test_a_worker_ends_without_module_teardown_after_running_every_atexit_function(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The workers' teardown (0.4-0.8 s each) was the controller's last wait; the user's exit functions still run.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test's own worker's: not the inner controller's
    write(pytester, {f"scenarios/{name}.yaml": scenario(name) for name in NAMES} | {"conftest.py": _EXIT_CONFTEST})

    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=4)
    ran = sorted(path.name for path in pytester.path.iterdir() if path.name.startswith(("atexit-", "torn-down-")))
    assert ran == ["atexit-controller", "atexit-gw0", "atexit-gw1", "torn-down-controller"]


_COLLECTION_CONFTEST = """
import json, os
from pathlib import Path

from agentrig.pytest_plugin import parse_cache
from agentrig.pytest_plugin.state import STATE_KEY

LOADED = []
_load = parse_cache.CachedScenario.load


def _counted_load(self):
    LOADED.append(self.name)
    return _load(self)


parse_cache.CachedScenario.load = _counted_load


def pytest_sessionfinish(session):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return
    state = session.config.stash[STATE_KEY]
    items = [item for item in session.items if getattr(item, "agentrig_scenario", False)]
    seen = {
        "from_controller": state.parse_cache.used if state.parse_cache is not None else None,
        "collected": len(items),
        "unpickled": sorted(LOADED),
        "ran": sorted(item.name for item in items if item.agentrig_entry is not None),
    }
    Path(f"collection-{worker}.json").write_text(json.dumps(seen))
"""


def test_workers_collect_the_controllers_reading_and_load_only_the_scenarios_they_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worker collects every item and runs its share: unpickling every scenario was a third of its collection.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test's own worker's: not the inner controller's
    names = [f"s{index}" for index in range(8)]
    files = {f"scenarios/{name}.yaml": scenario(name) for name in names}
    write(pytester, files | {"conftest.py": _COLLECTION_CONFTEST})

    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=8)
    seen = [json.loads((pytester.path / f"collection-{worker}.json").read_text()) for worker in ("gw0", "gw1")]
    assert [worker["from_controller"] for worker in seen] == [8, 8]  # every file, as the controller read it
    assert [worker["collected"] for worker in seen] == [8, 8]
    assert sorted(seen[0]["ran"] + seen[1]["ran"]) == names
    for worker in seen:
        assert worker["unpickled"] == worker["ran"]  # the scenarios it did not run were never unpickled
