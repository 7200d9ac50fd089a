"""Ctrl-C at any moment of `agentrig prompt --session` keeps every earlier turn: real SIGINTs sent to a real
process while the agent is built, while the request is in flight, mid-stream and while the session is saved.
SIGTERM is handled as Ctrl-C is (exit code 143)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agentrig.runtime.runfolder import jsonio
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, Reply, text
from tests.thread_signals import signal_another_thread

pytestmark = [pytest.mark.providers, pytest.mark.process]

EARLIER = [("request", "first question"), ("response", "first answer"), ("request", "second"), ("response", "two")]


def _model(server: LoopbackServer) -> list[str]:
    return ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]


def _two_answered_turns(server: LoopbackServer, session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server.add(text("first answer"), text("two"))
    for prompt in ("first question", "second"):
        code, _, err = run_main(capsys, "prompt", prompt, "--session", str(session), *_model(server))
        assert code == 0, err


def _turns(session: Path) -> list[tuple[str, str]]:
    messages = jsonio.read_json_file(session)["messages"]
    return [(message["kind"], message["parts"][0].get("content", "")) for message in messages]


def _environment() -> dict[str, str]:
    return {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "OPENAI_API_KEY": "sk-test"}


def _prompt_command(server: LoopbackServer, session: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "agentrig", "prompt", "third", "--session", str(session), *_model(server), *extra]


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll until `condition()` holds (a generous bound, not a timing assertion)."""
    limit = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < limit, f"never happened: {what}"
        time.sleep(0.02)


def _assert_kept(session: Path, stderr: str, *, tail: list[tuple[str, str]]) -> None:
    assert len(stderr.strip().splitlines()) == 1, stderr
    turns = _turns(session)
    assert turns[:4] == EARLIER
    assert turns[4:] == tail


def _check_passes(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(capsys, "check", str(session))
    assert code == 0, out + err


def test_ctrl_c_while_the_agent_is_built(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The factory presses Ctrl-C each time it is called: once while the agent is checked, again while the run builds
    it, so KeyboardInterrupt comes before the framework holds the history. That saved `[INTERRUPTED]` alone."""
    (tmp_path / "pressing.py").write_text(
        "import os, signal\n"
        "from pydantic_ai import Agent\n"
        "def factory():\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    return Agent()\n",
        encoding="utf-8",
    )
    server = loopback()
    session = tmp_path / "session.json"
    _two_answered_turns(server, session, capsys)

    finished = subprocess.run(
        _prompt_command(server, session, "--agent", "pressing:factory"),
        cwd=tmp_path,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert finished.returncode == 130, finished.stderr
    _assert_kept(session, finished.stderr, tail=[("request", "third"), ("response", "[INTERRUPTED]")])
    assert len(server.requests) == 2  # the third prompt sent nothing
    _check_passes(session, capsys)


_SIGNALS = pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["sigint", "sigterm"]
)


@pytest.mark.parametrize("to_another_thread", [False, True], ids=["", "to-another-thread"])
@_SIGNALS
def test_ctrl_c_while_the_request_is_in_flight(
    signum: signal.Signals,
    code: int,
    to_another_thread: bool,
    loopback: ServerFactory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = loopback()
    session = tmp_path / "session.json"
    _two_answered_turns(server, session, capsys)
    held = threading.Event()
    server.add(Reply(text="never seen", hold=held))

    process = subprocess.Popen(
        _prompt_command(server, session), env=_environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait_until(lambda: len(server.requests) == 3, "the third request reached the server")
        if to_another_thread:  # the main thread sleeps in the event loop's select, and only it runs the handler
            signal_another_thread(process.pid, signum)
        else:
            process.send_signal(signum)
        # Less than the server holds the reply (120 s): a signal not acted on fails here, never passes late.
        _, stderr = process.communicate(timeout=60)
    finally:
        held.set()
        if process.poll() is None:
            process.kill()

    assert process.returncode == code, stderr
    assert stderr == f"agentrig: error: interrupted; {session} keeps an [INTERRUPTED] response\n"
    _assert_kept(session, stderr, tail=[("request", "third"), ("response", "[INTERRUPTED]")])
    _check_passes(session, capsys)


@_SIGNALS
def test_ctrl_c_mid_stream_keeps_the_text_that_arrived(
    signum: signal.Signals, code: int, loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback()
    session = tmp_path / "session.json"
    _two_answered_turns(server, session, capsys)
    held = threading.Event()
    # The role chunk and the first piece of text arrive; the stream then stalls until the test lets it go on.
    pieces = ("The first part of the answer ", "and the rest of it.")
    server.add(Reply(text="".join(pieces), text_deltas=pieces, hold=held, stall_after_events=2))

    shown = bytearray()
    with subprocess.Popen(
        _prompt_command(server, session, "--stream"), env=_environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        stdout = process.stdout

        def read_stdout() -> None:
            while chunk := os.read(stdout.fileno(), 4096):
                shown.extend(chunk)

        reader = threading.Thread(target=read_stdout, daemon=True)
        reader.start()
        try:
            _wait_until(lambda: b"The first part of the" in shown, "the first delta was printed")
            process.send_signal(signum)
            process.wait(timeout=120)  # not communicate(): it would read stdout too, from under the reader
        finally:
            held.set()
            if process.poll() is None:
                process.kill()
        reader.join(timeout=10)
        stderr = process.stderr.read().decode()

    assert process.returncode == code, stderr
    assert shown.decode() == "The first part of the answer \n"  # what had arrived, its line ended
    _assert_kept(
        session, stderr, tail=[("request", "third"), ("response", "[INTERRUPTED] The first part of the answer")]
    )
    _check_passes(session, capsys)


# Ctrl-C pressed twice while the session file is being written (its fsync): the first only asks asyncio to cancel
# the run, the second raises KeyboardInterrupt where it lands, which aborted the atomic write and lost the answer.
_PRESS_DURING_SAVE = """
import os, signal, sys
real_fsync = os.fsync
def fsync_while_ctrl_c_is_pressed(descriptor):
    os.kill(os.getpid(), signal.SIGINT)
    os.kill(os.getpid(), signal.SIGINT)
    real_fsync(descriptor)
os.fsync = fsync_while_ctrl_c_is_pressed
from agentrig.cli import main
main(sys.argv[1:])
"""


def test_ctrl_c_while_the_session_is_saved_keeps_the_answer(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback()
    session = tmp_path / "session.json"
    _two_answered_turns(server, session, capsys)
    server.add(text("third answer"))
    command = [sys.executable, "-c", _PRESS_DURING_SAVE, *_prompt_command(server, session)[3:]]

    finished = subprocess.run(command, env=_environment(), capture_output=True, text=True, timeout=120)

    assert finished.returncode == 130, finished.stderr
    assert finished.stdout == "third answer\n"  # paid for and saved: shown too
    assert finished.stderr == f"agentrig: error: interrupted; {session} was saved with the answer\n"
    _assert_kept(session, finished.stderr, tail=[("request", "third"), ("response", "third answer")])
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]
    _check_passes(session, capsys)
