"""`-o` on what is not a regular file (issue 27, item 2): a FIFO, a character device and /dev/stdout are written
through and stay what they are; a dangling link, a socket and a block device are refused with one line; nothing is
ever renamed over a node that is not a regular file. The system's own /dev/null and /dev/full are only ever written
through: `os.replace` is guarded in every test here so that a broken writer fails the test instead of replacing them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO

import pytest

from agentrig.scenarios.schema import STORED_SCHEMA_PATH
from tests.cli.cli_helpers import run_main

SCHEMA = STORED_SCHEMA_PATH.read_bytes()
HISTORY = (
    '[{"kind": "request", "parts": [{"part_kind": "text", "content": "hi"}]},'
    ' {"kind": "response", "parts": [{"part_kind": "text", "content": "hello"}]}]'
)


@pytest.fixture(autouse=True)
def never_replace_a_system_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any rename onto /dev fails the test before it happens."""
    real_replace = os.replace

    def guarded(source: str | os.PathLike[str], target: str | os.PathLike[str], **kwargs: object) -> None:
        if os.path.realpath(target).startswith("/dev/"):
            raise AssertionError(f"agentrig tried to rename a file over {target}")
        real_replace(source, target, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", guarded)


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "history.json"
    path.write_text(HISTORY, encoding="utf-8")
    return path


@pytest.fixture
def run_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "s.yaml").write_text("name: s\nturns:\n  - user: hi\n    model:\n      - text: hello\n")
    assert run_main(capsys, "run", str(scenarios), "--out", str(tmp_path / "run"), "-q")[0] == 0
    return tmp_path / "run"


def _argv(command: str, target: Path, history: Path, run_dir: Path) -> list[str]:
    return {
        "schema": ["schema", "-o", str(target)],
        "convert": ["convert", str(history), "-o", str(target)],
        "report": ["report", str(run_dir), "-o", str(target)],
    }[command]


def _kind(path: Path) -> int:
    return stat.S_IFMT(os.lstat(path).st_mode)


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A named pipe with `cat` reading it (as bash's `>(...)` or `mkfifo p; cat p &` would)."""
    path = tmp_path / "pipe"
    os.mkfifo(path)
    reader = subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE)
    yield path, reader
    if reader.poll() is None:  # nothing ever opened the pipe for writing: a writer renamed over it
        reader.kill()
        reader.wait()
        assert reader.stdout is not None
        reader.stdout.close()


@pytest.mark.parametrize("command", ["schema", "convert", "report"])
def test_a_fifo_is_written_through_and_stays_a_fifo(
    command: str,
    fifo: tuple[Path, subprocess.Popen[bytes]],
    history: Path,
    run_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, reader = fifo
    code, _, err = run_main(capsys, *_argv(command, path, history, run_dir))

    assert code == 0, err
    assert _kind(path) == stat.S_IFIFO
    received, _ = reader.communicate(timeout=30)  # a bound on a hang, never on speed
    assert received.startswith(b"<!doctype html>" if command == "report" else b"{")
    if command == "schema":
        assert received == SCHEMA


@pytest.mark.parametrize("command", ["schema", "convert", "report"])
def test_dev_null_takes_the_output_and_stays_the_null_device(
    command: str, history: Path, run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = os.stat("/dev/null")
    code, _, err = run_main(capsys, *_argv(command, Path("/dev/null"), history, run_dir))

    assert (code, err.splitlines()[-1:]) == (0, err.splitlines()[-1:]), err
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert not [name for name in os.listdir("/dev") if name.startswith(".null.")]  # no temporary file left there


def test_dev_full_is_a_full_disk_written_through(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = os.stat("/dev/full")
    code, _, err = run_main(capsys, "convert", str(history), "-o", "/dev/full")

    assert code == 3
    assert err == (
        f"agentrig: error: /dev/full: cannot write the file ({os.strerror(errno.ENOSPC)}); it is not a regular file,"
        " so it was written in place: what reached it stays\n"
    )
    after = os.stat("/dev/full")
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def _device_copy(tmp_path: Path, name: str, kind: int, major: int, minor: int) -> Path:
    """A device node in the test's folder (root only), standing for /dev's: a writer that renames over it replaces
    this one, never the system's."""
    path = tmp_path / name
    try:
        os.mknod(path, kind | 0o666, os.makedev(major, minor))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    return path


@pytest.mark.parametrize(("name", "major", "minor", "code"), [("null", 1, 3, 0), ("full", 1, 7, 3)])
def test_a_character_device_anywhere_is_never_renamed_over(
    name: str, major: int, minor: int, code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    device = _device_copy(tmp_path, name, stat.S_IFCHR, major, minor)

    assert run_main(capsys, "schema", "-o", str(device))[0] == code

    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert os.lstat(device).st_rdev == os.makedev(major, minor)
    assert sorted(os.listdir(tmp_path)) == [name]


@contextlib.contextmanager
def _socket(tmp_path: Path) -> Generator[Path]:
    path = tmp_path / "socket"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    try:
        yield path
    finally:
        server.close()


@pytest.mark.parametrize("kind", ["dangling-link", "socket", "block-device"])
def test_what_cannot_take_a_file_is_refused_with_one_line(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sockets = contextlib.ExitStack()
    if kind == "dangling-link":
        target = tmp_path / "link"
        target.symlink_to(tmp_path / "missing" / "schema.json")
        says = f"is a symbolic link to {tmp_path / 'missing' / 'schema.json'}, which does not exist"
    elif kind == "socket":
        target = sockets.enter_context(_socket(tmp_path))
        says = "is a socket; agentrig writes a regular file, a FIFO or a character device"
    else:
        target = _device_copy(tmp_path, "disk", stat.S_IFBLK, 7, 0)
        says = "is a block device; agentrig writes a regular file, a FIFO or a character device"
    before = _kind(target)

    code, out, err = run_main(capsys, "schema", "-o", str(target))

    sockets.close()
    assert (code, out) == (2, "")
    assert err.startswith(f"agentrig: error: {target}: {says}")
    assert len(err.splitlines()) == 1
    assert _kind(target) == before
    assert not (tmp_path / "missing").exists()  # a dangling link's target (and its folder) is never created


def test_scaffold_force_never_replaces_a_fifo(
    history: Path, fifo: tuple[Path, subprocess.Popen[bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = fifo
    code, _, err = run_main(capsys, "scaffold", str(history), "-o", str(path), "--force")

    assert code == 2
    assert err == (
        f"agentrig: error: -o {path}: is neither a folder nor a .yaml file; -o names the scenario file to write (one"
        " source: NAME.yaml, with golden/ and histories/ beside it) or the folder to fill\n"
    )
    assert _kind(path) == stat.S_IFIFO
    assert not (path.parent / "golden").exists()


def _agentrig(*args: str, stdout: int | IO[bytes]) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}
    return subprocess.run(
        [sys.executable, "-m", "agentrig", *args], stdout=stdout, stderr=subprocess.PIPE, env=env, check=False
    )


def test_dev_stdout_is_the_standard_output_as_the_shell_opened_it(tmp_path: Path) -> None:
    piped = _agentrig("schema", "-o", "/dev/stdout", stdout=subprocess.PIPE)
    assert (piped.returncode, piped.stdout) == (0, SCHEMA), piped.stderr

    log = tmp_path / "log.txt"
    log.write_bytes(b"earlier lines\n")
    with log.open("ab") as appended:  # `agentrig schema -o /dev/stdout >> log.txt`
        assert _agentrig("schema", "-o", "/dev/stdout", stdout=appended).returncode == 0
    assert log.read_bytes() == b"earlier lines\n" + SCHEMA


def test_a_failed_first_write_leaves_no_folder_behind(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # scaffold on a full disk left an empty golden/ (issue 27, item 4); so would any first write into a new folder.
    def no_space(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)
    suite = tmp_path / "suite"

    code, _, err = run_main(capsys, "scaffold", str(history), "-o", str(suite / "s.yaml"))
    assert code == 3, err
    assert "cannot write the files" in err
    assert not suite.exists()

    code, _, err = run_main(capsys, "schema", "-o", str(tmp_path / "a" / "b" / "schema.json"))
    assert code == 3, err
    assert not (tmp_path / "a").exists()
