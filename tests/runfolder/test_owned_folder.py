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
from agentrig.runtime.runfolder import jsonio, owned_files
from agentrig.runtime.runfolder.output_manifest import MANIFEST_NAME, append_records, checked_relative, read_manifest
from agentrig.runtime.runfolder.owned_folder import Layout, OwnedFolder
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


def _saved_by_rename(path: Path, text: str) -> None:
    """What an editor's save does: the new text written to a temporary file, renamed over the name."""
    temporary = path.with_name(f"{path.name}.editor-save")
    temporary.write_text(text)
    os.replace(temporary, path)


@pytest.mark.parametrize("hard_links", [True, False], ids=["hard-links", "no-hard-links"])
def test_a_file_saved_over_a_stale_one_while_it_is_removed_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hard_links: bool
) -> None:
    out = tmp_path / "out"
    _run(out, "a", "text")
    folder = _claim(out)  # this run writes only b: a's files are stale, removed by finish
    _written(out, "b", "text")
    stale = out / "scenarios" / "a" / "history.json"

    # The stale file is hashed and found agentrig's; the user saves over its name (write a temporary file, rename it
    # over) after that check and before the removal. The hash is the last step of the check, so the save lands in
    # exactly that window, with no timing involved.
    real_digest = owned_files.digest_of

    def saved_after_the_hash(descriptor: int) -> str:
        digest = real_digest(descriptor)
        if os.fstat(descriptor).st_ino == os.stat(stale).st_ino:
            _saved_by_rename(stale, "the user's save\n")
        return digest

    def no_hard_links(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(1, "Operation not permitted")  # what a FAT or SMB mount answers

    monkeypatch.setattr(owned_files, "digest_of", saved_after_the_hash)
    if not hard_links:
        monkeypatch.setattr(owned_files.os, "link", no_hard_links)
    folder.finish()
    monkeypatch.undo()

    assert stale.read_text() == "the user's save\n"
    assert not (out / "scenarios" / "a" / "usage.json").exists()  # still agentrig's: removed
    assert sorted(os.listdir(out / "scenarios" / "a")) == ["history.json"]  # the user's file back at its name


def test_a_file_saved_over_a_stale_one_twice_while_it_is_removed_is_kept_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    _run(out, "a", "text")
    folder = _claim(out)
    _written(out, "b", "text")
    stale = out / "scenarios" / "a" / "history.json"

    # The first save lands after the hash (it is what is moved aside), the second after the move aside: the first is
    # not put back over the second, and neither is removed.
    real_digest = owned_files.digest_of
    real_rename = os.rename

    def saved_after_the_hash(descriptor: int) -> str:
        digest = real_digest(descriptor)
        if os.fstat(descriptor).st_ino == os.stat(stale).st_ino:
            _saved_by_rename(stale, "the first save\n")
        return digest

    def saved_again_after_the_move(source: Any, target: Any, **kwargs: Any) -> None:
        real_rename(source, target, **kwargs)
        if source == "history.json":
            _saved_by_rename(stale, "the second save\n")

    monkeypatch.setattr(owned_files, "digest_of", saved_after_the_hash)
    monkeypatch.setattr(owned_files.os, "rename", saved_again_after_the_move)
    folder.finish()
    monkeypatch.undo()

    assert stale.read_text() == "the second save\n"
    (kept,) = [name for name in os.listdir(stale.parent) if name != "history.json"]
    assert (stale.parent / kept).read_text() == "the first save\n"
    assert f"scenarios/a/history.json was saved while agentrig removed it; the earlier save is kept as {kept}" in (
        capsys.readouterr().err
    )


def test_a_file_edited_in_place_while_it_is_removed_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    _run(out, "a", "text")
    folder = _claim(out)
    _written(out, "b", "text")
    stale = out / "scenarios" / "a" / "history.json"

    real_digest = owned_files.digest_of

    def edited_after_the_hash(descriptor: int) -> str:
        digest = real_digest(descriptor)
        if os.fstat(descriptor).st_ino == os.stat(stale).st_ino:
            stale.write_text("written in place, the same file\n")
        return digest

    monkeypatch.setattr(owned_files, "digest_of", edited_after_the_hash)
    folder.finish()

    assert stale.read_text() == "written in place, the same file\n"


def test_a_file_saved_at_a_report_name_while_the_run_ran_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    folder = _claim(out)
    folder.write("report.json", b"{}\n")  # the run's first report, as it starts
    _saved_by_rename(out / "report.json", "the user's notes\n")  # saved there while the run runs

    with pytest.raises(UsageError, match=r"report\.json: agentrig did not write it \(it appeared while agentrig"):
        jsonio.write_atomic(out / "report.json", b'{"done": true}\n', before_replace=folder.record_replaced)

    assert (out / "report.json").read_text() == "the user's notes\n"
    assert sorted(os.listdir(out)) == [MANIFEST_NAME, "report.json"]  # the new report's temporary file discarded
