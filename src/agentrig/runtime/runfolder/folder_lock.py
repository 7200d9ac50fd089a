"""One agentrig command per output folder: `OwnedFolder.claim` takes this lock before it reads the folder and holds it
to `finish`, so a second `agentrig run --out X` (or merge, matrix, pytest's --agentrig-out) started meanwhile is
refused at once with one line, before it reads or writes anything there.

Two commands on one folder would each prove the folder theirs, then write scenario folders over each other's and
remove what the other wrote as stale: neither run's files would survive whole. The second does not wait: a run may
take an hour, and one that waits silently looks hung in CI.

The lock is an exclusive `flock` on the folder itself (a descriptor of the directory), so there is no lock file for
the manifest to account for or for a cleanup to remove from under a holder, and the kernel releases it when the
holder exits in any way, kill -9 included. The descriptor is close-on-exec: the processes a run execs (pytest-xdist
workers, a matrix's runs into their own subfolders) never hold it. A second claim of a folder this process already
holds (a test, the same session) shares the lock instead of refusing itself. Where the file system has no `flock`
(some network mounts answer EBADF or ENOLCK) the command goes on unlocked, as before this lock existed.

On Linux the message names the holder's process id, read from /proc/locks.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from agentrig.errors import UsageError

__all__ = ["FolderInUseError", "FolderLock", "lock_folder"]

_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC

_HELD: dict[tuple[int, int], int] = {}
"""The folders this process holds, by (device, inode): their locked descriptors."""


class FolderInUseError(UsageError):
    """Another process holds the folder's lock (exit code 2; pytest's 4)."""


class FolderLock:
    """The lock on an output folder, held until `release` or the process ends."""

    def __init__(self, key: tuple[int, int]) -> None:
        self._key = key

    def release(self) -> None:
        """Let the next command have the folder (a no-op once released)."""
        descriptor = _HELD.pop(self._key, None)
        if descriptor is not None:
            os.close(descriptor)  # closing the last descriptor of the open file releases the flock


def lock_folder(folder: Path, *, label: str) -> FolderLock:
    """Lock `folder` (made first if it does not exist); `FolderInUseError` when another process holds it, a
    `UsageError` when it cannot be made or opened."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(folder, _DIRECTORY)
    except FileExistsError:
        raise UsageError(f"{label}: exists and is not a directory") from None
    except OSError as error:
        raise UsageError(f"{label}: cannot write there ({error.strerror or error})") from None
    status = os.fstat(descriptor)
    key = (status.st_dev, status.st_ino)
    if key in _HELD:
        os.close(descriptor)
        return FolderLock(key)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        holder = _holder(status)
        by = "another agentrig command" if holder is None else f"another agentrig command (pid {holder})"
        raise FolderInUseError(
            f"{label}: is in use by {by}; agentrig touched nothing: wait for it to end, or choose another folder"
        ) from None
    except OSError:
        pass  # no flock on this file system: unlocked, as before
    _HELD[key] = descriptor
    return FolderLock(key)


def _holder(status: os.stat_result) -> int | None:
    """The process id holding a flock on the file of `status`, from /proc/locks (Linux); None where it cannot say.

    A line reads `1: FLOCK  ADVISORY  WRITE 4242 fd:01:1835010 0 EOF`: the pid, then major:minor:inode."""
    wanted = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    with contextlib.suppress(OSError), open("/proc/locks", encoding="ascii", errors="replace") as locks:
        for line in locks:
            fields = line.split()
            if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == wanted and fields[4].isdigit():
                return int(fields[4])
    return None
