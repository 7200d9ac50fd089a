"""`agentrig merge` refuses what would make its verdict false or reach outside its directories: an incomplete
or repeated set of shards, and report paths that lead elsewhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app, main
from agentrig.runtime.suite import scenario_run
from tests.cli.cli_helpers import run_main
from tests.runtime.runner_fakes import fake_execute
from tests.runtime.test_runner import write_scenario

cli = CliRunner()


@pytest.fixture(autouse=True)
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario_run, "_default_execute", lambda: fake_execute)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def shards(tmp_path: Path) -> list[Path]:
    """The four shard outputs of a 12-scenario suite."""
    directory = tmp_path / "scenarios"
    directory.mkdir()
    for index in range(12):
        write_scenario(directory, f"s{index}")
    outputs: list[Path] = []
    for index in range(1, 5):
        out = tmp_path / f"shard{index}"
        result = cli.invoke(app, ["run", str(directory), "-q", "--shard", f"{index}/4", "--out", str(out)])
        assert result.exit_code == 0, result.output
        outputs.append(out)
    return outputs


@pytest.fixture
def merge(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str]]:
    """`agentrig merge ARGS` through the console entry point: (exit code, stderr)."""

    def run(*args: object) -> tuple[int, str]:
        capsys.readouterr()
        try:
            main(["merge", *map(str, args)])
            code = 0
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        return code, capsys.readouterr().err

    return run


def test_each_shard_report_records_its_index_and_count(shards: list[Path]) -> None:
    for index, shard in enumerate(shards, start=1):
        report = json.loads((shard / "report.json").read_text(encoding="utf-8"))
        assert report["shard"] == {"index": index, "count": 4, "plan": "count"}
        assert len(report["scenarios"]) == 3  # 12 scenarios dealt evenly over 4 shards


def test_an_incomplete_set_of_shards_is_refused(
    shards: list[Path], tmp_path: Path, merge: Callable[..., tuple[int, str]]
) -> None:
    code, err = merge(shards[0], shards[2], "--out", tmp_path / "merged")
    assert code == 2
    assert err == (
        "agentrig: error: merge: shard 2, 4 of 4 missing (got 1, 3); pass --allow-partial to merge an incomplete set\n"
    )
    assert not (tmp_path / "merged").exists()


def test_allow_partial_merges_an_incomplete_set(
    shards: list[Path], tmp_path: Path, merge: Callable[..., tuple[int, str]]
) -> None:
    code, _ = merge(shards[0], shards[2], "--out", tmp_path / "merged", "--allow-partial")
    assert code == 0
    report = json.loads((tmp_path / "merged" / "report.json").read_text(encoding="utf-8"))
    assert report["summary"]["total"] == 6


def test_a_repeated_shard_is_refused(shards: list[Path], tmp_path: Path, merge: Callable[..., tuple[int, str]]) -> None:
    copy = tmp_path / "copy-of-2"
    copy.mkdir()
    (copy / "report.json").write_bytes((shards[1] / "report.json").read_bytes())
    report = json.loads((copy / "report.json").read_text(encoding="utf-8"))
    report["scenarios"] = []  # an empty repeat shares no scenario with the original: the shard index tells
    (copy / "report.json").write_text(json.dumps(report), encoding="utf-8")
    code, err = merge(*shards, copy, "--out", tmp_path / "merged")
    assert (code, err) == (2, "agentrig: error: merge: shard 2 of 4 given more than once\n")


def test_shards_of_different_counts_are_refused(
    shards: list[Path], tmp_path: Path, merge: Callable[..., tuple[int, str]]
) -> None:
    report = json.loads((shards[3] / "report.json").read_text(encoding="utf-8"))
    report["shard"] = {"index": 4, "count": 5}
    (shards[3] / "report.json").write_text(json.dumps(report), encoding="utf-8")
    code, err = merge(*shards, "--out", tmp_path / "merged")
    assert code == 2
    assert "shards of different counts (of 4, 5)" in err


@pytest.mark.parametrize("output_dir", ["../../outside", "/tmp/agentrig-outside", "scenarios/../..", "."])
def test_report_paths_outside_the_input_are_refused(
    shards: list[Path], tmp_path: Path, output_dir: str, merge: Callable[..., tuple[int, str]]
) -> None:
    victim = tmp_path / "outside"
    victim.mkdir()
    (victim / "secret.txt").write_text("not yours", encoding="utf-8")
    report = json.loads((shards[0] / "report.json").read_text(encoding="utf-8"))
    report["scenarios"][0]["output_dir"] = output_dir
    (shards[0] / "report.json").write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "nested" / "merged"
    code, err = merge(*shards, "--out", out)
    name = report["scenarios"][0]["name"]
    assert code == 2
    assert err == (
        f"agentrig: error: {shards[0] / 'report.json'}: scenarios[0]: output_dir: {output_dir!r} is not "
        f"'scenarios/{name}'\n"
    )
    assert not out.exists()  # refused before anything was written
    assert [path.name for path in tmp_path.rglob("secret.txt")] == ["secret.txt"]  # nothing copied anywhere


def test_a_partial_merge_says_so_in_every_report(
    shards: list[Path], tmp_path: Path, merge: Callable[..., tuple[int, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    merged = tmp_path / "merged"
    code, stdout, _ = run_main(capsys, "merge", str(shards[0]), str(shards[2]), "--out", str(merged), "--allow-partial")
    assert code == 0
    assert stdout.splitlines()[0] == f"merged 2 outputs into {merged} (partial: shard 2, 4 of 4 missing)"
    report = json.loads((merged / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] == {"count": 4, "missing": [2, 4]}
    assert "**partial: shard 2, 4 of 4 missing**" in (merged / "summary.md").read_text(encoding="utf-8")
    assert '<property name="partial" value="shard 2, 4 of 4 missing"' in (merged / "junit.xml").read_text("utf-8")

    # A complete merge is not partial; and a partial merge merged again stays partial.
    complete = tmp_path / "complete"
    assert merge(*shards, "--out", complete)[0] == 0
    assert json.loads((complete / "report.json").read_text(encoding="utf-8"))["partial"] is None
    again = tmp_path / "again"
    assert merge(merged, "--out", again)[0] == 0
    assert json.loads((again / "report.json").read_text(encoding="utf-8"))["partial"] == {"count": 4, "missing": [2, 4]}


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("name", "..", "name: '..' is not a scenario name"),
        ("name", "<img src=x onerror=alert(1)>", "name: '<img src=x onerror=alert(1)>' is not a scenario name"),
        ("name", "a/../../b", "name: 'a/../../b' is not a scenario name"),
        ("id", "scenarios/other.yaml::s0", "id: 'scenarios/other.yaml::s0' is not "),
        ("path", "x\n# injected", "path: 'x\\n# injected' is not a scenario file path"),
    ],
    ids=["dot-dot", "html", "slashes", "id", "path"],
)
def test_scenario_names_and_ids_from_a_tampered_report_are_refused(
    shards: list[Path], tmp_path: Path, merge: Callable[..., tuple[int, str]], field: str, value: str, says: str
) -> None:
    # A report is input: its names become folder names and summary.md text (issue 27, item 9).
    report = json.loads((shards[1] / "report.json").read_text(encoding="utf-8"))
    report["scenarios"][0][field] = value
    (shards[1] / "report.json").write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "merged"

    code, err = merge(*shards, "--out", out)

    assert code == 2
    assert err.startswith(f"agentrig: error: {shards[1] / 'report.json'}: scenarios[0]: {says}")
    assert len(err.splitlines()) == 1
    assert not out.exists()  # refused before anything was written


def test_a_link_in_an_input_scenario_folder_is_refused(
    shards: list[Path], tmp_path: Path, merge: Callable[..., tuple[int, str]]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the merged output", encoding="utf-8")
    folder = next((shards[0] / "scenarios").iterdir())
    (folder / "history.json").unlink()
    (folder / "history.json").symlink_to(secret)
    out = tmp_path / "merged"

    code, err = merge(*shards, "--out", out)

    assert code == 2
    assert err == (
        f"agentrig: error: {folder / 'history.json'}: is a symbolic link, not a regular file; merge copies only the"
        " folders and regular files a run writes, and touched nothing\n"
    )
    assert not out.exists()


def test_merge_knows_scenario_names_by_the_scenario_models_own_rule() -> None:
    from agentrig.runtime.reports.merge_checks import NAME_LENGTH, NAME_PATTERN, SCENARIO_NAME
    from agentrig.scenarios.model import Scenario

    rules = {type(rule).__name__: rule for rule in Scenario.model_fields["name"].metadata}
    assert getattr(rules["_PydanticGeneralMetadata"], "pattern", None) == f"^{NAME_PATTERN}$"
    assert getattr(rules["MaxLen"], "max_length", None) == NAME_LENGTH
    # A run of `--repeat N` is NAME@NN in the report and on disk.
    assert SCENARIO_NAME.fullmatch("weather@03")
    assert not SCENARIO_NAME.fullmatch("weather@3")
