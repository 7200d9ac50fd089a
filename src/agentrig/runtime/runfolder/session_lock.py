"""One writer per session file: `agentrig prompt --session` holds this lock from loading the session to saving it.

Two prompts on the same session at once would each load the same history and the later save would drop the other's
turn. The lock is an exclusive `flock` on the session file itself, so it is released when the holder exits in any
way, kill -9 included, and there is no file beside the session that a cleanup could remove from under a running
prompt (a `.NAME.lock` sidecar did that: a second prompt then locked a new sidecar and one turn was lost, issue 27).
A second prompt does not wait for the first (a model request can take minutes): it fails at once, before sending
anything, with exit code 2.

A save renames a new file over the session, so the file a prompt opened may no longer be the one the path names by
the time it holds the lock (another prompt saved and exited in between): the lock is checked after locking, by
identity (device and inode of the open file and of the path), and taken again on the file the path names now.
A new session is locked as an empty file made for it; a prompt that ends without saving removes that file again
if it is still the empty one it made, and an empty session file (what a prompt killed before its first save
leaves) is a new session.

Taking the lock also proves, before any request is paid for, that the session's folder can be written. A session
that is a symbolic link is locked as the file it points to, so a prompt on the link and one on the target exclude
each other.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Generator
from pathlib import Path

from agentrig.errors import UsageError
from agentrig.input_files import not_a_regular_file
from agentrig.runtime.runfolder.jsonio import is_out_of_space, out_of_space

__all__ = ["SessionInUseError", "SessionLock", "locked_session"]

_ATTEMPTS = 20
"""How often the lock is taken again when the file changed under it: each retry means another prompt saved and
exited meanwhile, so a few are plenty."""


class SessionInUseError(UsageError):
    """Another process holds the session's lock."""


def _cannot_write(session_path: Path, reason: str) -> UsageError:
    return UsageError(f"{session_path}: cannot write the session there ({reason}); nothing was sent")


class SessionLock:
    """The lock held on a session file (`locked_session`)."""

    def __init__(self, path: Path, locked: os.stat_result) -> None:
        self._path = path
        self._locked = locked

    def still_held(self) -> bool:
        """Whether the path still names the locked file: false once another program removed or replaced the
        session (not through a save of this prompt), when saving over it could drop what that program wrote."""
        return _same_file(self._locked, self._path)


@contextlib.contextmanager
def locked_session(session_path: Path) -> Generator[SessionLock]:
    """Hold the session's lock for the block; `UsageError` when its folder cannot be written or it is not a regular
    file, `SessionInUseError` when another process holds it."""
    real = Path(os.path.realpath(session_path))  # a link and its target are one session
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        if is_out_of_space(error):
            raise out_of_space(session_path, error, kept="nothing was sent") from None
        raise _cannot_write(session_path, error.strerror or str(error)) from None
    if not os.access(real.parent, os.W_OK | os.X_OK):  # a save writes a temporary file there and renames it
        raise _cannot_write(session_path, "permission denied")
    descriptor, made = _lock(session_path, real)
    try:
        yield SessionLock(real, os.fstat(descriptor))
    finally:
        if made is not None:
            _remove_if_unsaved(real, made)
        os.close(descriptor)  # closing releases the lock


def _lock(session_path: Path, real: Path) -> tuple[int, os.stat_result | None]:
    """The descriptor holding the lock on the file `real` names, and its stat when this call made it (empty)."""
    for _ in range(_ATTEMPTS):
        descriptor, made = _open(session_path, real)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise SessionInUseError(
                f"{session_path}: in use by another agentrig prompt; nothing was sent (run the prompts one after "
                "the other)"
            ) from None
        if _same_file(os.fstat(descriptor), real):
            return descriptor, made
        os.close(descriptor)  # saved over (or removed) between the open and the lock: lock what is there now
    raise SessionInUseError(f"{session_path}: replaced again and again while locking it; nothing was sent")


def _open(session_path: Path, real: Path) -> tuple[int, os.stat_result | None]:
    """The session file opened for locking (never blocking: a FIFO must not hang the prompt), or a new empty one."""
    while True:
        try:
            descriptor = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            try:
                descriptor = os.open(real, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
            except FileExistsError:
                continue  # another prompt made it meanwhile: open that one
            except OSError as error:
                if is_out_of_space(error):
                    raise out_of_space(session_path, error, kept="nothing was sent") from None
                raise _cannot_write(session_path, error.strerror or str(error)) from None
            return descriptor, os.fstat(descriptor)
        except OSError as error:
            raise _cannot_write(session_path, error.strerror or str(error)) from None
        kind = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(kind):
            os.close(descriptor)
            what = "is a directory" if stat.S_ISDIR(kind) else not_a_regular_file(kind)
            raise UsageError(f"{session_path}: {what}, not a session file; nothing was sent")
        return descriptor, None


def _same_file(opened: os.stat_result, path: Path) -> bool:
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    return (current.st_dev, current.st_ino) == (opened.st_dev, opened.st_ino)


def _remove_if_unsaved(real: Path, made: os.stat_result) -> None:
    """Remove the empty file made to lock a new session, if it is still that file and still empty (nothing was
    saved over it): a command removes only what it can prove it wrote."""
    with contextlib.suppress(OSError):
        current = os.stat(real)
        if (current.st_dev, current.st_ino) == (made.st_dev, made.st_ino) and current.st_size == 0:
            os.unlink(real)
