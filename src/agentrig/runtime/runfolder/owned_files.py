"""The files of an output folder (`owned_folder`), reached without following a link, proved agentrig's by their
manifest record (size and SHA-256, hashed through a descriptor), and removed only as they were proved.

A file is removed by descriptor-checked steps, never by its name alone (`remove_if_ours`): hashed through the open
file, renamed aside (which takes exactly one file, atomically), and removed only if what was renamed is the very file
hashed, unchanged since; anything else (an editor's save renamed over the name after the hash, an edit in place) is
put back. Folders are removed only when empty and only when agentrig made them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
import sys
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentrig.runtime.runfolder.output_manifest import FileRecord, Manifest

__all__ = [
    "FolderWalker",
    "NotOurs",
    "digest_of",
    "kind_at",
    "matching_record",
    "remove_empty_folders",
    "remove_if_ours",
]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20


class NotOurs(Exception):
    """A path the folder's manifest does not prove agentrig's; the message says why."""


class FolderWalker:
    """Opens paths under a folder one component at a time, never following a link."""

    def __init__(self, folder: Path) -> None:
        self.root = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)

    def close(self) -> None:
        os.close(self.root)

    @contextlib.contextmanager
    def parent(self, path: str) -> Generator[int | None]:
        """The descriptor of `path`'s folder (None when it does not exist); `NotOurs` for a link on the way."""
        descriptor = os.dup(self.root)
        try:
            parts = path.split("/")
            for depth, name in enumerate(parts[:-1], start=1):
                try:
                    inner = os.open(name, _DIRECTORY, dir_fd=descriptor)
                except FileNotFoundError:
                    yield None
                    return
                except OSError:  # ELOOP: a link; ENOTDIR: a file where a folder should be
                    on_the_way = "/".join(parts[:depth])
                    raise NotOurs(f"{on_the_way} on its way is a link or not a folder") from None
                os.close(descriptor)
                descriptor = inner
            yield descriptor
        finally:
            os.close(descriptor)


def digest_of(descriptor: int) -> str:
    """The SHA-256 of the open file, read from where its offset is (the start, as opened)."""
    digest = hashlib.sha256()
    while chunk := os.read(descriptor, _CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def matching_record(walker: FolderWalker, manifest: Manifest, path: str) -> FileRecord | None:
    """The record the file at `path` matches; None when there is no file; `NotOurs` when it is not agentrig's."""
    with walker.parent(path) as folder:
        if folder is None:
            return None
        with _opened_match(folder, path.rsplit("/", 1)[-1], manifest, path) as found:
            return None if found is None else found.record


@dataclass(frozen=True, slots=True)
class _Match:
    descriptor: int
    """The file, open: what was hashed is what is removed (`_unlink_matched`), whatever its name holds by then."""
    status: os.stat_result
    """Its fstat as it was hashed."""
    record: FileRecord


@contextlib.contextmanager
def _opened_match(folder: int, name: str, manifest: Manifest, path: str) -> Generator[_Match | None]:
    """The file `name` in the open `folder`, open, with the record of `path` it matches (None: no file there);
    `NotOurs` when it is not agentrig's."""
    try:
        descriptor = os.open(name, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except FileNotFoundError:
        yield None
        return
    except OSError as error:
        raise NotOurs("is a link or cannot be read" if error.strerror is None else error.strerror) from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise NotOurs("is not a regular file (agentrig writes only regular files)")
        if status.st_size not in manifest.sizes(path):
            raise NotOurs("changed since agentrig wrote it")
        record = manifest.matches(path, status.st_size, digest_of(descriptor))
        if record is None:
            raise NotOurs("changed since agentrig wrote it")
        yield _Match(descriptor, status, record)
    finally:
        os.close(descriptor)


def kind_at(walker: FolderWalker, path: str) -> int | None:
    """The lstat mode of `path` (None: absent); `NotOurs` for a link on the way."""
    with walker.parent(path) as folder:
        if folder is None:
            return None
        try:
            return os.stat(path.rsplit("/", 1)[-1], dir_fd=folder, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return None


def remove_if_ours(folder: Path, manifest: Manifest, paths: Sequence[str], *, label: str) -> list[str]:
    """Remove each of `paths` that is a file matching one of its records; the paths removed."""
    removed: list[str] = []
    walker = FolderWalker(folder)
    try:
        for path in paths:
            try:
                with walker.parent(path) as parent:
                    if parent is None:
                        continue
                    name = path.rsplit("/", 1)[-1]
                    with _opened_match(parent, name, manifest, path) as found:
                        if found is not None and _unlink_matched(parent, name, found, label=label, path=path):
                            removed.append(path)
            except (NotOurs, FileNotFoundError):
                continue  # changed since it was checked, or gone: not ours to remove
    finally:
        walker.close()
    return removed


def _unlink_matched(parent: int, name: str, found: _Match, *, label: str, path: str) -> bool:
    """Remove the file `found` (hashed through its descriptor) from `name`, unless `name` no longer holds it as hashed.

    Unlinking by name would remove whatever the name holds by then: an editor that saved there after the hash (a
    temporary file renamed over the name) would lose the save. So the name's file is first renamed aside, which takes
    exactly one file, atomically; that one is removed only if it is the very file hashed (device and inode), unchanged
    since (size and modification time); anything else is put back at its name. The aside name is not a temporary
    file's (`stale_temps`), so no later write ever removes one a killed run left: the next claim names it instead."""
    aside = f".{name}.agentrig-removing-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        os.rename(name, aside, src_dir_fd=parent, dst_dir_fd=parent)
    except FileNotFoundError:
        return False  # gone already
    moved = os.stat(aside, dir_fd=parent, follow_symlinks=False)
    now = os.fstat(found.descriptor)
    same_file = (moved.st_dev, moved.st_ino) == (now.st_dev, now.st_ino) and stat.S_ISREG(moved.st_mode)
    unchanged = (now.st_size, now.st_mtime_ns) == (found.status.st_size, found.status.st_mtime_ns)
    if same_file and unchanged:
        os.unlink(aside, dir_fd=parent)
        return True
    _put_back(parent, aside, name, label=label, path=path)
    return False


def _put_back(parent: int, aside: str, name: str, *, label: str, path: str) -> None:
    """Move what was renamed aside back to `name`, never over a file saved there since (a hard link, which fails when
    the name is taken, where the file system has them); when it cannot, it stays aside and a warning names it."""
    try:
        os.link(aside, name, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
        os.unlink(aside, dir_fd=parent)
        return
    except FileExistsError:
        pass
    except OSError:  # no hard links here (a FAT or SMB mount): a rename, when nothing took the name meanwhile
        if _kind_in(parent, name) is None:
            os.rename(aside, name, src_dir_fd=parent, dst_dir_fd=parent)
            return
    sys.stderr.write(
        f"agentrig: warning: {label}: {path} was saved while agentrig removed it; the earlier save is kept as {aside} "
        "beside it\n"
    )


def _kind_in(parent: int, name: str) -> int | None:
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None


def remove_empty_folders(folder: Path, paths: set[str]) -> None:
    """Remove the folders agentrig made among `paths` that are empty, deepest first; never a link or a full one."""
    walker = FolderWalker(folder)
    try:
        for path in sorted(paths, key=lambda item: item.count("/"), reverse=True):
            try:
                with walker.parent(path) as parent:
                    if parent is not None:
                        os.rmdir(path.rsplit("/", 1)[-1], dir_fd=parent)
            except (NotOurs, OSError):
                continue  # not empty (a file of the user's stays), a link, or gone
    finally:
        walker.close()
