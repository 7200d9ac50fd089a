"""The lock of `agentrig prompt --session` is held on the session file itself: no file beside it can be cleaned up
from under a running prompt (a lock file that "may stay behind" invited it, and a second prompt then took a lock
of its own and one of the two turns was lost). Two real processes against the loopback server."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.runfolder.session_lock import locked_session
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, Reply, text

pytestmark = [pytest.mark.providers, pytest.mark.process]

_ENVIRONMENT = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "OPENAI_API_KEY": "sk-test"}


def _arguments(server: LoopbackServer, prompt: str, session: Path, *extra: str) -> list[str]:
    model = ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]
    return ["prompt", prompt, "--session", str(session), *model, *extra]


def _command(server: LoopbackServer, prompt: str, session: Path) -> list[str]:
    return [sys.executable, "-m", "agentrig", *_arguments(server, prompt, session)]


def _wait_for_requests(server: LoopbackServer, count: int) -> None:
    """Until the server has received `count` requests (a generous bound, not a timing assertion)."""
    limit = time.monotonic() + 60
    while len(server.requests) < count:
        assert time.monotonic() < limit, "the first prompt never reached the server"
        time.sleep(0.02)


def _contents(session: Path) -> list[str]:
    return [message["parts"][0]["content"] for message in jsonio.read_json_file(session)["messages"]]


@pytest.mark.parametrize("earlier", [False, True], ids=["new-session", "existing-session"])
def test_cleaning_up_beside_a_busy_session_loses_no_turn(
    earlier: bool, loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """While the first prompt waits for its answer, everything in the session's folder but the session itself is
    removed (what a cleanup of leftover lock files does); the second prompt must still find the session busy."""
    held = threading.Event()
    server = loopback(default=text("second answer"))
    session = tmp_path / "same.json"
    if earlier:
        server.add(text("earlier answer"))
        code, _, err = run_main(capsys, *_arguments(server, "earlier", session))
        assert code == 0, err
    server.add(Reply(text="first answer", hold=held))
    sent_before = len(server.requests)
    first = subprocess.Popen(
        _command(server, "first prompt", session), env=_ENVIRONMENT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        _wait_for_requests(server, sent_before + 1)
        for entry in tmp_path.iterdir():
            if entry != session:
                entry.unlink()
        second = subprocess.run(
            _command(server, "second prompt", session), env=_ENVIRONMENT, capture_output=True, text=True, timeout=120
        )
    finally:
        held.set()
        first_out, first_err = first.communicate(timeout=120)

    assert first.returncode == 0, first_err
    assert first_out == b"first answer\n"
    assert second.returncode == 2, second.stderr
    assert second.stderr == (
        f"agentrig: error: {session}: in use by another agentrig prompt; nothing was sent (run the prompts one after "
        "the other)\n"
    )
    assert len(server.requests) == sent_before + 1  # the second prompt sent nothing
    assert _contents(session) == [*(["earlier", "earlier answer"] if earlier else []), "first prompt", "first answer"]
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["same.json"]  # no lock file beside it


def test_a_session_another_program_replaced_meanwhile_is_not_saved_over(
    loopback: ServerFactory, tmp_path: Path
) -> None:
    """Not through the lock (a user's editor, a sync tool): the session the prompt loaded is replaced while it runs.
    The prompt prints its answer and says the session lacks the turn; what the other program wrote stays."""
    held = threading.Event()
    server = loopback([Reply(text="the answer", hold=held)])
    session = tmp_path / "session.json"
    session.write_text('{"messages": []}\n', encoding="utf-8")
    prompt = subprocess.Popen(
        _command(server, "a prompt", session), env=_ENVIRONMENT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        _wait_for_requests(server, 1)
        edited = tmp_path / "edited.json"
        edited.write_text('{"messages": [], "notes": "edited"}\n', encoding="utf-8")
        os.replace(edited, session)
    finally:
        held.set()
        out, err = prompt.communicate(timeout=120)

    assert prompt.returncode == 3, err
    assert out == b"the answer\n"
    assert err.decode() == (
        f"agentrig: error: {session}: removed or replaced by another program while this prompt ran; not saved over "
        "it, so it lacks this turn\n"
    )
    assert session.read_text(encoding="utf-8") == '{"messages": [], "notes": "edited"}\n'


def test_a_prompt_that_fails_before_saving_leaves_no_empty_session(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new session is locked as an empty file; a prompt that ends before it saves (its --agent does not import)
    removes that file again: it made it, and it is still empty."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    server = loopback([text("never sent")])
    session = tmp_path / "new.json"

    code, _, err = run_main(capsys, *_arguments(server, "hi", session, "--agent", "no_such_module:agent"))

    assert code == 2, err
    assert list(tmp_path.iterdir()) == []
    assert server.requests == []


def test_an_empty_session_file_is_a_new_session(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a prompt killed (kill -9) before its first save leaves: an empty file, which holds nothing to lose."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = loopback([text("an answer")])
    session = tmp_path / "left-behind.json"
    session.write_bytes(b"")

    code, out, err = run_main(capsys, *_arguments(server, "hi", session))

    assert (code, out, err) == (0, "an answer\n", "")
    assert _contents(session) == ["hi", "an answer"]


def test_the_lock_holds_the_file_the_path_names_once_locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another prompt saves (renames a new file over the session) and exits between this prompt's open and its lock:
    the lock it then gets is on a file no path names. It must see that (the identity is checked after locking) and
    lock the file the path names now."""
    session = tmp_path / "session.json"
    session.write_text('{"messages": []}\n', encoding="utf-8")
    real_flock = fcntl.flock
    saved: list[Path] = []

    def flock_after_another_save(descriptor: int, operation: int) -> None:
        if not saved:
            replacement = tmp_path / "replacement.json"
            replacement.write_text('{"messages": []}\n', encoding="utf-8")
            os.replace(replacement, session)
            saved.append(session)
        real_flock(descriptor, operation)

    monkeypatch.setattr(fcntl, "flock", flock_after_another_save)
    with locked_session(session):
        monkeypatch.undo()
        descriptor = os.open(session, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):  # another open file: it conflicts with the lock held
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(descriptor)
    assert saved
