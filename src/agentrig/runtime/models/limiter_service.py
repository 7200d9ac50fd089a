"""The run's limiter served to its `-j N` workers over a local socket: one limiter for the run, not one per worker.

    service = LimiterService(core)                 # in the run's process; `service.address` goes to the workers
    limiter = RemoteLimiter(service.address)       # in a worker: the `Limiter` its retrying model awaits
    service.close()

The messages are small tuples over `multiprocessing.connection` Connections, on a Unix socket in a folder only the
run's user may enter, the socket itself owner-only (Linux and macOS; a loopback port on Windows), authenticated
with a random key that only the run and its workers know. The handshake of each connection runs in a thread of its
own with a deadline (`HANDSHAKE_TIMEOUT_S`), never in the accept loop: a local client that connects and says nothing,
or answers with the wrong key, is dropped and holds up no worker (issue 44).

    worker -> run   ("acquire", id, key)  ("cancel", id)  ("release", id, tokens, pause_s)  ("retry", id)
                    ("reserve", id)  ("settle", id, usd)
    run -> worker   ("granted", id)  ("retry", id, allowed)  ("reserved", id, allowed)

A worker's connection that closes (the worker died) gives back every slot it held or waited for, and settles the
requests it had reserved under `--max-cost` at nothing (what they cost is not known). A round trip costs
a few hundred microseconds (bench/bench_providers_concurrency.py measures it), against a request's hundreds of
milliseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import secrets
import shutil
import socket
import struct
import tempfile
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Client, Connection, answer_challenge, deliver_challenge
from typing import Any, cast

from agentrig.errors import InfrastructureError
from agentrig.runtime.models.limiter import LimiterCore, Slot

__all__ = ["HANDSHAKE_TIMEOUT_S", "LimiterAddress", "LimiterService", "RemoteLimiter"]

HANDSHAKE_TIMEOUT_S = 5.0
"""Seconds a new connection has to prove it knows the key (a worker needs milliseconds); then it is dropped."""


@dataclass(frozen=True, slots=True)
class LimiterAddress:
    """Where a run's limiter listens, and the key it admits workers with (never printed)."""

    address: Any
    """A socket path (a `(host, port)` on loopback on Windows)."""
    authkey: bytes = field(repr=False)


class LimiterService:
    """Serves `core` to other processes until `close` (a daemon thread per connection)."""

    def __init__(self, core: LimiterCore, *, handshake_timeout_s: float = HANDSHAKE_TIMEOUT_S) -> None:
        self.core = core
        self._handshake_timeout_s = handshake_timeout_s
        self._server, address, self._folder = _listen()
        self.address = LimiterAddress(address, secrets.token_bytes(32))
        self._closed = False
        threading.Thread(target=self._accept, name="agentrig-limiter-accept", daemon=True).start()

    def close(self) -> None:
        """Stop accepting workers, remove the socket's folder and stop the core's timer."""
        self._closed = True
        with contextlib.suppress(OSError):  # wakes the accept loop: closing a listening socket alone does not, on Linux
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
        self.core.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:  # closed (the loop ends), or a connection reset before it was accepted
                continue
            # The handshake waits on the client: in the accept loop, one that never answers would hold up every
            # worker's connection behind it (multiprocessing's Listener.accept does exactly that).
            threading.Thread(target=self._admit, args=(client,), name="agentrig-limiter-handshake", daemon=True).start()

    def _admit(self, client: socket.socket) -> None:
        try:
            connection = _authenticate(client, self.address.authkey, self._handshake_timeout_s)
        except Exception:  # silent past the deadline, the wrong key, a garbled challenge, gone: dropped
            client.close()
            return
        self._serve(connection)

    def _serve(self, connection: Connection) -> None:
        tickets: dict[int, int] = {}
        reserved = 0  # requests admitted under --max-cost and not yet settled
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
                elif operation == "reserve":
                    allowed = self.core.spend.reserve()
                    reserved += allowed
                    send(("reserved", request, allowed))
                elif operation == "settle" and reserved > 0:
                    reserved -= 1
                    self.core.spend.settle(float(message[2]))
        except (EOFError, OSError):
            pass
        finally:
            for ticket in tickets.values():
                self.core.cancel(ticket)
            for _ in range(reserved):
                self.core.spend.settle(0.0)
            connection.close()


def _listen() -> tuple[socket.socket, Any, str | None]:
    """(listening socket, its address, the private folder holding it or None)."""
    if not hasattr(socket, "AF_UNIX"):  # Windows: loopback only, and the key is the guard
        server = socket.create_server(("127.0.0.1", 0))
        return server, server.getsockname()[:2], None
    folder = tempfile.mkdtemp(prefix="agentrig-limiter-")  # 0700: no other local user enters it, or reaches the socket
    path = os.path.join(folder, "limiter.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(path)
        os.chmod(path, 0o600)  # owner-only as well: the folder guards the moment between bind and chmod
        server.listen(64)
    except OSError:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return server, path, folder


def _authenticate(client: socket.socket, authkey: bytes, timeout_s: float) -> Connection:
    """`client` as a Connection once it proved it knows `authkey` (and heard that the service does too), all within
    `timeout_s`; raises otherwise. The handshake is multiprocessing's own, the one `Client` answers."""
    handshake = _Handshake(client, time.monotonic() + timeout_s)
    # deliver_challenge and answer_challenge call only send_bytes and recv_bytes, which _Handshake provides.
    deliver_challenge(cast(Connection, handshake), authkey)
    answer_challenge(cast(Connection, handshake), authkey)
    client.settimeout(None)  # a Connection reads a blocking socket
    return Connection(client.detach())


class _Handshake:
    """`send_bytes` and `recv_bytes` framed as a Connection frames them (a 4-byte big-endian length, then the bytes),
    on a socket with one deadline for the whole exchange: a client that sends a byte at a time cannot stretch it,
    as a per-read timeout would let it."""

    def __init__(self, client: socket.socket, deadline: float) -> None:
        self._client = client
        self._deadline = deadline

    def send_bytes(self, data: bytes) -> None:
        self._arm()
        self._client.sendall(struct.pack("!i", len(data)) + data)

    def recv_bytes(self, maxlength: int | None = None) -> bytes:
        (size,) = struct.unpack("!i", self._exactly(4))
        if size < 0 or (maxlength is not None and size > maxlength):
            raise OSError(f"a handshake message of {size} bytes")
        return self._exactly(size)

    def _exactly(self, count: int) -> bytes:
        received = bytearray()
        while len(received) < count:
            self._arm()
            chunk = self._client.recv(count - len(received))
            if not chunk:
                raise EOFError("the client left during the handshake")
            received += chunk
        return bytes(received)

    def _arm(self) -> None:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the client did not authenticate in time")
        self._client.settimeout(remaining)


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

    async def reserve_spend(self) -> bool:
        request, answer = self._register()
        self._send(("reserve", request))
        try:
            return bool(await answer)
        finally:
            self._forget(request)

    def settle_spend(self, usd: float) -> None:
        self._send(("settle", 0, usd))

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
