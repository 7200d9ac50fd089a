"""The manifest of an output folder: the list of files (and folders) agentrig wrote there, by which it proves them
its own before it replaces or removes one (`owned_folder`).

    OUT/.agentrig-manifest.jsonl        JSON lines, written through `jsonio`:
      {"format": "agentrig.manifest/1", "kind": "run", "agentrig_version": "0.1.0"}     the first line
      {"file": "report.json", "size": 5120, "sha256": "9f86d0..."}                      a file written, as written
      {"dir": "scenarios/tool-roundtrip"}                                                a folder created
      {"reset": "scenarios/tool-roundtrip"}                                              see below

A file is agentrig's while it is a regular file (not a link) whose size and SHA-256 are those of a `file` line for
its path: any line, since a write is recorded *before* it happens (write-ahead), so a run killed mid-way (SIGKILL,
the OOM killer) leaves every file it touched provable by the line of what it held before or of what replaced it.

JSON lines, not one JSON document, because a run's scenario folders are written by several processes (`-j N`
workers, pytest-xdist workers): each appends its lines in one `write` to a file opened O_APPEND, which the kernel
keeps whole, and nothing has to gather them. The run that owns the folder rewrites the manifest compactly
(atomically) when it starts and when it ends.

`reset` closes what came before it under a path: a run starts with `{"reset": ""}` after the earlier run's lines,
and a scenario folder written again starts with its own reset. What is recorded after the last reset covering a path
is what the folder holds now (`Manifest.current_files`); everything else may be removed if it is still provably ours.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from agentrig.errors import HistoryFormatError, UsageError
from agentrig.runtime.runfolder import jsonio

__all__ = [
    "MANIFEST_FORMAT",
    "MANIFEST_NAME",
    "FileRecord",
    "FolderKind",
    "Manifest",
    "append_records",
    "checked_relative",
    "dir_line",
    "file_line",
    "header_line",
    "read_manifest",
    "record_file",
    "reset_line",
]

MANIFEST_NAME = ".agentrig-manifest.jsonl"
MANIFEST_FORMAT = "agentrig.manifest/1"

FolderKind = Literal["run", "matrix"]
"""`run`: what `agentrig run`, `merge` and the pytest plugin's --agentrig-out write; `matrix`: `agentrig matrix`."""
_KINDS: tuple[FolderKind, ...] = ("run", "matrix")

_MAX_PATH = 4096
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class FileRecord:
    """A file as agentrig wrote it."""

    path: str
    """Relative to the folder, `/`-separated, never `..` or absolute (`checked_relative`)."""
    size: int
    """Its length in bytes."""
    sha256: str
    """The hex SHA-256 of its bytes."""


@dataclass(slots=True)
class Manifest:
    """A manifest read back: every record, and what the folder holds now."""

    kind: FolderKind
    """What wrote the folder."""
    records: dict[str, list[FileRecord]] = field(default_factory=dict[str, list[FileRecord]])
    """Every file record, by path: a file matching any of its path's records is agentrig's."""
    folders: set[str] = field(default_factory=set[str])
    """Every folder agentrig created."""
    _last_file: dict[str, tuple[int, FileRecord]] = field(default_factory=dict[str, tuple[int, FileRecord]])
    _last_folder: dict[str, int] = field(default_factory=dict[str, int])
    _last_reset: dict[str, int] = field(default_factory=dict[str, int])
    _lines: int = 0

    def matches(self, path: str, size: int, sha256: str) -> FileRecord | None:
        """The record of `path` with this size and digest, if any."""
        return next((r for r in self.records.get(path, ()) if r.size == size and r.sha256 == sha256), None)

    def sizes(self, path: str) -> set[int]:
        """The sizes `path` was written with (a file of another size needs no digest to be refused)."""
        return {record.size for record in self.records.get(path, ())}

    def apply(self, line: Mapping[str, Any]) -> None:
        """Take one record line (already checked) into account."""
        self._lines += 1
        if "file" in line:
            record = FileRecord(path=line["file"], size=line["size"], sha256=line["sha256"])
            self.records.setdefault(record.path, []).append(record)
            self._last_file[record.path] = (self._lines, record)
        elif "dir" in line:
            self.folders.add(line["dir"])
            self._last_folder[line["dir"]] = self._lines
        else:
            self._last_reset[line["reset"]] = self._lines

    def _reset_after(self, path: str, line: int) -> bool:
        """Whether a reset of `path`, of a folder holding it or of the whole folder came after `line`."""
        covering = ["", path]
        covering += [path[:index] for index, character in enumerate(path) if character == "/"]
        return any(self._last_reset.get(folder, 0) > line for folder in covering)

    def current_files(self) -> dict[str, FileRecord]:
        """The last record of each path that no later reset covers: what the folder holds now."""
        return {path: record for path, (line, record) in self._last_file.items() if not self._reset_after(path, line)}

    def current_folders(self) -> set[str]:
        """The folders no later reset covers."""
        return {folder for folder, line in self._last_folder.items() if not self._reset_after(folder, line)}


def checked_relative(value: object) -> str:
    """`value` if it is a path relative to the folder that stays inside it; else ValueError saying why."""
    if not isinstance(value, str) or not value:
        raise ValueError("expected a relative path such as scenarios/NAME/history.json")
    if len(value) > _MAX_PATH or "\0" in value or "\\" in value:
        raise ValueError(f"{value[:80]!r} is not a path agentrig writes")
    if value.startswith("/"):
        raise ValueError(f"{value!r} is absolute; agentrig records paths inside the folder")
    parts = value.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"{value!r} leads outside the folder or is not in plain form")
    if value == MANIFEST_NAME:
        raise ValueError(f"{value!r} is the manifest itself")
    return value


@functools.cache
def _agentrig_version() -> str:
    # From the installed metadata: the run folder's package imports nothing of agentrig but itself and its errors.
    try:
        return metadata.version("agentrig")
    except metadata.PackageNotFoundError:
        return "unknown"


def header_line(kind: FolderKind) -> dict[str, Any]:
    """The first line of every manifest."""
    return {"format": MANIFEST_FORMAT, "kind": kind, "agentrig_version": _agentrig_version()}


def file_line(record: FileRecord) -> dict[str, Any]:
    """The line of a file written."""
    return {"file": record.path, "size": record.size, "sha256": record.sha256}


def dir_line(path: str) -> dict[str, Any]:
    """The line of a folder created."""
    return {"dir": path}


def reset_line(path: str) -> dict[str, Any]:
    """The line that closes what came before under `path` ("": the whole folder)."""
    return {"reset": path}


def record_file(path: str, data: bytes) -> FileRecord:
    """The record of `data` written at `path`."""
    return FileRecord(path=path, size=len(data), sha256=hashlib.sha256(data).hexdigest())


_RECORD_KEYS = ({"file", "size", "sha256"}, {"dir"}, {"reset"})


def _check_line(value: object) -> dict[str, Any]:
    """A record line, or ValueError naming the field that is wrong."""
    if not isinstance(value, dict) or set(value) not in _RECORD_KEYS:  # pyright: ignore[reportUnknownArgumentType]
        raise ValueError("expected one of {file, size, sha256}, {dir} or {reset}")
    line: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
    if "reset" in line:
        if line["reset"] != "":
            _field("reset", checked_relative, line["reset"])
        return line
    if "dir" in line:
        _field("dir", checked_relative, line["dir"])
        return line
    _field("file", checked_relative, line["file"])
    size, digest = line["size"], line["sha256"]
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ValueError("size: expected a whole number of bytes")
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        raise ValueError("sha256: expected 64 lowercase hex digits")
    return line


def _field(name: str, check: Any, value: object) -> None:
    try:
        check(value)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None


def _lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """The complete lines of the manifest, numbered from 1 (what follows the last newline is an append still under
    way or cut short)."""
    yield from enumerate(data.split(b"\n")[:-1], start=1)


def read_manifest(folder: Path, *, label: str) -> Manifest | None:
    """The manifest of `folder`, None when there is none; a manifest that is not a regular file or holds a line
    agentrig did not write raises one `UsageError` naming `label` (how the user named the folder), line and field."""
    path = folder / MANIFEST_NAME
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _invalid(label, f"cannot be read ({error.strerror or error})") from None
    try:
        if not _is_regular(descriptor):
            raise _invalid(label, "is not a regular file")
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read()
    finally:
        os.close(descriptor)
    manifest: Manifest | None = None
    for number, line in _lines(data):
        try:
            value = jsonio.loads(line, source=path)
        except HistoryFormatError:
            if manifest is None:
                raise _invalid(label, "is not JSON", line=number) from None
            # An append the disk had no room for, cut short (and maybe run into by another process's line): leaving
            # it out only makes less provable, never more (a file line proves, a reset or dir line allows removals).
            continue
        if manifest is None:
            manifest = Manifest(kind=_checked_header(value, label))
            continue
        try:
            manifest.apply(_check_line(value))
        except ValueError as error:
            raise _invalid(label, str(error), line=number) from None
    if manifest is None:
        raise _invalid(label, f"has no header line (format {MANIFEST_FORMAT!r})")
    return manifest


def _checked_header(value: object, label: str) -> FolderKind:
    if not isinstance(value, dict) or value.get("format") != MANIFEST_FORMAT:  # pyright: ignore[reportUnknownMemberType]
        raise _invalid(label, f"format: expected {MANIFEST_FORMAT!r}", line=1)
    kind = value.get("kind")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if kind not in _KINDS:
        raise _invalid(label, f"kind: expected one of {', '.join(_KINDS)}", line=1)
    return kind  # pyright: ignore[reportReturnType]  (checked just above)


def _is_regular(descriptor: int) -> bool:
    import stat

    return stat.S_ISREG(os.fstat(descriptor).st_mode)


def _invalid(label: str, reason: str, *, line: int | None = None) -> UsageError:
    where = f"{MANIFEST_NAME}:{line}" if line is not None else MANIFEST_NAME
    return UsageError(
        f"{label}: {where}: {reason}; agentrig cannot prove which files there it wrote, so it touches none: "
        "empty the folder yourself or choose another"
    )


def encode_lines(lines: Iterable[Mapping[str, Any]]) -> bytes:
    """Manifest lines as bytes, each ending in a newline."""
    return b"".join(jsonio.dumps(dict(line)) + b"\n" for line in lines)


def append_records(folder: Path, lines: Sequence[Mapping[str, Any]], *, kept: str) -> None:
    """Append `lines` to the folder's manifest in one write (whole, whichever process writes at the same time).

    The manifest must exist: the command that owns the folder wrote it before anything else (`owned_folder`)."""
    if not lines:
        return
    path = folder / MANIFEST_NAME
    data = encode_lines(lines)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UsageError(
            f"{folder}: no {MANIFEST_NAME}: the folder was not prepared for agentrig's output (owned_folder.claim)"
        ) from None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
    except OSError as error:
        if jsonio.is_out_of_space(error):
            raise jsonio.out_of_space(path, error, kept=kept) from None
        raise
    finally:
        os.close(descriptor)
