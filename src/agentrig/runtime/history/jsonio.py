"""The one JSON serializer: orjson for every file agentrig reads or writes, and atomic writes.

Errors are `HistoryFormatError`s that name the file, and for bad JSON the line and column, so the
CLI can print them as one line. Writes go to a temporary file in the target directory, are
fsynced and then renamed over the target: a reader sees the old file or the new one, never half.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.stale_temps import remove_stale_temp_files, temp_prefix

__all__ = ["dumps", "loads", "open_atomic", "read_json_file", "write_atomic"]

_PRETTY = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE

MAX_NESTING = 254
"""The deepest nesting of arrays and objects orjson serializes."""


def dumps(obj: Any, *, pretty: bool = False) -> bytes:
    """JSON bytes; `pretty` indents by two spaces and ends with a newline (files people read, golden files)."""
    return orjson.dumps(obj, option=_PRETTY if pretty else None)


def loads(data: bytes | str, *, source: str | Path | None = None) -> Any:
    """Parse JSON; bad JSON raises `HistoryFormatError` naming `source`, line and column."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        if not data.strip():
            raise HistoryFormatError("the file is empty", path=source) from None
        # orjson reports the position of the failure, and says "end of data" when the input stopped early.
        where = f"line {error.lineno}, column {error.colno}"
        reason = "truncated JSON" if "end of data" in error.msg or "EOF" in error.msg else f"invalid JSON ({error.msg})"
        raise HistoryFormatError(f"{reason} at {where}", path=source) from None
    try:
        # orjson writes at most MAX_NESTING levels: refuse here what agentrig could read but never write back
        # (convert, a session save), so every reader says so at once. Writing is fast next to the parse.
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        raise HistoryFormatError(f"the JSON is nested more than {MAX_NESTING} levels deep", path=source) from None
    return value


def read_json_file(path: str | Path) -> Any:
    """Read and parse a JSON file; a missing, unreadable, empty or malformed file raises one `HistoryFormatError`."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise HistoryFormatError("no such file", path=path) from None
    except IsADirectoryError:
        raise HistoryFormatError("is a directory, not a file", path=path) from None
    except OSError as error:
        raise HistoryFormatError(f"cannot read the file ({error.strerror or error})", path=path) from None
    return loads(data, source=path)


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` atomically: temp file in the same directory, fsync, rename. Parents are created, and
    temporary files an earlier, killed writer of `path` left behind are removed (`stale_temps`)."""
    with open_atomic(path) as handle:
        handle.write(data)


@contextlib.contextmanager
def open_atomic(path: str | Path) -> Generator[BinaryIO]:
    """A file to write `path` through piece by piece, atomically as `write_atomic`: it replaces `path` only when the
    block ends without an exception (then it is fsynced first); otherwise it is removed and `path` is untouched."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temp_files(target)  # what a writer killed mid-save (kill -9) left behind
    descriptor, temp_name = tempfile.mkstemp(prefix=temp_prefix(target), suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            # mkstemp creates the file 0600; keep the mode of the file being replaced, or use the usual 0644.
            try:
                mode = target.stat().st_mode & 0o777
            except OSError:
                mode = 0o644
            os.fchmod(handle.fileno(), mode)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
