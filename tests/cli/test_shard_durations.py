"""`agentrig run --shard K/N --durations REPORT` end to end: the shards of a suite partition it whether the durations
file is usable or not, the report records the plan, and merge refuses shards dealt by different plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrig.runtime.suite import scenario_run
from tests.cli.cli_helpers import run_main
from tests.runtime.runner_fakes import fake_execute
from tests.runtime.test_runner import write_scenario


@pytest.fixture(autouse=True)
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario_run, "_default_execute", lambda: fake_execute)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("CI", raising=False)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    for index in range(10):
        write_scenario(directory, f"s{index}")
    return directory


def durations_report(tmp_path: Path, suite: Path, slow: str) -> Path:
    """An earlier run's report.json in which `slow` took 30 s and every other scenario 1 s."""
    entries = [
        {"id": f"{path.as_posix()}::{path.stem}", "duration_s": 30.0 if path.stem == slow else 1.0}
        for path in sorted(suite.glob("*.yaml"))
    ]
    path = tmp_path / "earlier" / "report.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"format": "agentrig.report/1", "scenarios": entries}), encoding="utf-8")
    return path


def shard_names(out: Path) -> list[str]:
    return [entry["name"] for entry in json.loads((out / "report.json").read_text("utf-8"))["scenarios"]]


def run_shards(
    tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str], *extra: str, label: str = "shard"
) -> tuple[list[Path], str]:
    outs: list[Path] = []
    notes = ""
    for index in (1, 2, 3):
        out = tmp_path / f"{label}{index}"
        code, _, err = run_main(capsys, "run", str(suite), "-q", "--shard", f"{index}/3", "--out", str(out), *extra)
        assert code == 0, err
        notes += err
        outs.append(out)
    return outs, notes


def test_durations_give_the_slow_scenario_a_shard_of_its_own_and_merge_gets_the_whole_suite(
    tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    earlier = durations_report(tmp_path, suite, slow="s7")

    outs, notes = run_shards(tmp_path, suite, capsys, "--durations", str(earlier))

    assert notes == ""
    shards = [shard_names(out) for out in outs]
    assert ["s7"] in shards
    assert sorted(name for shard in shards for name in shard) == sorted(f"s{index}" for index in range(10))
    plans = {json.loads((out / "report.json").read_text("utf-8"))["shard"]["plan"] for out in outs}
    assert len(plans) == 1
    assert plans.pop().startswith("durations ")
    code, _, err = run_main(capsys, "merge", *map(str, outs), "--out", str(tmp_path / "merged"))
    assert code == 0, err
    assert len(shard_names(tmp_path / "merged")) == 10


def test_an_unusable_durations_file_falls_back_to_count_with_a_note_and_drops_nothing(
    tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    by_count, _ = run_shards(tmp_path, suite, capsys, label="count")
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text("{", encoding="utf-8")

    outs, notes = run_shards(tmp_path, suite, capsys, "--durations", str(corrupt))

    assert notes.count(f"agentrig: note: --durations {corrupt}: not usable (") == 3
    assert notes.count("; shards balanced by count\n") == 3
    assert [shard_names(out) for out in outs] == [shard_names(out) for out in by_count]


def test_merge_refuses_shards_dealt_by_different_plans(
    tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    earlier = durations_report(tmp_path, suite, slow="s7")
    with_durations, _ = run_shards(tmp_path, suite, capsys, "--durations", str(earlier))
    by_count, _ = run_shards(tmp_path, suite, capsys, label="count")

    # Shard 1 found the durations file, shards 2 and 3 did not: their union may repeat or miss scenarios.
    mixed = [with_durations[0], by_count[1], by_count[2]]
    code, _, err = run_main(capsys, "merge", *map(str, mixed), "--out", str(tmp_path / "merged"))

    assert code == 2
    assert "merge: the shards were dealt by different plans (count, durations " in err
    assert not (tmp_path / "merged").exists()


def test_durations_without_shard_is_a_usage_error(
    tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(capsys, "run", str(suite), "--durations", "x.json", "--out", str(tmp_path / "out"))
    assert (code, err) == (2, "agentrig: error: --durations balances shards: it needs --shard K/N\n")
