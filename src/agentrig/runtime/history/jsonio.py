"""The one JSON serializer: orjson for every file agentrig reads or writes, and atomic writes.

Errors are `HistoryFormatError`s that name the file, and for bad JSON the line and column, so the
CLI can print them as one line. Writes go to a temporary file in the target directory, are
fsynced and then renamed over the target: a reader sees the old file or the new one, never half.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from agentrig.errors import HistoryFormatError, OutputWriteError
from agentrig.input_files import HISTORY_FILE_LIMIT, InputFileError, read_input_file
from agentrig.runtime.history.stale_temps import remove_stale_temp_files, temp_prefix

__all__ = [
    "dumps",
    "is_out_of_space",
    "loads",
    "open_atomic",
    "open_atomic_files",
    "out_of_space",
    "read_json_file",
    "write_atomic",
]

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


JSON_INPUT = "a JSON file (a history, session, dump, recording or report)"
"""What `HISTORY_FILE_LIMIT` bounds, as an error names it."""


def read_json_file(path: str | Path) -> Any:
    """Read and parse a JSON file; a missing, unreadable, empty or malformed file raises one `HistoryFormatError`,
    and so does one that is not a regular file (a FIFO, a device) or is over `HISTORY_FILE_LIMIT` (`input_files`):
    neither is read."""
    try:
        data = read_input_file(path, limit=HISTORY_FILE_LIMIT, what=JSON_INPUT)
    except InputFileError as error:
        raise HistoryFormatError(error.reason, path=path) from None
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


# The errors that say the disk (or the quota) is full, or that it failed: no other path or permission would help.
_OUT_OF_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def is_out_of_space(error: BaseException) -> bool:
    """Whether `error` is a write failing for want of space (disk full, quota, file too large) or an I/O error."""
    return isinstance(error, OSError) and error.errno in _OUT_OF_SPACE


def out_of_space(
    path: str | Path, error: OSError, *, kept: str = "what it held before is unchanged"
) -> OutputWriteError:
    """The one-line error for a write of `path` that `is_out_of_space`; `kept` says what is left of the file."""
    reason = error.strerror or str(error)
    return OutputWriteError(f"{path}: cannot write the file ({reason}); {kept}", path=path, reason=reason)


@contextlib.contextmanager
def open_atomic(path: str | Path) -> Generator[BinaryIO]:
    """A file to write `path` through piece by piece, atomically as `write_atomic`: it replaces `path` only when the
    block ends without an exception (then it is fsynced first); otherwise it is removed and `path` is untouched.

    A symbolic link is written through: the file it points to is replaced, the link stays (a session or a golden
    file kept elsewhere and linked into a project). A full disk (`is_out_of_space`) raises `OutputWriteError`
    naming `path`."""
    with open_atomic_files(path) as (handle,):
        yield handle


@contextlib.contextmanager
def open_atomic_files(*paths: str | Path) -> Generator[tuple[BinaryIO, ...]]:
    """Files to write several `paths` through together, as `open_atomic`, replaced all or none: every one is
    written and fsynced before the first is renamed over its path (in the order given), so a disk that fills up
    while the last is written leaves every path as it was (a run's report.json, junit.xml and summary.md)."""
    pending: list[_TempFile] = []
    try:
        for path in paths:
            pending.append(_TempFile(path))
        yield tuple(temp.handle for temp in pending)
        for temp in pending:
            temp.finish()
        for temp in pending:
            os.replace(temp.name, temp.target)
    except BaseException as error:
        for temp in pending:
            temp.discard()
        if isinstance(error, OSError) and is_out_of_space(error):
            if len(paths) == 1:
                raise out_of_space(paths[0], error) from None
            named = ", ".join(str(path) for path in paths)
            raise OutputWriteError(f"{named}: cannot write the files ({error.strerror}); none was replaced") from None
        raise


class _TempFile:
    """The temporary file one path of `open_atomic_files` is written to, next to its target."""

    def __init__(self, path: str | Path) -> None:
        # A symbolic link is written through: its target is replaced, the link stays.
        self.target = Path(os.path.realpath(path))
        self.target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temp_files(self.target)  # what a writer killed mid-save (kill -9) left behind
        descriptor, self.name = tempfile.mkstemp(prefix=temp_prefix(self.target), suffix=".tmp", dir=self.target.parent)
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

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self.handle.close()
        with contextlib.suppress(OSError):
            os.unlink(self.name)
