"""Where a write of `jsonio.open_atomic_files` goes, decided by what the path names when the write starts.

    a regular file, or nothing yet     a temporary file beside it, fsynced, renamed over it (atomic); a symbolic
                                       link to a regular file is written through: its target is replaced, the link
                                       stays. Folders the write had to create are removed again when it fails.
    /dev/stdout, /dev/stderr,          the process's own descriptor, written as the shell opened it (a terminal,
    /dev/fd/N, /proc/self/fd/N         a pipe, `> file`, `>> file`, bash's `>(...)`)
    a FIFO or a character device       written through, never renamed over: `-o /dev/null` discards the output,
                                       `-o /dev/full` is a full disk, a named pipe gets the bytes; the node stays
    a directory                        IsADirectoryError (the callers say "is a directory; name the file")
    a dangling symbolic link           refused: the link may point anywhere, and agentrig does not create its target
    a block device, a socket           refused: nothing a user means by "write the output there"

Nothing is ever renamed over a path that is not a regular file: the check is made again just before the rename.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO, Literal

from agentrig.errors import UsageError
from agentrig.runtime.runfolder.stale_temps import remove_stale_temp_files, temp_prefix

__all__ = ["PendingFile", "Replacement", "TargetState", "WriteThrough", "open_target", "target_state"]

TargetState = Literal["nothing", "an empty file", "something"]
"""What a path names before a write that must not destroy data: nothing (a dangling link too), an empty regular
file, or anything else."""


def target_state(path: str | Path) -> TargetState:
    """What `path` names now, links followed (`TargetState`): a session is saved only over nothing, an empty file or
    one that is a session (`history/sessions.py` reads it to tell)."""
    target = Path(path)
    if not target.exists():
        return "nothing"
    return "an empty file" if target.is_file() and target.stat().st_size == 0 else "something"


_DESCRIPTOR_PATH = re.compile(r"/(?:dev/fd|proc/self/fd)/(\d+)")
_STANDARD_STREAMS = {"/dev/stdout": 1, "/dev/stderr": 2}


def _descriptor_of(path: str | Path) -> int | None:
    """The descriptor a path like /dev/stdout or /dev/fd/63 stands for, or None for any other path."""
    text = os.path.normpath(os.fspath(path))
    if text in _STANDARD_STREAMS:
        return _STANDARD_STREAMS[text]
    match = _DESCRIPTOR_PATH.fullmatch(text)
    return int(match.group(1)) if match else None


def describe_mode(mode: int) -> str:
    """What kind of file system node `mode` (from stat) is, for a message."""
    kinds = (
        (stat.S_ISREG, "regular file"),
        (stat.S_ISDIR, "directory"),
        (stat.S_ISLNK, "symbolic link"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    )
    return next((name for test, name in kinds if test(mode)), "special file")


class Replacement:
    """A temporary file next to the target, renamed over it by `commit` once written and fsynced."""

    write_through = False

    def __init__(self, path: str | Path) -> None:
        # A symbolic link to a regular file is written through: its target is replaced, the link stays.
        self.target = Path(os.path.realpath(path))
        self._created = _make_parents(self.target.parent)
        self.temporary: Path | None = None
        try:
            remove_stale_temp_files(self.target)  # what a writer killed mid-save (kill -9) left behind
            descriptor, name = tempfile.mkstemp(prefix=temp_prefix(self.target), suffix=".tmp", dir=self.target.parent)
        except BaseException:
            self._remove_created_folders()
            raise
        self.temporary = Path(name)
        self.handle: BinaryIO = os.fdopen(descriptor, "wb")
        try:
            # mkstemp creates the file 0600; keep the mode of the file being replaced, or use the usual 0644.
            try:
                mode = self.target.stat().st_mode & 0o777
            except OSError:
                mode = 0o644
            os.fchmod(self.handle.fileno(), mode)
        except BaseException:
            self.discard()
            raise

    def finish(self) -> None:
        """Flush, fsync and close: the data is on disk before the file is renamed over its target."""
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.handle.close()

    def commit(self) -> None:
        """Rename the written file over the target, unless something other than a regular file took its place."""
        assert self.temporary is not None
        try:
            mode = os.lstat(self.target).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            raise UsageError(
                f"{self.target}: became a {describe_mode(mode)} while agentrig wrote it; nothing was renamed over it"
            )
        os.replace(self.temporary, self.target)
        self.temporary = None

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self.handle.close()
        if self.temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.temporary)
        self._remove_created_folders()

    def _remove_created_folders(self) -> None:
        """The folders this write created (`golden/` for a first golden file), removed again if still empty."""
        for folder in reversed(self._created):
            try:
                folder.rmdir()
            except OSError:
                return


class WriteThrough:
    """A FIFO, a character device or an inherited descriptor: written in place, never replaced."""

    write_through = True
    temporary: Path | None = None

    def __init__(self, path: str | Path, descriptor: int | None) -> None:
        self.target = Path(path)
        if descriptor is not None:
            handle = os.dup(descriptor)
        else:
            # No O_CREAT, no O_TRUNC: the node stays what it is. A FIFO blocks here until a reader opens it, as a
            # shell's `> fifo` does.
            handle = os.open(path, os.O_WRONLY | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
            mode = os.fstat(handle).st_mode
            if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):  # replaced by something else since it was looked at
                os.close(handle)
                raise UsageError(f"{path}: became a {describe_mode(mode)} while agentrig opened it; nothing written")
        self.handle: BinaryIO = os.fdopen(handle, "wb")

    def finish(self) -> None:
        # No fsync: a pipe or a device has nothing to sync (EINVAL), and /dev/full fails the flush itself.
        try:
            self.handle.flush()
        finally:
            self.handle.close()

    def commit(self) -> None:
        """Nothing to rename: the bytes went straight through."""

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self.handle.close()


PendingFile = Replacement | WriteThrough


def open_target(path: str | Path) -> PendingFile:
    """Start a write of `path`, by the rules in the module docstring."""
    descriptor = _descriptor_of(path)
    if descriptor is not None:
        return WriteThrough(path, descriptor)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            raise UsageError(
                f"{path}: is a symbolic link to {os.readlink(path)}, which does not exist; agentrig does not create "
                "a link's target: remove the link or name another file"
            ) from None
        return Replacement(path)
    if stat.S_ISREG(mode):
        return Replacement(path)
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return WriteThrough(path, None)
    raise UsageError(
        f"{path}: is a {describe_mode(mode)}; agentrig writes a regular file, a FIFO or a character device such as "
        "/dev/null there, nothing else"
    )


def _make_parents(folder: Path) -> list[Path]:
    """Create `folder` and its missing parents; returns the folders created, outermost first."""
    missing: list[Path] = []
    current = folder
    while not os.path.lexists(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    created: list[Path] = []
    for directory in reversed(missing):
        try:
            directory.mkdir()
        except FileExistsError:
            continue
        except BaseException:
            for made in reversed(created):
                with contextlib.suppress(OSError):
                    made.rmdir()
            raise
        created.append(directory)
    return created
