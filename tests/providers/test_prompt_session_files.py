"""`agentrig prompt --session FILE` and the file itself: one it cannot save back to is refused before anything is
sent, a symbolic link is written through and locked as its target, and a full disk keeps the file whole."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.runfolder.session_lock import locked_session
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, text

pytestmark = pytest.mark.providers


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def _prompt(
    capsys: pytest.CaptureFixture[str], server: LoopbackServer, prompt: str, session: Path
) -> tuple[int, str, str]:
    return run_main(
        capsys,
        "prompt",
        prompt,
        "--model",
        "openai:gpt-4o",
        "--base-url",
        server.openai_base_url,
        "--session",
        str(session),
    )


def _contents(session: Path) -> list[str]:
    return [message["parts"][0]["content"] for message in jsonio.read_json_file(session)["messages"]]


HISTORY = '{"format": "agentrig.history/1", "messages": []}\n'


@pytest.mark.parametrize(
    ("content", "what"),
    [(HISTORY, "a canonical history"), ("[]\n", "a list of messages")],
    ids=["history", "empty-list"],
)
def test_a_file_that_is_not_a_session_is_refused_before_the_request(
    content: str, what: str, loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback([text("an answer that would be lost")])
    session = tmp_path / "history.json"
    session.write_text(content, encoding="utf-8")

    code, out, err = _prompt(capsys, server, "continue", session)

    assert (code, out) == (2, "")
    assert err == (
        f"agentrig: error: {session}: --session would overwrite a file that is not an agentrig session ({what}); "
        "nothing was sent\n"
    )
    assert server.requests == []
    assert session.read_text(encoding="utf-8") == content


def test_a_symlinked_session_is_written_through_to_its_target(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback([text("one"), text("two")])
    target = tmp_path / "sessions" / "real.json"
    link = tmp_path / "current.json"
    assert _prompt(capsys, server, "first", target)[0] == 0
    link.symlink_to(target)

    code, out, err = _prompt(capsys, server, "second", link)

    assert (code, out, err) == (0, "two\n", "")
    assert link.is_symlink()
    assert _contents(target) == ["first", "one", "second", "two"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["current.json", "sessions"]  # nothing beside the link


def test_a_link_and_its_target_are_one_session_to_the_lock(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback([text("one"), text("never sent")])
    target = tmp_path / "real.json"
    link = tmp_path / "link.json"
    assert _prompt(capsys, server, "first", target)[0] == 0
    link.symlink_to(target)

    with locked_session(target):  # another prompt on the target is running
        code, _, err = _prompt(capsys, server, "second", link)

    assert code == 2
    assert err.startswith(f"agentrig: error: {link}: in use by another agentrig prompt; nothing was sent")
    assert len(server.requests) == 1
    assert _contents(target) == ["first", "one"]


def _disk_full_at_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every fsync reports a full disk, as a file system with delayed allocation (or NFS) reports it: the writes
    were buffered, and the space ran out when they had to reach the disk."""

    def no_space(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)


def test_a_full_disk_prints_the_answer_keeps_the_session_and_exits_3(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = loopback([text("one"), text("the answer")])
    session = tmp_path / "session.json"
    assert _prompt(capsys, server, "first", session)[0] == 0
    before = session.read_bytes()
    _disk_full_at_fsync(monkeypatch)

    code, out, err = _prompt(capsys, server, "second", session)

    assert code == 3
    assert out == "the answer\n"  # paid for: shown, even though it cannot be saved
    assert err == (
        f"agentrig: error: {session}: cannot save the session (No space left on device); it keeps the turns it had, "
        "not this one\n"
    )
    assert session.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["session.json"]
