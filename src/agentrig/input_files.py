"""Every file agentrig reads is read through here: regular files only, and no more than a documented limit.

A path a user gives may be a device node or a FIFO (`/dev/zero`, `/dev/urandom`, `<(yes)`): read whole, it never
ends (`check /dev/zero` reached 10 GB in 14 s), and a 1 GB scenario file took 103 s and 5.3 GB to validate. So:

- a file that is not a regular file is refused before a byte is read (opened without blocking: opening a FIFO
  would wait for a writer), with one line naming it;
- a regular file over its limit is refused from its size, before it is read, and it is read with a cap all the
  same (a file may grow while it is read, and some report a size of 0: /proc);
- a stream (stdin, where a command documents `-`) is read with the same cap.

The limits (docs/exit-codes.md states them):

    SCENARIO_FILE_LIMIT    16 MiB    a scenario file, and a file it names (system_prompt_file, context_file)
    PROMPT_LIMIT           16 MiB    a prompt read from stdin (`agentrig prompt -`)
    HISTORY_FILE_LIMIT    256 MiB    a history, session, pydantic-ai dump, recording, golden file, report.json,
                                     events log: any JSON file agentrig reads

Both are far above what a real file holds (a scenario of a few hundred turns is a few hundred KiB; a session of a
long coding agent, tool outputs included, tens of MiB) and far below what would exhaust a CI runner's memory
(parsing takes several times the file's size). Standard library only, and below every layer: `scenarios` and the
canonical `history` layer both read through it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from agentrig.errors import InputError, printable_path

__all__ = [
    "HISTORY_FILE_LIMIT",
    "PROMPT_LIMIT",
    "SCENARIO_FILE_LIMIT",
    "InputFileError",
    "describe_size",
    "not_a_regular_file",
    "read_input_file",
    "read_input_stream",
    "read_input_text",
    "reason_of",
]

MIB = 1024 * 1024

SCENARIO_FILE_LIMIT = 16 * MIB
"""The largest scenario file (and file a scenario names) agentrig reads."""
PROMPT_LIMIT = 16 * MIB
"""The largest prompt read from stdin."""
HISTORY_FILE_LIMIT = 256 * MIB
"""The largest JSON file (history, session, dump, recording, golden, report) agentrig reads."""

_CHUNK = 1024 * 1024


class InputFileError(InputError):
    """A file agentrig was asked to read is not a regular file, or is over its size limit (exit code 2)."""

    def __init__(self, reason: str, *, path: str | Path | None = None) -> None:
        super().__init__(reason if path is None else f"{printable_path(path)}: {reason}")
        self.reason = reason
        self.path = path


def reason_of(error: BaseException) -> str:
    """Why a file could not be read, for a message that names the file itself: an `InputFileError`'s reason, an
    `OSError`'s strerror, else the error's text."""
    if isinstance(error, InputFileError):
        return error.reason
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error)


def describe_size(size: int) -> str:
    """`16 MiB`, `1.5 GiB`, `312 bytes`: a size as a person reads it."""
    for unit, scale in (("GiB", 1024 * MIB), ("MiB", MIB), ("KiB", 1024)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):  # seen only by callers that look without following (`merge`'s scan of its inputs)
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def not_a_regular_file(mode: int) -> str:
    """Why a file of this `st_mode` is not read: `is a FIFO (named pipe), not a regular file`."""
    return f"is {_kind(mode)}, not a regular file"


def _over(limit: int, what: str) -> str:
    return f"over the {describe_size(limit)} limit for {what}"


def read_input_file(path: str | Path, *, limit: int, what: str) -> bytes:
    """The bytes of the regular file `path`, as `Path.read_bytes` reads them, but never more than `limit`.

    `InputFileError` for a file that is not a regular file (nothing read) or is over `limit` (`what`, e.g. "a
    scenario file", names the limit in the message); a missing file, a directory and other failures to open
    raise `OSError` as `Path.read_bytes` does, for the caller's own message."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(status.st_mode):
            raise InputFileError(not_a_regular_file(status.st_mode), path=path)
        if status.st_size > limit:
            raise InputFileError(f"the file is {status.st_size:,} bytes, {_over(limit, what)}", path=path)
        os.set_blocking(descriptor, True)
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = _read_capped(handle, limit, first=status.st_size + 1)  # the whole file in one read, as a rule
    finally:
        os.close(descriptor)
    if data is None:
        raise InputFileError(f"the file is {_over(limit, what)}", path=path)  # its size said less: /proc, or it grew
    return data


def read_input_text(path: str | Path, *, limit: int, what: str) -> str:
    """`read_input_file` as text, as `Path.read_text(encoding="utf-8")` reads it (universal newlines);
    `UnicodeDecodeError` for bytes that are not UTF-8."""
    text = read_input_file(path, limit=limit, what=what).decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def read_input_stream(stream: BinaryIO, *, limit: int, subject: str) -> bytes:
    """Everything `stream` holds (stdin), but never more than `limit`: `InputFileError` past it, saying
    "`subject` is over the ... limit"."""
    data = _read_capped(stream, limit, first=_CHUNK)
    if data is None:
        raise InputFileError(f"{subject} is over the {describe_size(limit)} limit")
    return data


def _read_capped(handle: BinaryIO, limit: int, *, first: int) -> bytes | None:
    """At most `limit` bytes of `handle` to its end, `first` asked for at once; None when there is more."""
    chunks: list[bytes] = []
    remaining = limit + 1
    size = first
    while remaining > 0:
        chunk = handle.read(min(size, remaining))
        size = _CHUNK
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    if remaining <= 0:
        return None
    return b"".join(chunks)
