"""One writer per session file: `agentrig prompt --session` holds this lock from loading the session to saving it.

Two prompts on the same session at once would each load the same history and the later save would drop the other's
turn. The lock is an exclusive `flock` on a sidecar file (`.NAME.lock` next to the session), so it is released
when the holder exits in any way, kill -9 included; the sidecar itself stays (removing it would race with a
waiting writer) and holds nothing. A second prompt does not wait for the first (a model request can take
minutes): it fails at once, before sending anything, with exit code 2.

Taking the lock also proves, before any request is paid for, that the session's folder can be written. A session
that is a symbolic link is locked as the file it points to, so a prompt on the link and one on the target exclude
each other.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Generator
from pathlib import Path

from agentrig.errors import UsageError
from agentrig.runtime.history.jsonio import is_out_of_space, out_of_space

__all__ = ["SessionInUseError", "lock_path_for", "locked_session"]


class SessionInUseError(UsageError):
    """Another process holds the session's lock."""


def lock_path_for(session_path: Path) -> Path:
    """The sidecar lock file of a session: next to the file itself, a symbolic link resolved (a link and its
    target are one session, and `save_session` writes through the link)."""
    real = Path(os.path.realpath(session_path))
    return real.with_name(f".{real.name}.lock")


@contextlib.contextmanager
def locked_session(session_path: Path) -> Generator[None]:
    """Hold the session's lock for the block; `UsageError` when its folder cannot be written,
    `SessionInUseError` when another process holds it."""
    lock_path = lock_path_for(session_path)
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        if is_out_of_space(error):
            raise out_of_space(session_path, error, kept="nothing was sent") from None
        raise UsageError(
            f"{session_path}: cannot write the session there ({error.strerror or error}); nothing was sent"
        ) from None
    try:
        if not os.access(lock_path.parent, os.W_OK | os.X_OK):
            raise UsageError(f"{session_path}: cannot write the session there (permission denied); nothing was sent")
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SessionInUseError(
                f"{session_path}: in use by another agentrig prompt; nothing was sent (run the prompts one after "
                "the other)"
            ) from None
        yield
    finally:
        os.close(descriptor)  # closing releases the lock
