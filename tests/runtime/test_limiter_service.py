"""The run's limiter served to `-j N` workers (`models.limiter_service`): a local client that connects and says
nothing, or answers with the wrong key, never holds up a worker's request, is dropped, and the socket is the
owner's alone.

Nothing here waits on time to synchronise: each wait is on a thread's event or a socket, with a generous upper
bound that only turns a hang into a failure."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import subprocess
import threading
from collections.abc import Iterator
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client
from pathlib import Path

import pytest

from agentrig.runtime.models.limiter import LimiterCore
from agentrig.runtime.models.limiter_service import LimiterService, RemoteLimiter
from agentrig.runtime.models.provider_options import ProviderOptions

KEY = "openai@http://127.0.0.1:9/v1"
_UPPER_BOUND_S = 10.0
"""How long a wait may take before the test calls it a hang (it takes milliseconds when all is well)."""

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="a Unix socket (Windows: a loopback port)")


@pytest.fixture
def service() -> Iterator[LimiterService]:
    # A deadline far longer than the test: a silent client is still connected when the real acquire completes.
    service = LimiterService(LimiterCore(ProviderOptions(max_concurrency=2)), handshake_timeout_s=600)
    try:
        yield service
    finally:
        service.close()


def _acquire_in_a_thread(service: LimiterService) -> threading.Event:
    """A worker's acquire and release, in a thread of its own (it blocks while it connects); set once granted."""
    granted = threading.Event()

    async def acquire() -> None:
        limiter = RemoteLimiter(service.address)
        slot = await limiter.acquire(KEY)
        granted.set()
        limiter.release(slot)

    threading.Thread(target=asyncio.run, args=(acquire(),), daemon=True).start()
    return granted


def _silent_client(service: LimiterService) -> socket.socket:
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.connect(service.address.address)
    return silent


def _still_connected(client: socket.socket) -> bool:
    """Whether the service has not closed `client` (its challenge may be waiting unread)."""
    client.setblocking(False)
    try:
        while client.recv(4096):
            pass
    except BlockingIOError:
        return True
    return False  # end of stream: dropped


def test_a_silent_client_does_not_stall_a_workers_acquire(service: LimiterService) -> None:
    silent = _silent_client(service)
    try:
        assert _acquire_in_a_thread(service).wait(_UPPER_BOUND_S), "the acquire waited behind a silent client"
        assert _still_connected(silent)  # granted while the silent client still held its handshake open
    finally:
        silent.close()


def test_a_client_with_a_wrong_key_is_refused_and_delays_nobody(service: LimiterService) -> None:
    silent = _silent_client(service)  # the wrong key's handshake runs while another is pending
    try:
        with pytest.raises(AuthenticationError):
            Client(service.address.address, authkey=b"not the key" * 3)
        assert _acquire_in_a_thread(service).wait(_UPPER_BOUND_S)
        assert _still_connected(silent)
    finally:
        silent.close()


def test_a_client_that_does_not_authenticate_in_time_is_dropped() -> None:
    service = LimiterService(LimiterCore(ProviderOptions(max_concurrency=1)), handshake_timeout_s=0.1)
    silent = _silent_client(service)
    silent.settimeout(_UPPER_BOUND_S)
    try:
        while silent.recv(4096):  # the challenge, then the end of the stream once the deadline passed
            pass
        assert _acquire_in_a_thread(service).wait(_UPPER_BOUND_S)
    finally:
        silent.close()
        service.close()


def test_the_socket_and_its_folder_are_the_owners_alone(service: LimiterService) -> None:
    path = Path(service.address.address)
    assert stat.S_ISSOCK(path.stat().st_mode)
    assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0
    folder = path.parent.stat()
    assert stat.S_IMODE(folder.st_mode) == 0o700
    assert folder.st_uid == os.getuid()


def test_the_socket_is_removed_with_its_folder_when_the_service_closes() -> None:
    service = LimiterService(LimiterCore(ProviderOptions(max_concurrency=1)))
    folder = Path(service.address.address).parent
    service.close()
    assert not folder.exists()


_CONNECT = """\
import socket, sys
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    client.connect(sys.argv[1])
except PermissionError:
    print("refused")
else:
    print("connected")
"""


_SYSTEM_PYTHON = "/usr/bin/python3"
"""An interpreter another user may run (this venv's may live under a home folder that user cannot enter)."""


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to act as another user")
@pytest.mark.skipif(not os.access(_SYSTEM_PYTHON, os.X_OK), reason=f"needs {_SYSTEM_PYTHON} for the other user")
def test_another_local_user_cannot_reach_the_socket(service: LimiterService) -> None:
    nobody = 65534
    result = subprocess.run(
        [_SYSTEM_PYTHON, "-I", "-c", _CONNECT, str(service.address.address)],
        user=nobody,
        group=nobody,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.stdout.strip() == "refused", result.stderr
