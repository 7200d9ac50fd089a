"""The run's limiter served to its `-j N` workers over a local socket: one limiter for the run, not one per worker.

    service = LimiterService(core)                 # in the run's process; `service.address` goes to the workers
    limiter = RemoteLimiter(service.address)       # in a worker: the `Limiter` its retrying model awaits
    service.close()

The messages are small tuples over `multiprocessing.connection` (a Unix socket on Linux and macOS, a named pipe on
Windows), authenticated with a random key that only the run and its workers know:

    worker -> run   ("acquire", id, key)  ("cancel", id)  ("release", id, tokens, pause_s)  ("retry", id)
    run -> worker   ("granted", id)  ("retry", id, allowed)

A worker's connection that closes (the worker died) gives back every slot it held or waited for. A round trip costs
a few hundred microseconds (bench/bench_providers_concurrency.py measures it), against a request's hundreds of
milliseconds.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Client, Connection, Listener
from typing import Any

from agentrig.errors import InfrastructureError
from agentrig.runtime.models.limiter import LimiterCore, Slot

__all__ = ["LimiterAddress", "LimiterService", "RemoteLimiter"]


@dataclass(frozen=True, slots=True)
class LimiterAddress:
    """Where a run's limiter listens, and the key it admits workers with (never printed)."""

    address: Any
    """A socket path (a named pipe on Windows)."""
    authkey: bytes = field(repr=False)


class LimiterService:
    """Serves `core` to other processes until `close` (a daemon thread per connection)."""

    def __init__(self, core: LimiterCore) -> None:
        self.core = core
        authkey = secrets.token_bytes(32)
        self._listener = Listener(authkey=authkey)
        self.address = LimiterAddress(self._listener.address, authkey)
        self._closed = False
        threading.Thread(target=self._accept, name="agentrig-limiter-accept", daemon=True).start()

    def close(self) -> None:
        """Stop accepting workers and stop the core's timer."""
        self._closed = True
        self._listener.close()
        self.core.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                connection = self._listener.accept()
            except Exception:  # closed, or a client that failed the handshake
                continue
            threading.Thread(target=self._serve, args=(connection,), name="agentrig-limiter", daemon=True).start()

    def _serve(self, connection: Connection) -> None:
        tickets: dict[int, int] = {}
        sending = threading.Lock()

        def send(message: tuple[Any, ...]) -> None:
            with sending:
                connection.send(message)  # a worker that is gone: the grant fails, and the core passes the slot on

        try:
            while True:
                message = connection.recv()
                operation, request = message[0], message[1]
                if operation == "acquire":
                    tickets[request] = self.core.request(
                        message[2], lambda _, request=request: send(("granted", request))
                    )
                elif operation == "cancel":
                    ticket = tickets.pop(request, None)
                    if ticket is not None:
                        self.core.cancel(ticket)
                elif operation == "release":
                    ticket = tickets.pop(request, None)
                    if ticket is not None:
                        self.core.release(ticket, tokens=message[2], pause_s=message[3])
                elif operation == "retry":
                    send(("retry", request, self.core.take_retry()))
        except (EOFError, OSError):
            pass
        finally:
            for ticket in tickets.values():
                self.core.cancel(ticket)
            connection.close()


class RemoteLimiter:
    """The run's limiter seen from a worker: one connection, shared by every event loop of the process."""

    def __init__(self, address: LimiterAddress) -> None:
        self._address = address
        self._connection: Connection | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]] = {}
        self._broken: str | None = None

    async def acquire(self, key: str) -> Slot:
        request, granted = self._register()
        self._send(("acquire", request, key))
        try:
            await granted
        except BaseException:
            self._forget(request)
            self._send(("cancel", request))
            raise
        return Slot(request, key)

    def release(self, slot: Slot, *, tokens: int | None = None, pause_s: float | None = None) -> None:
        self._send(("release", slot.ticket, tokens, pause_s))

    async def take_retry(self) -> bool:
        request, answer = self._register()
        self._send(("retry", request))
        try:
            return bool(await answer)
        finally:
            self._forget(request)

    def _register(self) -> tuple[int, asyncio.Future[Any]]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            self._connect()
            request = next(self._ids)
            self._pending[request] = (loop, future)
        return request, future

    def _forget(self, request: int) -> None:
        with self._lock:
            self._pending.pop(request, None)

    def _connect(self) -> None:
        """Under the lock: the connection, opened on first use, with its reader thread."""
        if self._broken is not None:
            raise InfrastructureError(self._broken)
        if self._connection is None:
            try:
                self._connection = Client(self._address.address, authkey=self._address.authkey)
            except OSError as error:
                self._broken = f"cannot reach the run's request limiter: {error}"
                raise InfrastructureError(self._broken) from None
            threading.Thread(target=self._read, name="agentrig-limiter-client", daemon=True).start()

    def _send(self, message: tuple[Any, ...]) -> None:
        with self._lock:
            connection = self._connection
            if connection is None or self._broken is not None:
                return
            try:
                connection.send(message)
            except OSError as error:
                self._fail_all(f"lost the run's request limiter: {error}")

    def _read(self) -> None:
        connection = self._connection
        assert connection is not None
        try:
            while True:
                reply = connection.recv()
                with self._lock:
                    waiting = self._pending.pop(reply[1], None)
                granted = reply[0] == "granted"
                delivered = waiting is not None and _deliver(*waiting, True if granted else reply[2], None)
                if granted and not delivered:  # given up meanwhile (its cancel is on the way), or its loop is closed
                    self._send(("cancel", reply[1]))
        except (EOFError, OSError) as error:
            with self._lock:
                self._fail_all(f"lost the run's request limiter: {error or 'the run ended'}")

    def _fail_all(self, reason: str) -> None:
        """Under the lock: every waiting request fails with `reason`, and so does every later one."""
        self._broken = reason
        pending, self._pending = self._pending, {}
        for loop, future in pending.values():
            _deliver(loop, future, None, InfrastructureError(reason))


def _deliver(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], value: Any, error: Exception | None) -> bool:
    """Settle `future` in its loop; False when that loop is closed (nobody waits any more)."""

    def settle() -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    try:
        loop.call_soon_threadsafe(settle)
    except RuntimeError:
        return False
    return True
