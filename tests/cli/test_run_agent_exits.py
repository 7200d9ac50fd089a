"""A user agent that exits or kills its worker is that scenario's error: the run goes on, reports are written,
and the exit code says so (3), never a silent 0."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.runfolder import jsonio

pytestmark = pytest.mark.process

_AGENTS = {
    "exits_at_import": "import sys\nsys.exit(0)\n",
    "exits_in_factory": "import sys\n\ndef make():\n    sys.exit(0)\n",
    "parses_arguments_at_import": textwrap.dedent(
        """
        import argparse
        argparse.ArgumentParser().parse_args()
        from pydantic_ai import Agent
        agent = Agent()
        """
    ),
    "exits_in_a_tool": textwrap.dedent(
        """
        import sys
        from pydantic_ai import Agent
        agent = Agent()

        @agent.tool_plain
        def crash() -> str:
            sys.exit(4)
        """
    ),
    "aborts_in_a_tool": textwrap.dedent(
        """
        import os
        from pydantic_ai import Agent
        agent = Agent()

        @agent.tool_plain
        def crash() -> str:
            os.abort()
        """
    ),
}


def _user_agent_scenario(directory: Path, name: str, agent: str, *, call_tool: bool = False) -> None:
    steps = "      - tool_calls: [{id: t1, name: crash, args: {}}]\n" if call_tool else ""
    (directory / f"{name}.yaml").write_text(
        f"name: {name}\nagent: {agent}\nturns:\n  - user: hi\n    model:\n{steps}      - text: done\n",
        encoding="utf-8",
    )


def _plain_scenario(directory: Path, name: str) -> None:
    (directory / f"{name}.yaml").write_text(
        f"name: {name}\nturns:\n  - user: hi\n    model:\n      - text: done\n", encoding="utf-8"
    )


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    directory = tmp_path / "suite"
    directory.mkdir()
    for module, source in _AGENTS.items():
        (directory / f"{module}.py").write_text(source, encoding="utf-8")
    return directory


def _run(suite: Path, *args: str) -> tuple[int, dict[str, dict[str, object]]]:
    out = suite.parent / "out"
    result = CliRunner().invoke(app, ["run", str(suite), "--out", str(out), *args])
    report = jsonio.read_json_file(out / "report.json")
    return result.exit_code, {scenario["name"]: scenario for scenario in report["scenarios"]}


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        ("exits_at_import:agent", "importing 'exits_at_import' called sys.exit(0)"),
        ("exits_in_factory:make", "calling the factory 'exits_in_factory:make' called sys.exit(0)"),
        ("parses_arguments_at_import:agent", "called sys.exit(2) (an argparse parser run at import time"),
    ],
)
def test_sys_exit_in_the_agent_is_the_scenarios_error(
    suite: Path, agent: str, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["agentrig", "run", str(suite)])  # what argparse at import time reads
    _user_agent_scenario(suite, "exiting", agent)
    _plain_scenario(suite, "healthy")
    code, scenarios = _run(suite)
    assert code == 3
    assert scenarios["healthy"]["status"] == "passed"
    assert scenarios["exiting"]["status"] == "error"
    assert expected in str(scenarios["exiting"]["error"])


def test_sys_exit_in_a_tool_errors_its_scenario_and_the_next_ones_still_run(suite: Path) -> None:
    # The tool runs in a task of pydantic-ai's own, where a SystemExit stops the event loop the sequential run
    # drives every scenario from: the scenarios after it must still run, in a new one.
    _plain_scenario(suite, "a-before")
    _user_agent_scenario(suite, "b-exiting", "exits_in_a_tool:agent", call_tool=True)
    _plain_scenario(suite, "c-after")
    _plain_scenario(suite, "d-after")
    code, scenarios = _run(suite)
    assert code == 3
    assert scenarios["b-exiting"]["status"] == "error"
    assert "sys.exit(4)" in str(scenarios["b-exiting"]["error"])
    assert [scenarios[name]["status"] for name in ("a-before", "c-after", "d-after")] == ["passed"] * 3


@pytest.mark.parametrize("healthy", [6, 40], ids=["one-per-task", "batches"])
def test_a_worker_that_dies_errors_its_scenario_and_keeps_every_other_result(suite: Path, healthy: int) -> None:
    _user_agent_scenario(suite, "aborting", "aborts_in_a_tool:agent", call_tool=True)
    for index in range(healthy):
        _plain_scenario(suite, f"healthy-{index}")
    code, scenarios = _run(suite, "-j", "2")
    assert code == 3
    assert scenarios.pop("aborting")["error"] == {
        "kind": "agent_error",
        "message": "the worker process running this scenario died (a crash, os.abort() or the OOM killer)",
    }
    assert {name: scenario["status"] for name, scenario in scenarios.items()} == {
        f"healthy-{index}": "passed" for index in range(healthy)
    }
