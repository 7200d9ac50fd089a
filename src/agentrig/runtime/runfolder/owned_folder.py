"""An output folder a command writes (run, merge, the pytest plugin's --agentrig-out, matrix): it replaces or
removes only what its manifest (`output_manifest`) proves agentrig wrote, and refuses anything else before it
touches the folder.

    folder = OwnedFolder.claim(out_dir, label="--out agentrig-out", layout=RUN_LAYOUT)   # UsageError, or ours now
    folder.record([...]) / write_atomic(..., before_replace=folder.record_replaced)        # write-ahead, then write
    folder.remove("junit.xml")                                                             # only if provably ours
    folder.finish()                                  # remove what this command did not write again; compact

`claim` accepts a folder that does not exist, an empty one, or one whose manifest is valid and of the same kind, in
which every recorded file still present is a regular file matching a record (size and SHA-256), every folder on the
way to it a real folder (never a link), and nothing agentrig did not write sits at a name the command writes or
inside a folder it owns whole (`Layout.trees`; an empty folder there is let be: nothing in it can be lost, and a
write it made just before it was killed leaves one). Anything else is refused with one line, the folder untouched.
A folder written by agentrig before manifests existed (a report.json and no manifest) is refused the same way: its
files cannot be told from a user's (`agentrig run --json > report.json` makes one) — the user empties it once.

Every path is walked from the folder one component at a time with O_NOFOLLOW, so no link is ever followed, and a
file is checked again just before it is removed, through the descriptor it is hashed by (`owned_files`: a file saved
over its name meanwhile stays). Folders are removed only when empty and only when agentrig made them. A file about to
be replaced is checked again too, against the manifest as it is then (`record_replaced`).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentrig.errors import UsageError
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.runfolder.folder_lock import FolderLock, lock_folder
from agentrig.runtime.runfolder.output_manifest import (
    MANIFEST_NAME,
    FileRecord,
    FolderKind,
    Manifest,
    append_records,
    checked_relative,
    dir_line,
    encode_lines,
    file_line,
    header_line,
    read_manifest,
    record_file,
    reset_line,
)
from agentrig.runtime.runfolder.owned_files import (
    FolderWalker,
    NotOurs,
    kind_at,
    matching_record,
    remove_empty_folders,
    remove_if_ours,
)
from agentrig.runtime.runfolder.stale_temps import is_temp_name

__all__ = ["Layout", "OwnedFolder", "manifest_recorder", "verify_folder"]


@dataclass(frozen=True, slots=True)
class Layout:
    """What a command writes in its output folder."""

    kind: FolderKind
    """The manifest's kind: a run folder is never taken for a matrix folder, nor the other way round."""
    files: frozenset[str]
    """File names at the top of the folder (report.json, ...)."""
    trees: frozenset[str]
    """Folders at the top that are the command's whole (scenarios/): anything in them it did not write is refused."""

    def holds(self, path: str) -> bool:
        """Whether the command writes `path` (a file at the top, or anything inside one of its trees)."""
        top, _, rest = path.partition("/")
        return top in self.trees or (not rest and path in self.files)


def _refusal(label: str, path: str, reason: str) -> UsageError:
    return UsageError(
        f"{label}: {path}: {reason}; agentrig replaces and removes only files it can prove it wrote, and touched "
        "nothing: move it away or choose another folder"
    )


@dataclass(frozen=True, slots=True)
class _Verified:
    manifest: Manifest | None
    present: dict[str, FileRecord]
    """Each recorded file still there, with the record it matches."""
    folders: frozenset[str]
    """Each recorded folder still there."""


def _verify(folder: Path, label: str, layout: Layout) -> _Verified:
    try:
        if not stat.S_ISDIR(os.stat(folder).st_mode):
            raise UsageError(f"{label}: exists and is not a directory")
        names = os.listdir(folder)
    except FileNotFoundError:
        return _Verified(None, {}, frozenset())
    except OSError as error:  # a file on the way (ENOTDIR), no permission
        raise UsageError(f"{label}: cannot write there ({error.strerror or error})") from None
    if not names:
        return _Verified(None, {}, frozenset())
    manifest = read_manifest(folder, label=label)
    if manifest is None:
        if "report.json" in names or any(name in layout.files for name in names):
            found = "report.json" if "report.json" in names else "report files"
            raise UsageError(
                f"{label}: holds {found} but no {MANIFEST_NAME}, so agentrig cannot tell its files from yours (an "
                "agentrig without manifests wrote it, or something else did) and touched nothing: empty the folder "
                "yourself or choose another"
            )
        raise UsageError(
            f"{label}: the folder is not empty and is not an agentrig output folder (no {MANIFEST_NAME}); agentrig "
            "touched nothing: choose another folder or empty it"
        )
    if manifest.kind != layout.kind:
        raise UsageError(f"{label}: is an agentrig {manifest.kind} folder, not a {layout.kind} folder; choose another")
    for path in (*manifest.records, *manifest.folders):
        if not layout.holds(path):
            raise _refusal(label, MANIFEST_NAME, f"lists {path!r}, which agentrig {layout.kind} never writes")
    walker = FolderWalker(folder)
    try:
        present: dict[str, FileRecord] = {}
        for path in sorted(manifest.records):
            try:
                record = matching_record(walker, manifest, path)
            except NotOurs as why:
                raise _refusal(label, path, str(why)) from None
            if record is not None:
                present[path] = record
        folders: set[str] = set()
        for path in sorted(manifest.folders):
            try:
                mode = kind_at(walker, path)
            except NotOurs as why:
                raise _refusal(label, path, str(why)) from None
            if mode is not None and not stat.S_ISDIR(mode):
                raise _refusal(label, path, "is not the folder agentrig made there")
            if mode is not None:
                folders.add(path)
        _refuse_strangers(walker, folder, label, layout, present, folders)
    finally:
        walker.close()
    return _Verified(manifest, present, frozenset(folders))


def _refuse_strangers(
    walker: FolderWalker, folder: Path, label: str, layout: Layout, files: Mapping[str, Any], folders: set[str]
) -> None:
    """Refuse anything agentrig did not write at a name the command writes, or inside one of its trees."""
    for name in sorted(layout.files):
        if kind_at(walker, name) is not None and name not in files:
            raise _refusal(label, name, "agentrig did not write it")
    for tree in sorted(layout.trees):
        mode = kind_at(walker, tree)
        if mode is None:
            continue
        if not stat.S_ISDIR(mode) or (tree not in folders and not _is_empty(folder / tree)):
            raise _refusal(label, tree, "agentrig did not make it")
        for path, is_folder in _walk(folder, tree):
            if not is_folder and is_temp_name(path.rsplit("/", 1)[-1]):
                continue  # an atomic write's temporary file, a killed writer's: left alone, removed by its next write
            if is_folder and path not in folders and not _is_empty(folder / path):
                raise _refusal(label, path, "agentrig did not make it")
            if not is_folder and path not in files:
                raise _refusal(label, path, "agentrig did not write it")


def _is_empty(path: Path) -> bool:
    with os.scandir(path) as entries:
        return next(entries, None) is None


def _walk(folder: Path, top: str) -> Iterator[tuple[str, bool]]:
    """Every path under `folder/top` (relative to `folder`) and whether it is a real folder; links are not entered."""
    pending = [top]
    while pending:
        current = pending.pop()
        with os.scandir(folder / current) as entries:
            for entry in entries:
                path = f"{current}/{entry.name}"
                is_folder = entry.is_dir(follow_symlinks=False)
                yield path, is_folder
                if is_folder:
                    pending.append(path)


def verify_folder(folder: Path, *, label: str, layout: Layout) -> None:
    """Refuse (UsageError) a folder `OwnedFolder.claim` would refuse, without writing anything (`agentrig matrix`
    checks each version's run folder before it builds an environment)."""
    _verify(folder, label, layout)


class OwnedFolder:
    """An output folder claimed by a command: what it may write, replace and remove there."""

    def __init__(self, folder: Path, *, label: str, layout: Layout, kept: str) -> None:
        self.path = folder
        self.label = label
        self.layout = layout
        self.kept = kept
        """What a full disk leaves, said in the error of a manifest append."""
        self._earlier: Manifest | None = None
        """The manifest as `claim` found it."""
        self._lock: FolderLock | None = None
        """Held from `claim` to `finish` (None for a recorder only: `manifest_recorder`)."""

    @classmethod
    def claim(cls, folder: Path, *, label: str, layout: Layout, kept: str = "nothing else was written") -> OwnedFolder:
        """Lock the folder (`folder_lock`: one command at a time, before anything is read), verify it (module
        docstring), then start its manifest: the earlier files still there, a reset."""
        lock = lock_folder(folder, label=label)
        try:
            verified = _verify(folder, label, layout)
            if not os.access(folder, os.W_OK | os.X_OK):
                raise UsageError(f"{label}: cannot write there (Permission denied)")
        except BaseException:
            lock.release()
            raise
        lines = [
            header_line(layout.kind),
            *(file_line(record) for _, record in sorted(verified.present.items())),
            *(dir_line(path) for path in sorted(verified.folders)),
            reset_line(""),
        ]
        owned = cls(folder, label=label, layout=layout, kept=kept)
        owned._earlier = verified.manifest
        owned._lock = lock
        try:
            owned._rewrite(lines)
        except BaseException:
            lock.release()
            raise
        return owned

    def _rewrite(self, lines: Sequence[Mapping[str, Any]]) -> None:
        try:
            jsonio.write_atomic(self.path / MANIFEST_NAME, encode_lines(lines))
        except OSError as error:
            raise UsageError(f"{self.label}: cannot write there ({error.strerror or error})") from None

    def manifest(self) -> Manifest:
        manifest = read_manifest(self.path, label=self.label)
        if manifest is None:
            raise UsageError(f"{self.label}: {MANIFEST_NAME} is gone; agentrig stopped rather than guess")
        return manifest

    def record(self, lines: Sequence[Mapping[str, Any]]) -> None:
        """Append manifest lines (`output_manifest`), before what they record is written."""
        append_records(self.path, lines, kept=self.kept)

    def relative(self, target: Path) -> str:
        """`target` relative to the folder, `/`-separated; ValueError for a path outside it (a bug, never recorded)."""
        return checked_relative(Path(os.path.relpath(target, os.path.realpath(self.path))).as_posix())

    def record_replaced(self, replaced: Sequence[tuple[Path, Path]]) -> None:
        """`jsonio.BeforeReplace`: record each file about to be renamed over its target, from its temporary file.

        First each target is checked again, against the manifest as it is now: `claim` proved it agentrig's as the
        command started, and a run may take an hour; a file saved at its name since (a user's notes at report.json)
        is refused (UsageError, nothing replaced). Only the moment between this check and the rename is left."""
        self._refuse_replacing_strangers([self.relative(target) for target, _ in replaced])
        lines: list[dict[str, Any]] = []
        for target, temporary in replaced:
            with open(temporary, "rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
                size = os.fstat(handle.fileno()).st_size
            relative = self.relative(target)
            parts = relative.split("/")
            lines += [dir_line("/".join(parts[:depth])) for depth in range(1, len(parts))]  # logs/ for logs/V.log
            lines.append(file_line(FileRecord(path=relative, size=size, sha256=digest)))
        self.record(lines)

    def _refuse_replacing_strangers(self, paths: Sequence[str]) -> None:
        manifest = self.manifest()
        walker = FolderWalker(self.path)
        try:
            for path in paths:
                try:
                    matching_record(walker, manifest, path)
                except NotOurs:
                    raise UsageError(
                        f"{self.label}: {path}: agentrig did not write it (it appeared while agentrig ran), so none "
                        "of the files written with it replaced anything: move it away and run again"
                    ) from None
        finally:
            walker.close()

    def write(self, relative: str, data: bytes) -> None:
        """Write one file atomically at `relative`, recorded first."""
        self.record([file_line(record_file(relative, data))])
        jsonio.write_atomic(self.path / relative, data)

    def remove(self, relative: str) -> bool:
        """Remove a file an earlier run wrote at `relative` if it is still provably agentrig's (checked now, against
        the manifest as the command found it); True when removed."""
        if self._earlier is None:
            return False
        return remove_if_ours(self.path, self._earlier, [relative], label=self.label) == [relative]

    def finish(self) -> None:
        """Remove every provably agentrig file and folder this command did not write again, then rewrite the
        manifest compactly: what the folder holds now."""
        manifest = self.manifest()
        current, current_folders = manifest.current_files(), manifest.current_folders()
        stale = [path for path in manifest.records if path not in current]
        remove_if_ours(self.path, manifest, sorted(stale), label=self.label)
        remove_empty_folders(self.path, manifest.folders - current_folders)
        lines = [
            header_line(self.layout.kind),
            *(file_line(record) for _, record in sorted(current.items())),
            *(dir_line(path) for path in sorted(current_folders)),
        ]
        try:
            self._rewrite(lines)
        finally:
            self.release()

    def release(self) -> None:
        """Let the next command have the folder (`finish` does; a command that stops early may, else its exit does)."""
        if self._lock is not None:
            self._lock.release()


def manifest_recorder(folder: Path) -> jsonio.BeforeReplace | None:
    """A `before_replace` that records files written into `folder` in its manifest, for a command that writes one of
    the folder's own files again (`agentrig report DIR` writes DIR/report.html), so the next run still proves it
    agentrig's; None when the folder has no manifest agentrig can read."""
    try:
        manifest = read_manifest(folder, label=str(folder))
    except UsageError:
        return None
    if manifest is None:
        return None
    layout = Layout(manifest.kind, frozenset(), frozenset())
    return OwnedFolder(folder, label=str(folder), layout=layout, kept="nothing was replaced").record_replaced
