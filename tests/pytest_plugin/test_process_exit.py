"""A session that ran scenarios and nothing else ends as the `agentrig` command does: what lives at the process's
exit is frozen, so the interpreter's final cyclic collections pass it by. A session that also ran a user's own
tests ends as it always did."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pytest_plugin.project import scenario, write

pytestmark = pytest.mark.process

pytest_plugins = ["pytester"]

# Registered as the conftest is imported, before the plugin's own at the session's end: so it runs after it.
_SEES_THE_EXIT = """
import atexit
import gc
import os
from pathlib import Path

_WHO = os.environ.get("PYTEST_XDIST_WORKER", "controller")
atexit.register(lambda: (Path(__file__).parent / f"exit-{_WHO}").write_text(str(gc.get_freeze_count() > 0)))
"""


@pytest.fixture(autouse=True)
def _not_an_outer_workers_session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this suite's own worker's, not the inner session's


def _frozen_at_exit(project: Path, who: str = "controller") -> bool:
    return (project / f"exit-{who}").read_text() == "True"


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "pytest-xdist's controller"])
def test_a_session_of_scenarios_only_spares_its_exit_the_collections(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    write(
        pytester, {"conftest.py": _SEES_THE_EXIT, "scenarios/a.yaml": scenario("a"), "scenarios/b.yaml": scenario("b")}
    )

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *workers)

    result.assert_outcomes(passed=2)
    assert _frozen_at_exit(pytester.path)


def test_a_session_that_ran_a_users_test_exits_as_it_always_did(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        {
            "conftest.py": _SEES_THE_EXIT,
            "scenarios/a.yaml": scenario("a"),
            "test_plain.py": "def test_plain():\n    assert True\n",
        },
    )

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "scenarios", "test_plain.py")

    result.assert_outcomes(passed=2)
    assert not _frozen_at_exit(pytester.path)
