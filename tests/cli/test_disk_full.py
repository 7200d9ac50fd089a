"""A full disk during `run` and `merge`: one line on stderr, exit code 3, and nothing written before lost (the
reports of the run before stay whole, the inputs of a merge untouched). The disk fills up at the write boundary:
`os.fsync` of an atomic write (delayed allocation reports it there) or `os.write` of a scenario's file."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from agentrig.errors import OutputWriteError
from agentrig.runtime.runfolder import jsonio
from tests.cli.cli_helpers import run_main

SCENARIO = """\
name: {name}
turns:
  - user: Hello?
    model:
      - text: Hello.
"""

NO_SPACE = os.strerror(errno.ENOSPC)


def _no_space(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, NO_SPACE)


def _fails_the_second_time(fsync: Callable[[int], None]) -> Callable[[int], None]:
    """`fsync` that finds the disk full on its second call: the first of a run's report files is written by then."""
    calls: list[int] = []

    def fsync_until_full(descriptor: int) -> None:
        calls.append(descriptor)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, NO_SPACE)
        fsync(descriptor)

    return fsync_until_full


def _suite(tmp_path: Path) -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    for name in ("alpha", "beta"):
        (folder / f"{name}.yaml").write_text(SCENARIO.format(name=name), encoding="utf-8")
    return folder


def _files(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file()
    }


def _one_error_line(err: str) -> None:
    assert err.startswith("agentrig: error: ")
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err


def _fsync_full_for(pattern: str, *, after: int = 0) -> Callable[[int], None]:
    """`os.fsync` that finds the disk full for a file whose path holds `pattern`, past the first `after` of them."""
    real_fsync = os.fsync
    seen: list[int] = []

    def fsync(descriptor: int) -> None:
        if pattern in os.readlink(f"/proc/self/fd/{descriptor}"):
            seen.append(descriptor)
            if len(seen) > after:
                raise OSError(errno.ENOSPC, NO_SPACE)
        real_fsync(descriptor)

    return fsync


REPORT_FILES = ("report.json", "junit.xml", "summary.md", "report.html")


def test_run_out_of_space_as_it_starts_keeps_the_reports_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite, out = _suite(tmp_path), tmp_path / "out"
    assert run_main(capsys, "run", str(suite), "--out", str(out))[0] == 0
    before = _files(out)
    monkeypatch.setattr(os, "fsync", _fsync_full_for(".summary.md."))  # the first report file a run writes

    code, _, err = run_main(capsys, "run", str(suite), "--out", str(out))

    assert code == 3
    _one_error_line(err)
    assert err.endswith(
        f"cannot write the files ({NO_SPACE}); none was replaced, and the run stopped before it ran a scenario\n"
    )
    after = _files(out)
    assert {name: after[name] for name in REPORT_FILES} == {name: before[name] for name in REPORT_FILES}
    assert {name: data for name, data in after.items() if name.startswith("scenarios/")} == {
        name: data for name, data in before.items() if name.startswith("scenarios/")
    }
    assert not [path for path in out.iterdir() if path.name.endswith(".tmp")]


def test_run_out_of_space_for_its_reports_leaves_reports_that_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The disk fills as the run writes its own reports, after it replaced the earlier run's with interrupted ones:
    # the message says what is left, and what is left agrees with it and with itself (issue 27, item 4).
    suite, out = _suite(tmp_path), tmp_path / "out"
    assert run_main(capsys, "run", str(suite), "--out", str(out))[0] == 0
    monkeypatch.setattr(os, "fsync", _fsync_full_for(".summary.md.", after=1))

    code, _, err = run_main(capsys, "run", str(suite), "--out", str(out))

    assert code == 3
    _one_error_line(err)
    assert err.endswith(
        f"cannot write the files ({NO_SPACE}); none was replaced: the reports say the run was interrupted before it "
        "reported any scenario (they replaced the earlier run's reports when it started)\n"
    )
    assert sorted(path.name for path in out.iterdir() if path.name in REPORT_FILES) == sorted(REPORT_FILES)
    report = jsonio.read_json_file(out / "report.json")
    assert (report["interrupted"], report["scenarios"], report["summary"]["total"]) == (True, [], 0)
    assert '<testsuites name="agentrig" tests="0"' in (out / "junit.xml").read_text(encoding="utf-8")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## agentrig: 0 passed, 0 failed, 0 skipped\n")
    assert "**interrupted**" in summary
    assert not [path for path in out.iterdir() if path.name.endswith(".tmp")]


def test_run_out_of_space_for_a_scenario_file_stops_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite, out = _suite(tmp_path), tmp_path / "out"
    assert run_main(capsys, "run", str(suite), "--out", str(out))[0] == 0
    report = (out / "report.json").read_bytes()
    real_write = os.write
    scenarios = str(out / "scenarios")

    def write_with_a_full_disk(descriptor: int, data: object) -> int:
        if os.readlink(f"/proc/self/fd/{descriptor}").startswith(scenarios):
            raise OSError(errno.ENOSPC, NO_SPACE)
        return real_write(descriptor, data)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "write", write_with_a_full_disk)

    code, _, err = run_main(capsys, "run", str(suite), "--out", str(out))

    assert code == 3
    _one_error_line(err)
    assert err.endswith(
        f"/scenarios/alpha/usage.json: cannot write the file ({NO_SPACE}); the run stopped before writing its reports"
        " (they say it was interrupted)\n"
    )
    # Never the earlier run's green report beside folders this run half replaced: the report says interrupted.
    stopped = jsonio.read_json_file(out / "report.json")
    assert (out / "report.json").read_bytes() != report
    assert stopped["interrupted"] is True
    assert stopped["scenarios"] == []
    assert not (out / "scenarios" / "alpha" / "usage.json").exists()  # never half one run's file, half another's


def _shards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[Path]:
    suite = _suite(tmp_path)
    shards = [tmp_path / "shard1", tmp_path / "shard2"]
    for number, shard in enumerate(shards, start=1):
        assert run_main(capsys, "run", str(suite), "--shard", f"{number}/2", "--out", str(shard))[0] == 0
    return shards


def _reports_fill_the_disk(patch: pytest.MonkeyPatch) -> None:
    patch.setattr(os, "fsync", _fsync_full_for(".summary.md."))


def _copies_fill_the_disk(patch: pytest.MonkeyPatch) -> None:
    real_write = os.write

    def write_with_a_full_disk(descriptor: int, data: object) -> int:
        if "/merged/scenarios/" in os.readlink(f"/proc/self/fd/{descriptor}"):
            raise OSError(errno.ENOSPC, NO_SPACE)
        return real_write(descriptor, data)  # type: ignore[arg-type]

    patch.setattr(os, "write", write_with_a_full_disk)


@pytest.mark.parametrize(
    ("fill_up", "says"),
    [
        (_reports_fill_the_disk, f"cannot write the files ({NO_SPACE}); none was replaced"),
        (
            _copies_fill_the_disk,
            f"cannot write the file ({NO_SPACE}); the merge stopped before writing its reports; the input directories "
            "are unchanged",
        ),
    ],
    ids=["reports", "scenario-files"],
)
def test_merge_out_of_space_keeps_its_inputs_and_the_reports_before(
    fill_up: Callable[[pytest.MonkeyPatch], None],
    says: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shards, merged = _shards(tmp_path, capsys), tmp_path / "merged"
    assert run_main(capsys, "merge", *map(str, shards), "--out", str(merged))[0] == 0
    inputs = [_files(shard) for shard in shards]
    reports = {name: (merged / name).read_bytes() for name in ("report.json", "junit.xml", "summary.md")}
    fill_up(monkeypatch)

    code, out, err = run_main(capsys, "merge", *map(str, shards), "--out", str(merged))

    assert (code, out) == (3, "")
    _one_error_line(err)
    assert says in err
    assert [_files(shard) for shard in shards] == inputs
    assert {name: (merged / name).read_bytes() for name in reports} == reports


def test_atomic_files_are_replaced_all_or_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_bytes(b"old first")
    second.write_bytes(b"old second")
    monkeypatch.setattr(os, "fsync", _fails_the_second_time(os.fsync))

    def write_both() -> None:
        with jsonio.open_atomic_files(first, second) as (one, two):
            one.write(b"new first")
            two.write(b"new second")

    with pytest.raises(OutputWriteError) as raised:
        write_both()

    assert raised.value.message == f"{first}, {second}: cannot write the files ({NO_SPACE}); none was replaced"
    assert (first.read_bytes(), second.read_bytes()) == (b"old first", b"old second")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["first.txt", "second.txt"]


def test_convert_out_of_space_keeps_the_file_it_would_replace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    history = tmp_path / "history.json"
    history.write_text('[{"kind": "request", "parts": [{"part_kind": "text", "content": "hi"}]}]', encoding="utf-8")
    output = tmp_path / "converted.json"
    output.write_text("the conversion before\n", encoding="utf-8")
    monkeypatch.setattr(os, "fsync", _no_space)

    code, _, err = run_main(capsys, "convert", str(history), "-o", str(output))

    assert code == 3
    assert err == f"agentrig: error: {output}: cannot write the file ({NO_SPACE}); what it held before is unchanged\n"
    assert output.read_text(encoding="utf-8") == "the conversion before\n"
