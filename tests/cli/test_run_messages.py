"""What `agentrig run` tells a newcomer: which golden files it wrote, and where the reports are."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig.runtime.suite import scenario_run
from tests.runtime.runner_fakes import fake_execute
from tests.runtime.test_runner import write_scenario


@pytest.fixture(autouse=True)
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario_run, "_default_execute", lambda: fake_execute)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("CI", raising=False)


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code: object = 0
    try:
        main(["run", *args])
    except SystemExit as exit_:
        code = exit_.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().out.splitlines()


def _reports_line(out: Path) -> str:
    return f"reports: {out}/ (report.html, report.json, junit.xml, summary.md; per scenario scenarios/NAME/)"


def test_update_golden_names_the_files_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    write_scenario(directory, "gold", extra="  golden: golden/gold.json\n")
    write_scenario(directory, "plain")
    out = tmp_path / "out"
    golden = directory / "golden" / "gold.json"
    args = [str(directory), "--out", str(out), "--update-golden"]

    code, lines = _run(args, capsys)
    assert code == 0
    assert lines[-4:-1] == [
        f"golden written: {golden}",
        "golden files: 1 written or updated, 0 unchanged",
        _reports_line(out),
    ]

    code, lines = _run(args, capsys)
    assert code == 0
    assert lines[-3:-1] == ["golden files: 0 written or updated, 1 unchanged", _reports_line(out)]


def test_the_reports_line_names_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_scenario(tmp_path, "alpha")
    code, lines = _run([str(tmp_path), "--out", str(tmp_path / "out")], capsys)
    assert code == 0
    assert lines[-2] == _reports_line(tmp_path / "out")
