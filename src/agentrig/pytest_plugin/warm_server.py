"""The warm server: one process that imports what a pytest-xdist worker of a scenario session imports, then forks
each worker from there (`warm_workers` starts it, `warm_shim` connects to it).

    python -u -c "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); from ... import serve; serve()"

(`warm_workers._SERVER`: execnet's own command line for a worker, which the forked worker inherits.) The listening
socket is inherited as the descriptor named in `AGENTRIG_WARM_LISTEN_FD`; standard input is the controller's end of a
pipe, whose end of file means the controller is gone. Protocol, one connection per worker: the shim sends one JSON
line (working directory, environment, execnet's arguments) with its standard streams attached; the server answers
`started PID`, later `ended STATUS` (a negative status: the signal that ended the worker). A shim whose connection
closes first was killed, and the server kills its worker. Single-threaded (a fork of a process with threads inherits
their locks held); when an import left a thread behind, a request cannot be read or the fork fails, the server
answers `cold` and the shim starts the worker the usual way.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import selectors
import signal
import socket
import sys
import threading
from typing import Any

__all__ = ["IMPORTS_VARIABLE", "LISTEN_FD_VARIABLE", "READY_FD_VARIABLE", "serve"]

LISTEN_FD_VARIABLE = "AGENTRIG_WARM_LISTEN_FD"
READY_FD_VARIABLE = "AGENTRIG_WARM_READY_FD"
"""A pipe's end the server writes one byte to and closes once it has imported everything: until then it has forked
no worker, and the controller may end it at once (`WarmWorkers.close`)."""
IMPORTS_VARIABLE = "AGENTRIG_WARM_IMPORTS"


def serve() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (again, for a caller of its own) the controller's pipe ends this
    listener = socket.socket(fileno=int(os.environ.pop(LISTEN_FD_VARIABLE)))
    imports = [name for name in os.environ.pop(IMPORTS_VARIABLE, "").split(",") if name]
    ready = os.environ.pop(READY_FD_VARIABLE, None)
    preimported = _import(imports)
    _Bootstrap.prepare()
    server = _Server(listener, preimported)
    if ready is not None:
        with contextlib.suppress(OSError):
            os.write(int(ready), b".")
            os.close(int(ready))
    try:
        server.run()
    finally:
        server.end_workers()
        os._exit(0)  # nothing to tear down that matters (the controller waits for this exit)


_WORKER_PLUGINS = (
    "xdist.plugin",
    "agentrig.pytest_plugin.items",
    "agentrig.pytest_plugin.guards",
    "agentrig.pytest_plugin.offline_keys",
    "agentrig.pytest_plugin.warm_workers",
    "pdb",  # pytest's debugging plugin imports it as it configures
)
"""Besides pytest's own plugins: what a worker's pytest imports as it configures (readline is not among them:
pytest imports it in the worker so that it attaches to the worker's own standard streams)."""


def _import(modules: list[str]) -> frozenset[str]:
    """Import what every worker imports, with cyclic collection off (what an import makes lives as long as the
    process); freeze it so the workers' collections never visit (nor copy) it. An import that fails is left to the
    worker, which reports it where it always did. Returns the names imported here, not by the worker's pytest."""
    gc.disable()
    try:
        pytest_plugins: tuple[str, ...] = ()
        with contextlib.suppress(Exception):
            from _pytest.config import default_plugins

            pytest_plugins = tuple(f"_pytest.{name}" for name in default_plugins)
        for module in (*pytest_plugins, *_WORKER_PLUGINS, *modules):
            with contextlib.suppress(Exception):
                importlib.import_module(module)
        with contextlib.suppress(Exception):
            import platform

            platform.platform()  # pytest-xdist's worker reports it; the first call runs `uname -p` (5 ms)
    finally:
        gc.freeze()
        gc.enable()
    return frozenset(sys.modules)


class _Server:
    def __init__(self, listener: socket.socket, preimported: frozenset[str]) -> None:
        self.listener = listener
        self.preimported = preimported
        self.selector = selectors.DefaultSelector()
        self.workers: dict[int, tuple[int, socket.socket]] = {}
        """pidfd -> (pid, the shim's connection)."""

    def run(self) -> None:
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "controller")
        while True:
            for key, _events in self.selector.select():
                if key.data == "controller":
                    if not os.read(sys.stdin.fileno(), 4096):
                        return
                elif key.data == "accept":
                    self._start_worker()
                elif key.data == "shim gone":
                    self._shim_gone(key.fileobj)  # pyright: ignore[reportArgumentType]
                else:
                    self._worker_ended(int(key.data))

    def _start_worker(self) -> None:
        connection, _address = self.listener.accept()
        fds: list[int] = []
        try:
            line, fds, _flags, _address = socket.recv_fds(connection, 1 << 16, 3)
            while line and not line.endswith(b"\n"):  # a large environment comes in more than one piece
                more = connection.recv(1 << 16)
                if not more:
                    break
                line += more
            request: dict[str, Any] = json.loads(line)
            if len(fds) != 3 or threading.active_count() > 1:
                raise ValueError("cold")  # a fork of a process with threads inherits their locks held
            sys.stderr.flush()
            pid = os.fork()
        except (OSError, ValueError, DeprecationWarning):  # the shim starts the worker cold
            # (DeprecationWarning: Python 3.12+ warns of a fork beside native threads; raised under `-W error`)
            with contextlib.suppress(OSError):
                connection.sendall(b"cold\n")
            connection.close()
            for fd in fds:
                os.close(fd)
            return
        if pid == 0:
            _become_worker(fds, request, self.preimported, self._own_fds(connection))
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.workers[pidfd] = (pid, connection)
        self.selector.register(pidfd, selectors.EVENT_READ, str(pidfd))
        self.selector.register(connection, selectors.EVENT_READ, "shim gone")
        with contextlib.suppress(OSError):
            connection.sendall(f"started {pid}\n".encode())

    def _own_fds(self, connection: socket.socket) -> list[int]:
        """The descriptors of this server, which a worker forked from it closes (the ones its imports opened stay)."""
        connections = [known.fileno() for _pid, known in self.workers.values()]
        return [self.listener.fileno(), self.selector.fileno(), connection.fileno(), *self.workers, *connections]

    def _worker_ended(self, pidfd: int) -> None:
        pid, connection = self.workers.pop(pidfd)
        self.selector.unregister(pidfd)
        _, status = os.waitpid(pid, 0)
        os.close(pidfd)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.waitstatus_to_exitcode(status)
        with contextlib.suppress(OSError):
            connection.sendall(f"ended {code}\n".encode())
        with contextlib.suppress(KeyError):  # unregistered already when the shim went first
            self.selector.unregister(connection)
        connection.close()

    def _shim_gone(self, connection: socket.socket) -> None:
        """The shim's connection said something or closed: it was killed (execnet's last resort); so is its worker."""
        for pidfd, (_pid, known) in self.workers.items():
            if known is connection:
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                self.selector.unregister(connection)  # the pidfd still reports the end, and the worker is reaped
                return

    def end_workers(self) -> None:
        """The controller is gone: so are the workers it can no longer see."""
        for pidfd, (pid, _connection) in self.workers.items():
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)


def _become_worker(fds: list[int], request: dict[str, Any], preimported: frozenset[str], server_fds: list[int]) -> None:
    """In the forked child: become what `python -u -c BOOTSTRAP` in the shim's place would be, run execnet's
    bootstrap from the shim's standard input, and exit as that interpreter would. Never returns (a return or an
    exception would run on into the server's loop)."""
    code = 1
    try:
        for fd in server_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        for number, fd in enumerate(fds):  # standard input replaces the controller's pipe
            os.dup2(fd, number)
            os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(number, signal.SIG_DFL)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["-c"]
        if "-B" in request["args"]:
            sys.dont_write_bytecode = True
        _quiet_rewrite_warnings(preimported)
        try:
            # execnet's bootstrap line, run in `__main__` as `python -c "import sys;exec(eval(sys.stdin.readline()))"`
            _Bootstrap.run(eval(sys.stdin.readline()), vars(sys.modules["__main__"]))
            code = 0
        except SystemExit as exit_request:
            code = exit_request.code if isinstance(exit_request.code, int) else int(exit_request.code is not None)
        except BaseException:  # what an interpreter does with an uncaught exception
            import traceback

            traceback.print_exc()
        _exit_as_interpreter()
    finally:
        os._exit(code)


def _exit_as_interpreter() -> None:
    """What the interpreter does at exit, short of tearing modules down: wait for non-daemon threads, run the
    `atexit` functions, flush the streams. (agentrig's own `worker_exit` usually ends the process from within.)"""
    import atexit

    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_functions is not None:
        run_exit_functions()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def _quiet_rewrite_warnings(preimported: frozenset[str]) -> None:
    """pytest warns that a plugin's package "was already imported so cannot be rewritten" when it finds it imported
    before its assertion rewriting starts: here agentrig's, and anyio's (pydantic-ai imports it), which this server
    imported, not the user. Their modules are libraries' (assertion rewriting serves test modules), and a cold worker
    imports them too; only the warning about them goes, any other stays."""
    from _pytest.assertion import rewrite

    hook: Any = rewrite.AssertionRewritingHook
    warn = getattr(hook, "_warn_already_imported", None)
    if warn is None:
        return

    def warn_unless_ours(self: Any, name: str) -> None:
        if name not in preimported:
            warn(self, name)

    hook._warn_already_imported = warn_unless_ours


class _Bootstrap:
    """execnet's bootstrap of a worker (`gateway_bootstrap.bootstrap_exec`) is the source of its `gateway_base`
    module (60 kB) followed by a few lines: compiled once here instead of in each worker, while the controller
    waits for the worker's answer before it starts the next one (9 ms a worker). Taken from the module's cached
    bytecode (1 ms, where compiling it took 12 ms before the first worker could fork), under the file name
    `exec` of the text gives it."""

    source: str | None = None
    code: Any = None

    @classmethod
    def prepare(cls) -> None:
        with contextlib.suppress(Exception):  # only ever a shortcut
            import importlib.util
            import inspect

            from execnet import gateway_base

            source = inspect.getsource(gateway_base) + "\n"
            spec = importlib.util.find_spec(gateway_base.__name__)
            loader: Any = spec.loader if spec is not None else None
            code = loader.get_code(gateway_base.__name__) if hasattr(loader, "get_code") else None
            if code is None:
                code = compile(source, "<string>", "exec")
            cls.code, cls.source = _named(code, "<string>"), source

    @classmethod
    def run(cls, source: str, namespace: dict[str, Any]) -> None:
        """`exec(source, namespace)`, as `exec` of the text would (the same file name, `<string>`)."""
        if cls.source is not None and source.startswith(cls.source):
            exec(cls.code, namespace)
            source = source[len(cls.source) :]
        exec(source, namespace)


def _named(code: Any, filename: str) -> Any:
    """`code` and the code objects within it, under `filename`."""
    constants = tuple(_named(value, filename) if isinstance(value, type(code)) else value for value in code.co_consts)
    return code.replace(co_filename=filename, co_consts=constants)
