"""Where scaffold writes, and the proof of what it wrote: a scenario's files are written together (all or none,
`jsonio.open_atomic_files`), and never over a file scaffold cannot prove it wrote.

The proof is `.agentrig-scaffold.json` in the folder that holds the scenarios: for each file scaffold wrote
there, its path (relative to the folder) and the SHA-256 of the bytes it wrote. An existing file is replaced
only with `--force`, and only when it is a regular file (not a link, a folder, a FIFO or a device) whose bytes
are still exactly those: a file the user wrote, or edited since (a sharper expectation, an accepted golden),
is never replaced. The manifest is rewritten after the files, so a crash in between leaves files scaffold will
not claim (the safe side).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, cast

from agentrig.errors import HistoryFormatError, OutputWriteError, UsageError
from agentrig.runtime.runfolder import jsonio

__all__ = ["MANIFEST", "MANIFEST_FORMAT", "ScenarioFolder"]

MANIFEST = ".agentrig-scaffold.json"
MANIFEST_FORMAT = "agentrig.scaffold-manifest/1"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ScenarioFolder:
    """The folder scenarios are written to, with the manifest of the files scaffold wrote in it."""

    def __init__(self, directory: Path, *, force: bool, sources: Iterable[Path] = ()) -> None:
        self.directory = directory
        self.force = force
        self._sources = {_resolved(path) for path in sources}
        self._written = self._read_manifest()

    def _read_manifest(self) -> dict[str, str]:
        path = self.directory / MANIFEST
        try:
            mode = path.lstat().st_mode
        except OSError:
            return {}
        if not stat.S_ISREG(mode):
            raise UsageError(f"{path}: not a regular file; scaffold keeps its list of written files there")
        try:
            data = jsonio.read_json_file(path)
        except HistoryFormatError:
            return {}  # unreadable: it proves nothing, and it is rewritten with what this run writes
        if not isinstance(data, dict) or cast(dict[str, Any], data).get("format") != MANIFEST_FORMAT:
            return {}
        files = cast(dict[str, Any], data).get("files")
        if not isinstance(files, dict):
            return {}
        return {str(k): v for k, v in cast(dict[Any, Any], files).items() if isinstance(v, str)}

    def check(self, files: Sequence[tuple[str, bytes]]) -> None:
        """Raise a `UsageError` naming the first file that may not be written (nothing is written)."""
        for relative, _ in files:
            self._check_one(relative)

    def _check_one(self, relative: str) -> None:
        target = self.directory / relative
        try:
            info = target.lstat()
        except FileNotFoundError:
            return
        except OSError as error:
            raise UsageError(f"{target}: cannot write there ({error.strerror or error})") from None
        if _resolved(target) in self._sources:
            raise UsageError(f"{target}: refusing to overwrite the source")
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise UsageError(f"{target}: {kind}; scaffold never replaces it")
        if not self.force:
            raise UsageError(f"{target}: the file exists; pass --force to replace a file scaffold wrote")
        try:
            current = target.read_bytes()
        except OSError as error:
            raise UsageError(f"{target}: cannot read it ({error.strerror or error}); not replaced") from None
        if self._written.get(relative) != _digest(current):
            raise UsageError(
                f"{target}: not written by agentrig scaffold, or changed since; not replaced, even with --force"
            )

    def write(self, files: Sequence[tuple[str, bytes]]) -> list[Path]:
        """Check, then write `files` all or none, then record them in the manifest. Returns the paths written."""
        self.check(files)
        targets = [self.directory / relative for relative, _ in files]
        try:
            with jsonio.open_atomic_files(*targets) as handles:
                for handle, (_, data) in zip(handles, files, strict=True):
                    handle.write(data)
        except OutputWriteError:
            raise
        except OSError as error:
            raise UsageError(f"{targets[-1]}: cannot write there ({error.strerror or error})") from None
        for relative, data in files:
            self._written[relative] = _digest(data)
        self._save_manifest()
        return targets

    def _save_manifest(self) -> None:
        document = {"format": MANIFEST_FORMAT, "files": dict(sorted(self._written.items()))}
        try:
            jsonio.write_atomic(self.directory / MANIFEST, jsonio.dumps(document, pretty=True))
        except OSError as error:
            raise UsageError(f"{self.directory / MANIFEST}: cannot write there ({error.strerror or error})") from None


def _resolved(path: Path) -> Path:
    try:
        return Path(os.path.realpath(path))
    except OSError:
        return path
