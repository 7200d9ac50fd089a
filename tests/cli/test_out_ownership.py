"""`run --out` and `merge --out` replace or remove only what the folder's manifest proves agentrig wrote, and refuse
any other folder before they touch it (issue 27, item 1: `run --out .` deleted a project's scenarios)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agentrig.runtime.runfolder import jsonio
from tests.cli.cli_helpers import run_main
from tests.cli.out_shapes import MANIFEST_NAME, NOT_OURS, REFUSED_SHAPES, Shape, snapshot, write_suite


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a shape may chdir into its project: undone after the test
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def _runner(capsys: pytest.CaptureFixture[str], suite: Path) -> Callable[[Path], None]:
    def earlier_run(folder: Path) -> None:
        assert run_main(capsys, "run", str(suite), "--out", str(folder), "-q")[0] == 0

    return earlier_run


def _refused(code: int, err: str, shape: Shape) -> None:
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("agentrig: error: --out ")
    assert shape.says in err
    assert NOT_OURS in err or "cannot prove" in err


@pytest.mark.parametrize("shape", REFUSED_SHAPES, ids=[shape.id for shape in REFUSED_SHAPES])
def test_run_refuses_an_out_it_cannot_prove_its_own_and_touches_nothing(
    shape: Shape, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path / "suite")
    folder = shape.prepare(tmp_path, _runner(capsys, suite))
    before = snapshot(tmp_path)

    code, _, err = run_main(capsys, "run", str(suite.resolve()), "--out", str(folder))

    _refused(code, err, shape)
    assert snapshot(tmp_path) == before
    assert Path("/etc/passwd").is_file()


@pytest.mark.parametrize("shape", REFUSED_SHAPES, ids=[shape.id for shape in REFUSED_SHAPES])
def test_merge_refuses_an_out_it_cannot_prove_its_own_and_touches_nothing(
    shape: Shape, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path / "suite")
    shards = [tmp_path / "shard1", tmp_path / "shard2"]
    for number, shard in enumerate(shards, start=1):
        assert run_main(capsys, "run", str(suite), "--shard", f"{number}/2", "--out", str(shard), "-q")[0] == 0
    folder = shape.prepare(tmp_path, _runner(capsys, suite))
    before = snapshot(tmp_path)

    code, _, err = run_main(capsys, "merge", *(str(shard.resolve()) for shard in shards), "--out", str(folder))

    _refused(code, err, shape)
    assert snapshot(tmp_path) == before


def test_a_run_replaces_its_own_files_and_leaves_the_users_beside_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path / "suite", ("alpha", "beta", "gamma"))
    out = tmp_path / "out"
    assert run_main(capsys, "run", str(suite), "--out", str(out), "-q")[0] == 0
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")  # beside the reports, at a name no run writes
    (suite / "gamma.yaml").unlink()

    code, _, err = run_main(capsys, "run", str(suite), "--out", str(out), "-q")

    assert (code, err) == (0, "")
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert sorted(path.name for path in (out / "scenarios").iterdir()) == ["alpha", "beta"]  # gamma's removed
    # The manifest lists exactly what is there now, as it is.
    manifest = (out / MANIFEST_NAME).read_text(encoding="utf-8").splitlines()
    listed = {jsonio.loads(line)["file"] for line in manifest[1:] if "file" in jsonio.loads(line)}
    on_disk = {path for path, kind in snapshot(out).items() if kind != "dir" and path not in (MANIFEST_NAME,)}
    assert listed == on_disk - {"notes.txt"}


def test_a_page_agentrig_report_writes_again_keeps_the_folder_provable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path / "suite")
    out = tmp_path / "out"
    assert run_main(capsys, "run", str(suite), "--out", str(out), "-q", "--no-html")[0] == 0
    assert run_main(capsys, "report", str(out))[0] == 0
    assert (out / "report.html").is_file()

    code, _, err = run_main(capsys, "run", str(suite), "--out", str(out), "-q", "--no-html")

    assert (code, err) == (0, "")
    assert not (out / "report.html").exists()  # --no-html: the earlier page, provably agentrig's, goes


def test_a_merge_replaces_an_earlier_merge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(tmp_path / "suite", ("alpha", "beta", "gamma", "delta"))
    shards = [tmp_path / "shard1", tmp_path / "shard2"]

    def merged_names() -> list[str]:
        for number, shard in enumerate(shards, start=1):
            assert run_main(capsys, "run", str(suite), "--shard", f"{number}/2", "--out", str(shard), "-q")[0] == 0
        code, _, err = run_main(capsys, "merge", *map(str, shards), "--out", str(tmp_path / "merged"))
        assert (code, err) == (0, "")
        return sorted(path.name for path in (tmp_path / "merged" / "scenarios").iterdir())

    assert merged_names() == ["alpha", "beta", "delta", "gamma"]
    (suite / "gamma.yaml").unlink()
    assert merged_names() == ["alpha", "beta", "delta"]
