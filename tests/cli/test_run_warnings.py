"""`agentrig run` records the warnings each scenario showed (report.json, summary.md, junit.xml, the last lines), the
same at -j 1 and -j 2, under the user's filters. Real processes: at -j 2 the forkserver imports the agent's module
before any scenario runs, and only a fresh one does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.runfolder import jsonio
from tests.cli.run_process import EXIT_WITHIN_S

_AGENT = textwrap.dedent(
    """
    import time
    import warnings
    from pydantic_ai import Agent

    warnings.warn("noisy_agent is imported", UserWarning)


    class LegacyApiWarning(UserWarning):
        '''A deprecation as pydantic-ai's own PydanticAIDeprecationWarning is one: shown by default.'''


    agent = Agent(None)


    @agent.tool_plain
    def legacy() -> str:  # sync: pydantic-ai runs it in a thread
        warnings.warn("legacy() is going away, use modern()", LegacyApiWarning)
        warnings.warn("a DeprecationWarning, hidden by Python's default filters", DeprecationWarning)
        return "ok"


    @agent.tool_plain
    async def loud() -> str:
        warnings.warn("loud has something to say", UserWarning)
        return "ok"


    @agent.tool_plain
    async def block() -> str:  # blocks the event loop: the run gives up on the scenario
        warnings.warn("about to block", UserWarning)
        time.sleep(3600)
        return "never"
    """
)


def _suite(tmp_path: Path, *names: str, tools: str = "legacy, loud", extra: str = "") -> Path:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "noisy_agent.py").write_text(_AGENT, encoding="utf-8")
    calls = ", ".join(f"{{id: t{n}, name: {tool.strip()}, args: {{}}}}" for n, tool in enumerate(tools.split(",")))
    for name in names:
        (suite / f"{name}.yaml").write_text(
            f"name: {name}\nagent: noisy_agent:agent\n{extra}turns:\n  - user: hi\n    model:\n"
            f"      - tool_calls: [{calls}]\n      - text: done\n",
            encoding="utf-8",
        )
    return suite


def _run(suite: Path, out: Path, *args: str, warning_options: str | None = None) -> tuple[int, str, str]:
    env = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}
    env.pop("PYTHONWARNINGS", None)
    if warning_options is not None:
        env["PYTHONWARNINGS"] = warning_options
    process = subprocess.run(
        [sys.executable, "-m", "agentrig", "run", str(suite), "--out", str(out), *args],
        cwd=suite.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=EXIT_WITHIN_S,
    )
    return process.returncode, process.stdout, process.stderr


def _warnings(out: Path) -> dict[str, list[dict[str, Any]]]:
    report: dict[str, Any] = jsonio.read_json_file(out / "report.json")
    return {scenario["name"]: scenario["warnings"] for scenario in report["scenarios"]}


def _record(category: str, message: str, count: int = 1) -> dict[str, Any]:
    return {"category": category, "message": message, "module": "noisy_agent", "count": count}


_SHOWN = [
    _record("LegacyApiWarning", "legacy() is going away, use modern()"),
    _record("UserWarning", "loud has something to say"),
    _record("UserWarning", "noisy_agent is imported"),
]
"""What each scenario shows under Python's default filters (the DeprecationWarning is hidden by them)."""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_each_scenario_records_its_warnings_in_every_report(tmp_path: Path, jobs: str) -> None:
    suite = _suite(tmp_path, "first", "second", "third")
    out = tmp_path / "out"
    code, stdout, stderr = _run(suite, out, "-j", jobs)
    assert code == 0, stdout + stderr
    # Every scenario, the first to import the module or not, whichever process imported it.
    assert _warnings(out) == {"first": _SHOWN, "second": _SHOWN, "third": _SHOWN}
    report: dict[str, Any] = jsonio.read_json_file(out / "report.json")
    assert (report["totals"]["warnings"], report["totals"]["scenarios_warned"]) == (9, 3)
    assert "warnings: 9 shown in 3 scenarios\n" in stdout
    # Data, not Python's two lines each (`file:line: UserWarning: ...` and the source line).
    assert "UserWarning" not in stderr, stderr
    assert "warnings.warn(" not in stderr, stderr
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "### Warnings" in summary
    assert (
        "| `LegacyApiWarning`: legacy() is going away, use modern() | `noisy_agent` | 3 | `first`, `second`, `third` |"
        in summary
    )
    case = ElementTree.parse(out / "junit.xml").getroot().find(".//testcase[@name='second']")
    assert case is not None
    assert case.findtext("system-err") == (
        "warning: LegacyApiWarning: legacy() is going away, use modern() (noisy_agent)\n"
        "warning: UserWarning: loud has something to say (noisy_agent)\n"
        "warning: UserWarning: noisy_agent is imported (noisy_agent)\n"
    )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_users_filters_decide_what_is_shown_and_what_is_an_error(tmp_path: Path, jobs: str) -> None:
    suite = _suite(tmp_path, "only")
    shown_out, error_out, ignored_out = tmp_path / "shown", tmp_path / "error", tmp_path / "ignored"
    code, stdout, stderr = _run(suite, shown_out, "-j", jobs, warning_options="default::DeprecationWarning")
    assert code == 0, stdout + stderr
    deprecation = _record("DeprecationWarning", "a DeprecationWarning, hidden by Python's default filters")
    assert _warnings(shown_out) == {"only": [deprecation, *_SHOWN]}
    # An `error` filter makes the warning the exception it always made: the agent's module does not import (at -j 2
    # not in the forkserver either, and the worker imports it again), the scenario is an error.
    code, stdout, stderr = _run(suite, error_out, "-j", jobs, warning_options="error::UserWarning:noisy_agent")
    assert code == 3, stdout + stderr
    scenario = jsonio.read_json_file(error_out / "report.json")["scenarios"][0]
    assert scenario["error"]["kind"] == "agent_error"
    assert scenario["error"]["message"].endswith(
        "only.yaml:2: agent: importing 'noisy_agent' failed: UserWarning: noisy_agent is imported"
    )
    assert scenario["warnings"] == []
    code, stdout, stderr = _run(suite, ignored_out, "-j", jobs, warning_options="ignore")
    assert code == 0, stdout + stderr
    assert _warnings(ignored_out) == {"only": []}
    assert "warnings:" not in stdout


def test_a_scenario_the_run_gives_up_on_keeps_the_warnings_it_showed(tmp_path: Path) -> None:
    # The tool blocks the event loop, so the turn's own timeout cannot end it: the run gives the scenario up past its
    # whole budget (2 s for the turn, 5 s more for its agent and deps). 2 s is far more than the tools take to start.
    suite = _suite(tmp_path, "blocked", tools="loud, block", extra="settings: {timeout: 2}\n")
    out = tmp_path / "out"
    code, stdout, stderr = _run(suite, out)
    assert code == 1, stdout + stderr
    scenario = jsonio.read_json_file(out / "report.json")["scenarios"][0]
    assert scenario["error"]["kind"] == "timeout"
    assert "was abandoned" in scenario["error"]["message"]
    assert scenario["warnings"] == [
        _record("UserWarning", "about to block"),
        _record("UserWarning", "loud has something to say"),
        _record("UserWarning", "noisy_agent is imported"),
    ]
