"""`agentrig run` end to end through the CLI, with the fake engine (tests/test_suite.py runs the real one)."""

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


@pytest.fixture(autouse=True)
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario_run, "_default_execute", lambda: fake_execute)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("CI", raising=False)


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    write_scenario(directory, "alpha", tags="[fast]")
    write_scenario(directory, "beta")
    return directory


def test_all_pass_exit_0_with_plain_lines_and_summary(suite_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = cli.invoke(app, ["run", str(suite_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:2] == ["[1/2] alpha ... PASS", "[2/2] beta ... PASS"]
    assert lines[-1] == "2 passed, 0 failed, 0 skipped"
    assert (out / "report.json").is_file()
    assert (out / "junit.xml").is_file()
    assert (out / "summary.md").is_file()


def test_failure_exit_1_shows_expected_and_actual(suite_dir: Path, tmp_path: Path) -> None:
    write_scenario(suite_dir, "gamma", text="wrong")
    result = cli.invoke(app, ["run", str(suite_dir), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    assert "[3/3] gamma ... FAIL" in result.stdout
    assert "FAIL gamma (" in result.stdout
    assert "  turn 1: output.equals" in result.stdout
    assert "    actual:   wrong" in result.stdout
    assert result.stdout.splitlines()[-1] == "2 passed, 1 failed, 0 skipped"


def test_keyword_shard_and_quiet(suite_dir: Path, tmp_path: Path) -> None:
    result = cli.invoke(app, ["run", str(suite_dir), "-k", "fast", "-q", "--out", str(tmp_path / "o1")])
    assert result.exit_code == 0, result.output
    assert result.stdout == "1 passed, 0 failed, 0 skipped\n"
    totals = 0
    for index in (1, 2):
        shard = cli.invoke(
            app, ["run", str(suite_dir), "--shard", f"{index}/2", "-q", "--out", str(tmp_path / f"s{index}")]
        )
        assert shard.exit_code == 0, shard.output
        totals += int(shard.stdout.split()[0])
    assert totals == 2


def test_json_prints_the_report_on_stdout(suite_dir: Path, tmp_path: Path) -> None:
    result = cli.invoke(app, ["run", str(suite_dir), "--json", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["format"] == "agentrig.report/1"
    assert report["summary"]["passed"] == 2
    assert "2 passed, 0 failed, 0 skipped" in result.stderr


def test_step_summary_is_appended(suite_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = cli.invoke(app, ["run", str(suite_dir), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# earlier step\n## agentrig: 2 passed, 0 failed, 0 skipped\n")


def test_update_golden_writes_goldens(tmp_path: Path) -> None:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    write_scenario(directory, "gold", extra="  golden: golden/gold.json\n")
    out = str(tmp_path / "out")
    missing = cli.invoke(app, ["run", str(directory), "--out", out])
    assert missing.exit_code == 1
    assert "--update-golden" in missing.stdout
    updated = cli.invoke(app, ["run", str(directory), "--out", out, "--update-golden"])
    assert updated.exit_code == 0, updated.output
    assert (directory / "golden" / "gold.json").is_file()
    again = cli.invoke(app, ["run", str(directory), "--out", out])
    assert again.exit_code == 0, again.output


def test_interrupt_exit_130_with_partial_report(tmp_path: Path) -> None:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    write_scenario(directory, "c1")
    write_scenario(directory, "c2", text="CTRL-C")
    out = tmp_path / "out"
    result = cli.invoke(app, ["run", str(directory), "--out", str(out)])
    assert result.exit_code == 130, result.output
    assert "interrupted" in result.stdout
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["interrupted"] is True
    assert [s["status"] for s in report["scenarios"]] == ["passed", "skipped"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--shard", "3/2"], "--shard 3/2"),
        (["-k", "nothing"], "selects none"),
        (["-k", "a and"], "ends too early"),
        (["missing-dir"], "no such file or directory"),
    ],
)
def test_usage_errors_exit_2(
    suite_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    paths = [] if args[0] == "missing-dir" else [str(suite_dir)]
    code, err = exit_code_and_stderr(["run", *paths, *args, "--out", str(tmp_path / "out")], capsys)
    assert code == 2
    assert message in err
    assert err.count("\n") == 1  # one line, no traceback


def test_provider_error_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    (directory / "down.yaml").write_text(
        "name: down\nturns:\n  - user: hi\n    model:\n      - error: {kind: server_error, message: '503'}\n",
        encoding="utf-8",
    )
    write_scenario(directory, "wrong", text="x")
    code, _ = exit_code_and_stderr(["run", str(directory), "--out", str(tmp_path / "out")], capsys)
    assert code == 3


def test_cli_reference_is_generated_from_help() -> None:
    """docs/cli.md is exactly what scripts/gen_cli_docs.py renders (run it after changing any --help).

    In a fresh interpreter: typer decides once, at import, whether to render help with rich, and this
    test process has imported typer long before agentrig's CLI could set its plain-text default."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    checked = subprocess.run(
        [sys.executable, str(root / "scripts" / "gen_cli_docs.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stderr
    assert "## agentrig run\n" in (root / "docs" / "cli.md").read_text(encoding="utf-8")
