"""One meaning of "error" in every front end (issue 31, item 4; docs/exit-codes.md): a scenario *errors* when the
run could not judge it (a provider failed, the agent could not load: exit code 3); a tool that raises or a turn
that runs past its timeout is the agent's own behaviour, so the scenario *fails* (exit code 1) and that error is
its *cause*. The CLI, report.json, junit.xml, summary.md and the page say the same."""

from __future__ import annotations

import contextlib
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from agentrig.runtime.runfolder import jsonio
from tests.reports.explain_runs import write_explain_suite
from tests.reports.runs import run_cli


def test_a_cause_fails_and_an_error_errors_in_every_front_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with contextlib.chdir(tmp_path):
        write_explain_suite(Path("suite"))
        capsys.readouterr()
        assert run_cli("run", "suite/cause.yaml", "suite/missing_agent.yaml", "--out", "out") == 3
        printed = capsys.readouterr().out
    assert "FAIL tool-error-cause (suite/cause.yaml)\n  cause tool_failed: tool 'write_file' call #1 failed" in printed
    assert "ERROR agent-missing (suite/missing_agent.yaml)\n  error agent_error (raised while running" in printed
    assert printed.rstrip().endswith("0 passed, 1 failed, 0 skipped, 1 error")

    out = tmp_path / "out"
    entries = {entry["name"]: entry for entry in jsonio.read_json_file(out / "report.json")["scenarios"]}
    assert (entries["tool-error-cause"]["status"], entries["tool-error-cause"]["error"]["kind"]) == (
        "failed",
        "tool_failed",
    )
    assert (entries["agent-missing"]["status"], entries["agent-missing"]["error"]["kind"]) == ("error", "agent_error")

    cases = {case.get("name"): case for case in ElementTree.parse(out / "junit.xml").getroot().iter("testcase")}
    failure = cases["tool-error-cause"].find("failure")
    assert failure is not None
    assert failure.get("type") == "tool_failed"
    assert failure.get("message", "").startswith("tool_failed: tool 'write_file' call #1 failed: disk full")
    assert (failure.text or "").startswith("cause tool_failed: ")
    error = cases["agent-missing"].find("error")
    assert error is not None
    assert error.get("type") == "agent_error"

    summary = (out / "summary.md").read_text(encoding="utf-8")
    # summary.md shows the message as text (markdown escaped: write\_file)
    assert "- **cause** `tool_failed`: tool 'write\\_file' call #1 failed: disk full" in summary
    assert "- **error** `agent_error`: " in summary
