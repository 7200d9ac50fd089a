"""Ctrl-C in the first moments of `agentrig prompt` (while Python imports agentrig, typer, pydantic-ai): one line,
exit code 130, never a traceback from agentrig's code; the session file is never left corrupt. Real processes, real
SIGINTs at several delays after the start (the delays choose moments, nothing is asserted about time).

What comes before agentrig's first line (the interpreter's own start-up: its `site` module, `runpy`, importlib
reading `agentrig/__main__.py`) is out of any program's reach: a SIGINT there kills the process, or Python prints
its own traceback. On a busy machine that lasts tens of milliseconds, so such runs are told apart, not failed: their
traceback holds no frame of agentrig's code."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import agentrig
from agentrig.runtime.history.sessions import load_session
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import Reply

pytestmark = [pytest.mark.providers, pytest.mark.process]

CLI_MOMENTS = (0.0, 0.3, 0.5, 0.7, 0.9)
"""When signals are sent, as fractions of how long `agentrig --version` takes here (importing the CLI: where Ctrl-C
printed tracebacks). Measured first, so a busy machine still gets signals all through agentrig's start-up rather
than only in the interpreter's."""
START_UP_BOUND_S = 60
"""A prompt's start-up takes 1-3 s here; one that has not reached the server after this is stuck: the test fails with
every thread's stack of the stuck process."""
PROMPT_MOMENTS = (0.3, 0.6)
"""And as fractions of how long a prompt takes to reach the server (pydantic-ai imported, the session locked)."""


def killed_before_agentrig_ran(signum: int) -> tuple[int, ...]:
    """What the interpreter does with a signal before agentrig's first line (before the prompt command's, for
    SIGTERM): killed by it (SIGINT: before Python installs its handler, or after it printed an uncaught
    KeyboardInterrupt), or exit 1 when SIGINT interrupted the `site` module."""
    return (-signum, 1) if signum == signal.SIGINT else (-signum,)


AGENTRIG_CODE = str(Path(agentrig.__file__).parent)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["sigint", "sigterm"])
def test_a_signal_at_start_up_never_prints_a_traceback(
    signum: signal.Signals, code: int, loopback: ServerFactory, tmp_path: Path
) -> None:
    held = threading.Event()
    server = loopback(default=Reply(text="never seen", hold=held))
    seen: list[tuple[float, int, str]] = []

    def prompt(attempt: int, *, signal_after: float | None) -> None:
        session = tmp_path / f"session-{attempt}.json"
        command = [sys.executable, "-m", "agentrig", "prompt", "hi", "--session", str(session)]
        command += ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]
        # PYTHONFAULTHANDLER: a SIGABRT prints every thread's stack (a start-up that never reaches the server).
        environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "OPENAI_API_KEY": "sk-test"}
        environment["PYTHONFAULTHANDLER"] = "1"
        sent = len(server.requests)
        started = time.monotonic()
        process = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if signal_after is None:  # the whole start-up: until the request reaches the server
            while len(server.requests) == sent and process.poll() is None:
                if time.monotonic() - started > START_UP_BOUND_S:  # a hang, not a slow machine: say where it is
                    process.send_signal(signal.SIGABRT)
                    _, stderr = process.communicate(timeout=120)
                    pytest.fail(f"agentrig prompt never reached the server in {START_UP_BOUND_S} s:\n{stderr}")
                time.sleep(0.005)
        else:
            time.sleep(signal_after)
        elapsed = time.monotonic() - started
        process.send_signal(signum)
        # Less than the server holds a reply (120 s): a signal not acted on fails here, never passes late (one
        # the kernel handed to another thread than the main one once did, after 120 s).
        _, stderr = process.communicate(timeout=60)
        seen.append((elapsed, process.returncode, stderr))
        if session.exists() and session.stat().st_size:
            load_session(session)  # whole: a session, not half a file

    try:
        prompt(0, signal_after=None)
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "agentrig", "--version"], capture_output=True, check=True, timeout=120)
        cli_start_up, start_up = time.monotonic() - started, seen[0][0]
        moments = [m * cli_start_up for m in CLI_MOMENTS] + [m * start_up for m in PROMPT_MOMENTS]
        for attempt, moment in enumerate(moments, start=1):
            prompt(attempt, signal_after=moment)
    finally:
        held.set()

    reached_agentrig = 0
    for delay, returncode, stderr in seen:
        if returncode in killed_before_agentrig_ran(signum):
            assert AGENTRIG_CODE not in stderr, (delay, stderr)  # the interpreter's own start-up, not agentrig's
            continue
        reached_agentrig += 1
        assert returncode == code, (delay, returncode, stderr)
        assert len(stderr.splitlines()) == 1, (delay, stderr)
        assert stderr.startswith("agentrig: "), (delay, stderr)
    assert seen[0][1] == code, seen[0]  # the first one waited for the request: agentrig's own handling
