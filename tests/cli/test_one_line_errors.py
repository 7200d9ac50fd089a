"""Bad input and unwritable places give one line on stderr and exit 2, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.suite import scenario_run
from tests.cli.cli_helpers import exit_code_and_stderr
from tests.runtime.runner_fakes import fake_execute
from tests.runtime.test_runner import write_scenario

HISTORY = {
    "format": "agentrig.history/1",
    "messages": [
        {"kind": "request", "parts": [{"part_kind": "text", "content": "hi"}]},
        {"kind": "response", "parts": [{"part_kind": "text", "content": "hello"}]},
    ],
}


@pytest.fixture(autouse=True)
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario_run, "_default_execute", lambda: fake_execute)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("CI", raising=False)


def _one_line(err: str) -> str:
    assert err.startswith("agentrig: error: "), err
    assert err.count("\n") == 1, err
    return err


def _deeply_nested(tmp_path: Path, depth: int = 300) -> Path:
    value: object = "bottom"
    for _ in range(depth):
        value = [value]
    document = json.loads(json.dumps(HISTORY))
    document["messages"][0]["parts"][0]["content"] = "hi"
    document["messages"][1]["parts"].append({"part_kind": "tool-call", "tool_call_id": "c", "tool_name": "t"})
    document["messages"].append(
        {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_call_id": "c", "tool_name": "t"}]}
    )
    document["messages"][2]["parts"][0]["content"] = value
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_convert_to_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "h.json"
    source.write_text(json.dumps(HISTORY), encoding="utf-8")
    folder = tmp_path / "folder"
    folder.mkdir()

    code, err = exit_code_and_stderr(["convert", str(source), "-o", str(folder)], capsys)

    assert code == 2
    assert f"-o {folder}: is a directory" in _one_line(err)
    assert sorted(tmp_path.iterdir()) == sorted([source, folder])


@pytest.mark.parametrize("verb", ["convert", "check"])
def test_json_nested_too_deeply_is_refused_by_every_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], verb: str
) -> None:
    path = _deeply_nested(tmp_path)

    code, err = exit_code_and_stderr([verb, str(path)], capsys)

    assert code == 2
    assert "nested more than" in _one_line(err)


def test_json_nested_within_the_limit_converts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _deeply_nested(tmp_path, depth=200)
    assert exit_code_and_stderr(["convert", str(path), "-o", str(tmp_path / "out.json")], capsys)[0] == 0


def test_a_scenario_name_too_long_for_a_file_name_is_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "long.yaml").write_text(f"name: {'n' * 300}\nturns:\n  - user: hi\n    model: [{{text: hello}}]\n")

    validated, _ = exit_code_and_stderr(["validate", str(tmp_path)], capsys)
    ran, run_err = exit_code_and_stderr(["run", str(tmp_path), "--out", str(tmp_path / "out")], capsys)

    assert validated == 2
    assert ran == 2
    assert "at most 100 characters" in _one_line(run_err)


def test_an_unwritable_step_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_scenario(tmp_path, "alpha")
    summary_target = tmp_path / "summary-folder"
    summary_target.mkdir()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_target))

    code, err = exit_code_and_stderr(["run", str(tmp_path), "-q", "--out", str(tmp_path / "out")], capsys)

    assert code == 2
    assert f"GITHUB_STEP_SUMMARY {summary_target}: cannot append" in _one_line(err)
    assert (tmp_path / "out" / "report.json").is_file()  # the run's reports are written first


def _break_report(report: dict[str, Any], change: str) -> None:
    if change == "no scenarios":
        del report["scenarios"]
    elif change == "scenario without id":
        report["scenarios"] = [{"name": "x"}]
    else:
        del report["summary"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("no scenarios", "missing 'scenarios'"),
        ("scenario without id", "scenarios[0]: missing 'id'"),
        ("no summary", "missing 'summary'"),
    ],
)
def test_merge_of_a_report_missing_what_merge_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: str, message: str
) -> None:
    write_scenario(tmp_path, "alpha")
    shard = tmp_path / "shard"
    assert exit_code_and_stderr(["run", str(tmp_path), "-q", "--out", str(shard)], capsys)[0] == 0
    report_path = shard / "report.json"
    report = json.loads(report_path.read_text(encoding="utf-8"))
    _break_report(report, change)
    report_path.write_text(json.dumps(report), encoding="utf-8")

    code, err = exit_code_and_stderr(["merge", str(shard), "--out", str(tmp_path / "merged")], capsys)

    assert code == 2
    assert message in _one_line(err)
    assert str(report_path) in err
