"""pytest-xdist workers forked warm, not started cold: the controller's side (`warm_server`, `warm_shim`).

A pytest-xdist worker is a fresh interpreter, started by execnet once the controller has started, that imports
pytest, pydantic-ai and agentrig before its first scenario: with two workers, twice the same second of imports,
after the controller's own start-up (`docs/performance.md`). `agentrig run -j N` forks its workers from a
forkserver that imported pydantic-ai once, started as soon as the run's options were read; this does the same for
`pytest -n N`. When the controller configures a session that will run scenarios on `popen` workers, it starts the
warm server at once (it imports while the controller goes on), and points each worker's execnet spec at the shim
(`popen//python=...`); execnet and pytest-xdist work as ever, over the same pipes, and the worker is a fork of the
server with the same streams, directory, environment and command line. If the server cannot be used, the shim
starts the cold interpreter, as before.

Off (the workers start cold) with the ini option `agentrig_warm_workers = false`, under coverage (a process forked
from the server would not be measured from its start), with `--tx` specs of the user's own, and where the
platform lacks the means (Linux's pidfds, descriptor passing).
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

__all__ = ["WARM_WORKERS_INI", "WarmWorkers"]

WARM_WORKERS_INI = "agentrig_warm_workers"
_SHIM = Path(__file__).with_name("warm_shim.py")
_SERVER = (
    "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "from agentrig.pytest_plugin.warm_server import serve; serve()"
)
"""Ctrl-C ignored from the first statement: a terminal's Ctrl-C reaches the whole process group, and the session
ends the server (through its pipe), not the signal; interrupted in its imports, it would print a traceback."""
_SOCKET = "workers.sock"
_USER_MODULES = Path("imports", "modules.json")
"""In a folder of its own: the reader removes the file's folder once it has read it (`warm_up`)."""


def _platform_can() -> bool:
    return (
        sys.platform.startswith("linux")
        and hasattr(os, "pidfd_open")
        and hasattr(socket, "send_fds")
        and hasattr(signal, "pidfd_send_signal")
    )


def wanted(early_config: pytest.Config, has_scenarios: bool) -> bool:
    """Whether this session will be a pytest-xdist controller whose workers should fork warm. Decided at
    `pytest_load_initial_conftests`, from the options as parsed so far (xdist turns `-n` into `--tx` later)."""
    option = early_config.known_args_namespace
    processes = getattr(option, "numprocesses", None)  # None: pytest-xdist not installed, or `-p no:xdist`
    return (
        has_scenarios
        and bool(processes)
        and not getattr(option, "tx", None)  # a --tx of the user's is theirs
        and not getattr(option, "looponfail", False)
        and bool(early_config.getini(WARM_WORKERS_INI))
        and "coverage" not in sys.modules
        and not getattr(option, "cov_source", None)  # pytest-cov's --cov, whether or not coverage is imported yet
        and _platform_can()
    )


def guess_early(config: pytest.Config) -> tuple[list[str], str] | None:
    """At the plugin's registration, while pytest still imports the plugins after it: (the arguments, the engine)
    when the raw command line (`PYTEST_ADDOPTS`, the ini's `addopts`, the arguments) asks for pytest-xdist workers
    that would fork warm, else None. The plugins imported after this one (pytest-xdist's, logfire's and anyio's
    where installed: 0.2 s here) come before any plugin sees the options parsed, and the server's imports lead to
    the first item. A guess, made only while it can be: not for a plugin handed to `pytest.main(plugins=...)`
    (registered before the ini is read), nor once the initial conftests load (`--confcutdir` is set by then; given
    on the command line, no guess is made). `wanted` decides at `pytest_load_initial_conftests`."""
    try:
        config.rootpath  # noqa: B018 (set once pytest has read the ini; before that the guess cannot be made)
    except AttributeError:
        return None
    namespace = config.known_args_namespace
    if getattr(namespace, "confcutdir", None) is not None:
        return None
    plugins = {str(plugin).strip() for plugin in getattr(namespace, "plugins", None) or ()}
    autoload = not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD") and not getattr(
        namespace, "disable_plugin_autoload", False
    )
    if plugins & {"no:xdist", "no:xdist.plugin"} or not (autoload or plugins & {"xdist", "xdist.plugin"}):
        return None
    arguments = [
        *shlex.split(os.environ.get("PYTEST_ADDOPTS", "")),
        *(str(argument) for argument in config.getini("addopts")),
        *config.invocation_params.args,
    ]
    workers = _option_value(arguments, "-n", "--numprocesses")
    if workers is None or workers.strip().lstrip("0") == "" or _names_other_workers(arguments):
        return None
    if not config.getini(WARM_WORKERS_INI) or "coverage" in sys.modules or not _platform_can():
        return None
    return arguments, _option_value(arguments, "--agentrig-engine") or "pydantic-ai"


def _option_value(arguments: list[str], *names: str) -> str | None:
    """The value of the last of `names` in `arguments`, as argparse reads it (`-n 2`, `-n2`, `--numprocesses=2`)."""
    value: str | None = None
    for index, argument in enumerate(arguments):
        for name in names:
            if argument == name:
                value = arguments[index + 1] if index + 1 < len(arguments) else None
            elif argument.startswith(f"{name}=") and name.startswith("--"):
                value = argument.removeprefix(f"{name}=")
            elif argument.startswith(name) and not name.startswith("--") and not argument.startswith("--"):
                value = argument.removeprefix(name)
    return value


def _names_other_workers(arguments: list[str]) -> bool:
    """Workers of the user's own (`--tx`), `--looponfail`, or coverage (pytest-cov's `--cov`): `wanted` says no."""
    return any(
        argument in ("-f", "--looponfail", "--tx") or argument.startswith(("--tx=", "--cov")) for argument in arguments
    )


class WarmWorkers:
    """The warm server of one session, and the pytest-xdist hook that sends its workers there."""

    def __init__(
        self,
        directory: Path,
        process: subprocess.Popen[bytes],
        *,
        imports: tuple[str, ...] = (),
        waits_for_user_modules: bool,
        ready: int,
    ) -> None:
        self.directory = directory
        self.process = process
        self.imports = imports
        self._ready = ready
        """Our end of a pipe the server writes to once it has imported everything (or closes by ending)."""
        self.socket_path = directory / _SOCKET
        self.user_modules_path = directory / _USER_MODULES
        self.waits_for_user_modules = waits_for_user_modules
        """The server imports the user's modules the scenarios name, once the controller writes them (it must)."""

    @classmethod
    def start(cls, imports: tuple[str, ...], *, user_modules: bool = False) -> WarmWorkers | None:
        """Start the server (it imports `imports`, then with `user_modules` those the controller names at
        `user_modules_path`, while the controller goes on), or None if it cannot start."""
        from agentrig.pytest_plugin.warm_server import (  # standard library only
            IMPORTS_VARIABLE,
            LISTEN_FD_VARIABLE,
            READY_FD_VARIABLE,
        )
        from agentrig.runtime.suite.processes.pool import (  # standard library only
            WORKER_IMPORTS_FROM_VARIABLE,
            WORKER_IMPORTS_VARIABLE,
        )

        directory = Path(tempfile.mkdtemp(prefix="agentrig-warm-"))  # 0700: only this user's shims connect
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ready, ready_to_write = os.pipe()
        try:
            listener.bind(str(directory / _SOCKET))
            listener.listen(64)  # bound before the server starts: a shim that connects early waits in the queue
            env = {
                **os.environ,
                LISTEN_FD_VARIABLE: str(listener.fileno()),
                READY_FD_VARIABLE: str(ready_to_write),
                IMPORTS_VARIABLE: ",".join(imports),
            }
            if user_modules:
                env[WORKER_IMPORTS_VARIABLE] = str(directory / _USER_MODULES)
                env[WORKER_IMPORTS_FROM_VARIABLE] = str(os.getpid())
            process = subprocess.Popen(
                [sys.executable, "-u", "-c", _SERVER],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                # Nothing of the server's own is for the user (its failures fall back to cold workers), and what
                # the user's modules print as the server imports them would bypass pytest's capture: the workers
                # write to the streams their shims hand over.
                stderr=subprocess.DEVNULL,
                pass_fds=(listener.fileno(), ready_to_write),
                env=env,
            )
        except OSError:
            os.close(ready)
            shutil.rmtree(directory, ignore_errors=True)
            return None
        finally:
            listener.close()
            os.close(ready_to_write)
        return cls(directory, process, imports=imports, waits_for_user_modules=user_modules, ready=ready)

    def serves(self, imports: tuple[str, ...], *, user_modules: bool) -> bool:
        """Started for what the session now knows it needs (a server started early on a guess may not be)."""
        return self.imports == imports and self.waits_for_user_modules == user_modules

    def discard(self) -> None:
        """End a server that has no worker (started on a wrong guess, or a session that ended before it was ready):
        at once, in the middle of its imports if need be. The socket goes first: a shim waiting for the server
        then exits instead of starting a cold worker for a session that is ending (`warm_shim`)."""
        shutil.rmtree(self.directory, ignore_errors=True)
        self.process.kill()
        self.process.wait()
        self._release()

    def _serving(self) -> bool:
        """The server has imported everything and may have forked workers (or has ended)."""
        return bool(select.select([self._ready], [], [], 0)[0])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_setupnodes(self, config: pytest.Config, specs: list[Any]) -> None:
        python = " ".join(shlex.quote(part) for part in (sys.executable, "-I", "-S", str(_SHIM), str(self.socket_path)))
        for spec in specs:
            if spec.popen and not (spec.python or spec.via or spec.chdir):
                spec.python = python

    def close(self) -> None:
        """End the server and remove its socket. One still importing has forked no worker: it ends at once (a
        session interrupted early, or one that never read its files, does not wait for those imports). One that
        serves ends when its end of the pipe closes, taking any worker still running with it."""
        if not self._serving():
            self.discard()
            return
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._release()

    def _release(self) -> None:
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        with contextlib.suppress(OSError):
            os.close(self._ready)
        shutil.rmtree(self.directory, ignore_errors=True)
