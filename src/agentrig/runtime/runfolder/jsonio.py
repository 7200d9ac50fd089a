"""The one JSON serializer: orjson for every file agentrig reads or writes, and atomic writes.

Errors are `HistoryFormatError`s that name the file, and for bad JSON the line and column, so the
CLI can print them as one line. Writes go to a temporary file in the target directory, are
fsynced and then renamed over the target: a reader sees the old file or the new one, never half.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from agentrig.errors import HistoryFormatError, OutputWriteError
from agentrig.input_files import HISTORY_FILE_LIMIT, InputFileError, read_input_file
from agentrig.runtime.runfolder.write_targets import PendingFile, open_target

__all__ = [
    "dumps",
    "is_out_of_space",
    "loads",
    "open_atomic",
    "open_atomic_files",
    "out_of_space",
    "read_json_file",
    "read_json_file_if_present",
    "read_json_lines",
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


def read_json_file_if_present(path: str | Path) -> Any | None:
    """`read_json_file`, or None when `path` names no regular file (nothing there, a directory, a FIFO)."""
    if not Path(path).is_file():
        return None
    return read_json_file(path)


def read_json_lines(path: str | Path, *, what: str) -> Iterator[Any]:
    """The values of a JSON Lines file, one a non-blank line (`what` it is names it in the error of a file that is
    not a regular file or is over `HISTORY_FILE_LIMIT`). The file is read at once; each line is parsed as the
    caller takes it, so a bad line raises where the caller reaches it."""
    data = read_input_file(path, limit=HISTORY_FILE_LIMIT, what=what)
    return (loads(line, source=path) for line in data.splitlines() if line.strip())


def write_atomic(path: str | Path, data: bytes, *, before_replace: BeforeReplace | None = None) -> None:
    """Write `data` to `path` atomically: temp file in the same directory, fsync, rename. Parents are created (and
    removed again when the write fails), and temporary files an earlier, killed writer of `path` left behind are
    removed (`stale_temps`). A FIFO or a character device is written through (`open_atomic`)."""
    with open_atomic_files(path, before_replace=before_replace) as (handle,):
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

    What `path` names decides how (`write_targets`): a symbolic link is written through (the file it points to is
    replaced, the link stays: a session or a golden file kept elsewhere and linked into a project); a FIFO, a
    character device or /dev/stdout is written in place, never renamed over; a dangling link, a block device or a
    socket is refused. A full disk (`is_out_of_space`) raises `OutputWriteError` naming `path`."""
    with open_atomic_files(path) as (handle,):
        yield handle


BeforeReplace = Callable[[Sequence[tuple[Path, Path]]], None]
"""Told `(target, temporary file)` of each regular file about to be renamed over its target, all written and fsynced:
an output folder's manifest records them here, before they replace anything (`output_manifest`)."""


@contextlib.contextmanager
def open_atomic_files(
    *paths: str | Path, kept: str = "none was replaced", before_replace: BeforeReplace | None = None
) -> Generator[tuple[BinaryIO, ...]]:
    """Files to write several `paths` through together, as `open_atomic`, replaced all or none: every one is
    written and fsynced before the first is renamed over its path (in the order given), so a disk that fills up
    while the last is written leaves every path as it was (a run's report.json, junit.xml and summary.md).
    `kept` says, in the one-line error of a full disk, what is left of the files."""
    pending: list[PendingFile] = []
    try:
        for path in paths:
            pending.append(open_target(path))
        yield tuple(target.handle for target in pending)
        for target in pending:
            target.finish()
        if before_replace is not None:
            before_replace([(target.target, target.temporary) for target in pending if target.temporary is not None])
        for target in pending:
            target.commit()
    except BaseException as error:
        for target in reversed(pending):  # the last opened first: a folder the first one created is empty by then
            target.discard()
        if isinstance(error, OSError) and is_out_of_space(error):
            if len(paths) == 1:
                through = len(pending) == 1 and pending[0].write_through
                raise out_of_space(paths[0], error, kept=_WRITTEN_THROUGH if through else _UNCHANGED) from None
            named = ", ".join(str(path) for path in paths)
            raise OutputWriteError(f"{named}: cannot write the files ({error.strerror}); {kept}") from None
        raise


_UNCHANGED = "what it held before is unchanged"
_WRITTEN_THROUGH = "it is not a regular file, so it was written in place: what reached it stays"
