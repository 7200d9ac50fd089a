"""`agentrig run` usage errors: one line, exit 2, and the previous run's output left as it was."""

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


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        main(["run", *args])
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    return code, capsys.readouterr().err


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    write_scenario(directory, "alpha")
    return directory


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "nosuchprovider:x"], "nosuchprovider"),
        (["--replay", "no-such-recordings"], "--replay no-such-recordings: no such directory"),
        (["-k", "nothing"], "selects none"),
        (["--engine", "tinyagent", "--model", "openai:gpt-4o"], "--engine tinyagent runs the scenarios' scripts only"),
        (["--engine", "tinyagent", "--replay", "."], "drop --replay"),
    ],
)
def test_a_usage_error_leaves_the_previous_run_untouched(
    suite_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    keep = tmp_path / "keep"
    assert _run([str(suite_dir), "--out", str(keep)], capsys)[0] == 0
    before = sorted(p.relative_to(keep).as_posix() for p in keep.rglob("*"))

    code, err = _run([str(suite_dir), "--out", str(keep), *args], capsys)

    assert code == 2, err
    assert message in err
    assert err.count("\n") == 1
    assert sorted(p.relative_to(keep).as_posix() for p in keep.rglob("*")) == before


def test_an_out_directory_that_cannot_be_created_is_one_line_and_exit_2(
    suite_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")

    code, err = _run([str(suite_dir), "--out", str(blocker / "out")], capsys)

    assert code == 2
    assert err.startswith(f"agentrig: error: --out {blocker / 'out'}: cannot write there (")
    assert err.count("\n") == 1


def test_a_deeply_nested_keyword_is_one_line_and_exit_2(
    suite_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run([str(suite_dir), "--out", str(tmp_path / "out"), "-k", "(" * 5000 + "alpha" + ")" * 5000], capsys)

    assert code == 2
    assert "-k" in err
    assert "nested" in err
    assert err.count("\n") == 1
