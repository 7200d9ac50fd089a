"""The `python` execnet starts for a warm pytest-xdist worker (`warm_workers`): standard library only, run as
`python -I -S warm_shim.py SOCKET -u -c BOOTSTRAP` (what execnet runs for a `popen//python=...` spec).

It hands its standard streams, working directory and environment to the warm server listening on SOCKET, which
forks the worker from a process that has pytest, pydantic-ai and agentrig imported; the worker reads execnet's
bootstrap from these very streams, so to execnet nothing changed. The shim stays as the worker's stand-in: it
passes SIGTERM and SIGHUP on to the worker and exits with the worker's status. A worker's Ctrl-C comes from the
terminal to its process group, which the worker shares, so the shim ignores its own. A server that cannot be
reached, refuses or goes away before forking: the shim becomes the cold interpreter execnet asked for
(`os.execv`), and the worker starts as it always did, only later; unless the session removed the socket first (it
ended the server, interrupted before the server was ready), when the shim exits.
"""

from __future__ import annotations

# The interpreter's C modules, not `socket`, `signal` and `json` (nor `contextlib`): those build their enums and
# compile their regular expressions as they import, 9 of the shim's 15 ms, and the controller starts the second
# worker's shim only once the first worker has answered.
import _socket
import os
import sys
from _json import encode_basestring_ascii as _quoted

TYPE_CHECKING = False  # not typing's (one more import)
if TYPE_CHECKING:
    import signal as _signal  # `_signal` has no stubs: `signal` re-exports what the shim uses
    from collections.abc import Callable
    from types import FrameType

    _Handler = Callable[[int, FrameType | None], object] | int | _signal.Handlers | None
else:
    import _signal


def _cold(arguments: list[str], ctrl_c: _Handler) -> None:
    _signal.signal(_signal.SIGINT, ctrl_c)  # as the shim found it: the cold worker is interrupted as ever
    os.execv(sys.executable, [sys.executable, *arguments])


def _read_line(connection: _socket.socket, *, while_parent: int | None = None) -> bytes:
    """One line from the server; with `while_parent`, only while that process (the controller) is this one's parent:
    a shim whose controller is gone exits instead of waiting for a server that may take long to answer."""
    line = b""
    if while_parent is not None:
        connection.settimeout(0.5)
    while not line.endswith(b"\n"):
        try:
            chunk = connection.recv(1)
        except TimeoutError:
            if os.getppid() != while_parent:
                sys.exit(1)
            continue
        if not chunk:
            return b""
        line += chunk
    connection.settimeout(None)
    return line


def _request(arguments: list[str]) -> bytes:
    """The server's request, one JSON line: working directory, environment, execnet's arguments (as `json.dumps`
    writes them: ASCII, each odd byte of a name kept as its escaped surrogate)."""
    env = ",".join(f"{_quoted(name)}:{_quoted(value)}" for name, value in os.environ.items())
    args = ",".join(_quoted(argument) for argument in arguments)
    return f'{{"cwd":{_quoted(os.getcwd())},"env":{{{env}}},"args":[{args}]}}\n'.encode("ascii")


def _send_with_streams(connection: _socket.socket, data: bytes) -> None:
    """`socket.send_fds(connection, [data], [0, 1, 2])`, then the rest of a long request."""
    streams = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))  # C ints, as `array("i")` packs them
    sent = connection.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, streams)])
    if sent < len(data):
        connection.sendall(data[sent:])


def main() -> None:
    # A terminal's Ctrl-C reaches the shim too, waiting for the server (which may still be importing): the session
    # ends the shim, and the worker gets the Ctrl-C of its own.
    ctrl_c = _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    socket_path, arguments = sys.argv[1], sys.argv[2:]
    controller = os.getppid()  # execnet's process, which started this one
    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    connected = False
    try:
        connection.connect(socket_path)
        connected = True
        _send_with_streams(connection, _request(arguments))
        started = _read_line(connection, while_parent=controller)
    except OSError:
        started = b""
    if not started.startswith(b"started "):
        connection.close()
        if connected and not os.path.exists(socket_path):  # the session ended the server: it is ending
            sys.exit(1)
        _cold(arguments, ctrl_c)
    try:
        worker: int | None = os.pidfd_open(int(started.split()[1]))  # signals reach it, never a reused pid
    except ProcessLookupError:  # already ended, and reaped by the server: its status follows
        worker = None

    def send(signum: int) -> None:
        if worker is not None:
            try:  # noqa: SIM105 (contextlib is one more import)
                _signal.pidfd_send_signal(worker, signum)
            except ProcessLookupError:
                pass

    def pass_on(signum: int, _frame: object) -> None:
        send(signum)

    _signal.signal(_signal.SIGTERM, pass_on)
    _signal.signal(_signal.SIGHUP, pass_on)
    ended = _read_line(connection)
    if not ended.startswith(b"ended "):  # the server went away: the worker must not outlive it unseen
        send(_signal.SIGKILL)
        sys.exit(1)
    status = int(ended.split()[1])
    if status < 0:  # ended by a signal: end the same way, so the status execnet sees is the worker's
        _signal.signal(-status, _signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


if __name__ == "__main__":
    main()
