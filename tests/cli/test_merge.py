"""`agentrig merge`: shard outputs -> one report, through the CLI."""

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


def test_merge_shards_like_an_unsharded_run(tmp_path: Path) -> None:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    for index in range(8):
        write_scenario(directory, f"m{index}", text="wrong" if index == 5 else "done")
    whole = cli.invoke(app, ["run", str(directory), "-q", "--out", str(tmp_path / "whole")])
    assert whole.exit_code == 1
    shards: list[str] = []
    for index in (1, 2):
        shard_out = str(tmp_path / f"shard{index}")
        cli.invoke(app, ["run", str(directory), "-q", "--shard", f"{index}/2", "--out", shard_out])
        shards.append(shard_out)
    merged = cli.invoke(app, ["merge", *shards, "--out", str(tmp_path / "merged"), "--json"])
    assert merged.exit_code == 1, merged.output
    report = json.loads(merged.stdout)
    expected = json.loads((tmp_path / "whole" / "report.json").read_text(encoding="utf-8"))
    assert report["summary"] | {"duration_s": 0} == expected["summary"] | {"duration_s": 0}
    assert [s["id"] for s in report["scenarios"]] == [s["id"] for s in expected["scenarios"]]
    assert merged.stderr.splitlines()[-1] == whole.stdout.splitlines()[-1] == "7 passed, 1 failed, 0 skipped"


def test_merge_of_a_non_output_dir_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = exit_code_and_stderr(["merge", str(tmp_path), "--out", str(tmp_path / "m")], capsys)
    assert code == 2
    assert err == f"agentrig: error: {tmp_path}: no report.json (not an agentrig run output directory)\n"
