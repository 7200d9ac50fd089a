"""A YAML tool's `fail` with `raises: CLASS` fails the turn as a real tool raising CLASS does, on both engines: the
history closes the call with `tool 'NAME' (call ID) raised CLASS: MESSAGE` (what `agentrig scaffold` reads back)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.engine.tinyagent_engine.execution import execute_scenario_tinyagent
from agentrig.runtime.history.canonical import ToolReturnPart
from agentrig.runtime.history.sessions import load_history_file
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.suite.runner import RunOptions, run_suite

SCENARIO = """name: raises
tools:
  rm:
    results: [{fail: "no such file: /tmp/a", raises: FileNotFoundError}]
turns:
  - user: Delete /tmp/a
    model:
      - tool_calls: [{id: r1, name: rm, args: {path: /tmp/a}}]
    expect:
      error: {kind: tool_failed, contains: "raised FileNotFoundError: no such file: /tmp/a"}
"""


@pytest.mark.parametrize("engine", ["pydantic-ai", "tinyagent"])
def test_fail_with_raises_reads_as_the_real_tools_exception(tmp_path: Path, engine: str) -> None:
    (tmp_path / "raises.yaml").write_text(SCENARIO, encoding="utf-8")
    execute = execute_scenario_tinyagent if engine == "tinyagent" else None
    run_suite(RunOptions(paths=(tmp_path / "raises.yaml",), out_dir=tmp_path / "out"), execute=execute)
    (scenario,) = jsonio.loads((tmp_path / "out" / "report.json").read_bytes())["scenarios"]
    assert scenario["status"] == "passed", scenario["checks"]
    history = load_history_file(tmp_path / "out" / "scenarios" / "raises" / "history.json")
    closed = [part for message in history for part in message.parts if isinstance(part, ToolReturnPart)]
    assert [(part.tool_call_id, part.outcome, part.content) for part in closed] == [
        ("r1", "failed", "tool 'rm' (call r1) raised FileNotFoundError: no such file: /tmp/a")
    ]
