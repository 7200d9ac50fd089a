"""No file `agentrig run` writes contains an API key, whatever a tool or the model echoed."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app

SECRET = "sk-agentrig-test-0123456789abcdef"

_SCENARIO = f"""\
name: leaky-tool
tools:
  env:
    results:
      - return: "OPENAI_API_KEY={SECRET}"
turns:
  - user: Show me the environment.
    model:
      - tool_calls: [{{id: tc_1, name: env, args: {{}}}}]
        usage: {{input_tokens: 10, output_tokens: 2}}
      - text: "The key is {SECRET}."
        usage: {{input_tokens: 20, output_tokens: 8}}
"""


def test_run_outputs_never_contain_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    (tmp_path / "leaky.yaml").write_text(_SCENARIO, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(tmp_path / "leaky.yaml"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = [path for path in out.rglob("*") if path.is_file()]
    assert {path.name for path in written} >= {"report.json", "junit.xml", "summary.md", "history.json", "session.json"}
    for path in written:
        assert SECRET not in path.read_text(encoding="utf-8"), path
    assert "[REDACTED]" in (out / "scenarios" / "leaky-tool" / "history.json").read_text(encoding="utf-8")
    assert SECRET not in result.output
