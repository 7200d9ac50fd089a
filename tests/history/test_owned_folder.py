"""The output folder's manifest (`output_manifest`) and the claim on the folder (`owned_folder`): what proves a file
agentrig's, and that the proof survives a killed run, many writers at once and a full disk."""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import UsageError
from agentrig.runtime.history import jsonio
from agentrig.runtime.history.output_manifest import MANIFEST_NAME, append_records, checked_relative, read_manifest
from agentrig.runtime.history.owned_folder import Layout, OwnedFolder
from agentrig.runtime.suite.outputs import scenario_files
from agentrig.runtime.suite.outputs.scenario_files import write_folder

LAYOUT = Layout(kind="run", files=frozenset({"report.json"}), trees=frozenset({"scenarios"}))


def _claim(folder: Path) -> OwnedFolder:
    return OwnedFolder.claim(folder, label=f"--out {folder}", layout=LAYOUT)


def _written(folder: Path, name: str, text: str) -> None:
    write_folder(folder, f"scenarios/{name}", [("history.json", text.encode()), ("usage.json", b"{}")])


def _run(out: Path, name: str, text: str) -> None:
    """A whole run writing one scenario's folder."""
    folder = _claim(out)
    _written(out, name, text)
    folder.finish()


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../x", "leads outside"),
        ("scenarios/../../x", "leads outside"),
        ("/etc/passwd", "is absolute"),
        ("scenarios//a", "not in plain form"),
        ("./report.json", "not in plain form"),
        ("scenarios\\a", "is not a path agentrig writes"),
        ("", "expected a relative path"),
        (MANIFEST_NAME, "the manifest itself"),
    ],
)
def test_a_recorded_path_stays_inside_the_folder(path: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        checked_relative(path)
    assert checked_relative("scenarios/a/subagents/x.run1.history.json") == "scenarios/a/subagents/x.run1.history.json"


def test_a_run_killed_after_recording_its_writes_leaves_every_file_provable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    _run(out, "a", "the first run")

    # The second run is killed (SIGKILL, stood for by an exception nothing catches) right after its first file is
    # on disk: every write is recorded before it is made, so what the folder holds is still provably agentrig's.
    real_write = scenario_files._write_file  # pyright: ignore[reportPrivateUsage]

    def killed_after_one_file(path: Path, data: bytes, kept: str) -> None:
        real_write(path, data, kept)
        raise SystemExit("killed")

    _claim(out)
    monkeypatch.setattr(scenario_files, "_write_file", killed_after_one_file)
    with pytest.raises(SystemExit):
        _written(out, "a", "the second run, longer than the first")
    monkeypatch.undo()
    assert (out / "scenarios" / "a" / "history.json").read_text() == "the second run, longer than the first"

    folder = _claim(out)  # accepted: nothing there is unproven
    _written(out, "b", "the third run")
    folder.finish()
    assert sorted(path.name for path in (out / "scenarios").iterdir()) == ["b"]


APPENDS = 5000


def _append_many(folder: str, writer: int, start: Any) -> None:
    start.wait()  # every writer appends at the same time
    for number in range(APPENDS):
        line = {"file": f"scenarios/w{writer}/f{number}-" + "x" * 200, "size": number, "sha256": "a" * 64}
        append_records(Path(folder), [line], kept="")


def test_lines_appended_by_many_processes_at_once_stay_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _claim(out)
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(4)
    writers = [context.Process(target=_append_many, args=(str(out), writer, start)) for writer in range(4)]
    for process in writers:
        process.start()
    for process in writers:
        process.join()
        assert process.exitcode == 0

    manifest = read_manifest(out, label="out")
    assert manifest is not None
    assert len(manifest.records) == 4 * APPENDS  # not one line lost or run into another


def test_a_line_a_full_disk_cut_short_proves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _run(out, "a", "text")
    (out / "scenarios" / "a" / "mine.txt").write_text("the user's\n")
    digest = "0" * 64
    with (out / MANIFEST_NAME).open("a") as manifest:  # an append cut short, and one run into by the next
        manifest.write('{"file": "scenarios/a/mine.txt", "si{"dir": "scenarios/z"}\n{"file": "scenarios/a/mine')
        manifest.write(f'.txt", "size": 11, "sha256": "{digest}')

    with pytest.raises(UsageError, match=r"scenarios/a/mine\.txt: agentrig did not write it"):
        _claim(out)
    assert (out / "scenarios" / "a" / "mine.txt").read_text() == "the user's\n"


def test_a_file_changed_while_the_run_ran_is_not_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _run(out, "a", "text")

    folder = _claim(out)  # verified as the run starts; the run then writes only b
    _written(out, "b", "text")
    (out / "scenarios" / "a" / "history.json").write_text("edited while the run ran\n")
    folder.finish()

    assert (out / "scenarios" / "a" / "history.json").read_text() == "edited while the run ran\n"
    assert not (out / "scenarios" / "a" / "usage.json").exists()  # still agentrig's: removed


def test_nothing_is_renamed_over_what_took_the_targets_place_while_it_was_written(tmp_path: Path) -> None:
    target = tmp_path / "schema.json"
    target.write_text("before\n")

    def written_while_a_fifo_takes_its_place() -> None:
        with jsonio.open_atomic(target) as handle:
            handle.write(b"after\n")
            target.unlink()
            os.mkfifo(target)

    with pytest.raises(UsageError, match="became a FIFO while agentrig wrote it; nothing was renamed over it"):
        written_while_a_fifo_takes_its_place()

    assert stat.S_ISFIFO(os.lstat(target).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["schema.json"]
