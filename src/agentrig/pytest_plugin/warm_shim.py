"""The `python` execnet starts for a warm pytest-xdist worker (`warm_workers`): standard library only, run as
`python -I -S warm_shim.py SOCKET -u -c BOOTSTRAP` (what execnet runs for a `popen//python=...` spec).

It hands its standard streams, working directory and environment to the warm server listening on SOCKET, which
forks the worker from a process that has pytest, pydantic-ai and agentrig imported; the worker reads execnet's
bootstrap from these very streams, so to execnet nothing changed. The shim stays as the worker's stand-in: it
passes SIGTERM and SIGHUP on to the worker and exits with the worker's status. A worker's Ctrl-C comes from the
terminal to its process group, which the worker shares, so the shim ignores its own. A server that cannot be
reached, refuses or goes away before forking: the shim becomes the cold interpreter execnet asked for
(`os.execv`), and the worker starts as it always did, only later.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys


def _cold(arguments: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, *arguments])


def _read_line(connection: socket.socket) -> bytes:
    line = b""
    while not line.endswith(b"\n"):
        chunk = connection.recv(1)
        if not chunk:
            return b""
        line += chunk
    return line


def main() -> None:
    socket_path, arguments = sys.argv[1], sys.argv[2:]
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(socket_path)
        request = {"cwd": os.getcwd(), "env": dict(os.environ), "args": arguments}
        socket.send_fds(connection, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
        started = _read_line(connection)
    except OSError:
        started = b""
    if not started.startswith(b"started "):
        connection.close()
        _cold(arguments)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        worker: int | None = os.pidfd_open(int(started.split()[1]))  # signals reach it, never a reused pid
    except ProcessLookupError:  # already ended, and reaped by the server: its status follows
        worker = None

    def send(signum: int) -> None:
        if worker is not None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(worker, signum)

    signal.signal(signal.SIGTERM, lambda signum, _frame: send(signum))
    signal.signal(signal.SIGHUP, lambda signum, _frame: send(signum))
    ended = _read_line(connection)
    if not ended.startswith(b"ended "):  # the server went away: the worker must not outlive it unseen
        send(signal.SIGKILL)
        sys.exit(1)
    status = int(ended.split()[1])
    if status < 0:  # ended by a signal: end the same way, so the status execnet sees is the worker's
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


if __name__ == "__main__":
    main()
