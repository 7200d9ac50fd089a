"""`agentrig diff`: normalized diffs of history files and run output directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.suite import scenario_run
from tests.cli.cli_helpers import exit_code_and_stderr
from tests.runtime.runner_fakes import fake_execute
from tests.runtime.test_runner import write_scenario

cli = CliRunner()


def history(text: str, run_id: str) -> list[dict[str, object]]:
    return [
        {"kind": "request", "run_id": run_id, "parts": [{"part_kind": "text", "content": "hi"}]},
        {"kind": "response", "run_id": run_id, "parts": [{"part_kind": "text", "content": text}]},
    ]


def test_identical_after_normalization(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps(history("hello", "run-1")), encoding="utf-8")
    # another run id and the tagged canonical form: the same history
    second.write_text(
        json.dumps({"format": "agentrig.history/1", "messages": history("hello", "run-2")}), encoding="utf-8"
    )
    result = cli.invoke(app, ["diff", str(first), str(second)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "identical\n"


def test_different_histories_exit_1_with_a_unified_diff(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps(history("hello", "r")), encoding="utf-8")
    second.write_text(json.dumps(history("goodbye", "r")), encoding="utf-8")
    result = cli.invoke(app, ["diff", str(first), str(second)])
    assert result.exit_code == 1
    assert f"--- {first}" in result.stdout
    assert '-          "content": "hello"' in result.stdout
    assert '+          "content": "goodbye"' in result.stdout
    quiet = cli.invoke(app, ["diff", "-q", str(first), str(second)])
    assert quiet.exit_code == 1
    assert quiet.stdout == ""


def test_run_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario_run, "_default_execute", lambda: fake_execute)
    directory = tmp_path / "scenarios"
    directory.mkdir()
    write_scenario(directory, "one")
    write_scenario(directory, "two")
    outs = [str(tmp_path / name) for name in ("out-a", "out-b")]
    for out in outs:
        assert cli.invoke(app, ["run", str(directory), "-q", "--out", out]).exit_code == 0
    same = cli.invoke(app, ["diff", *outs])
    assert same.exit_code == 0, same.output
    write_scenario(directory, "two", text="changed")
    write_scenario(directory, "three")
    cli.invoke(app, ["run", str(directory), "-q", "--out", outs[1]])
    changed = cli.invoke(app, ["diff", *outs])
    assert changed.exit_code == 1
    assert f"only in {outs[1]}: three" in changed.stdout
    assert '+          "content": "changed"' in changed.stdout


def test_file_and_directory_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = tmp_path / "a.json"
    first.write_text(json.dumps(history("x", "r")), encoding="utf-8")
    code, err = exit_code_and_stderr(["diff", str(first), str(tmp_path)], capsys)
    assert code == 2
    assert "one of each" in err
    assert err.count("\n") == 1


def test_keys_never_reach_the_diff(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps(history("key: sk-proj-abcdefghijkl0123", "r")), encoding="utf-8")
    second.write_text(json.dumps(history('Client(api_key="YOUR_KEY")', "r")), encoding="utf-8")
    result = cli.invoke(app, ["diff", str(first), str(second)])
    assert result.exit_code == 1, result.output
    assert "[REDACTED]" in result.stdout
    assert "sk-proj-abcdefghijkl0123" not in result.stdout
    assert "YOUR_KEY" not in result.stdout
