"""`agentrig prompt` with text that is not UTF-8 (a Latin-1 terminal, a binary file on stdin): one usage error, before
any request is sent or any session file is touched."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, text

pytestmark = pytest.mark.providers

LATIN1_ARGUMENT = "caf\udce9 au lait"
"""`café au lait` typed in a Latin-1 terminal, as Python hands it over in sys.argv (the byte 0xe9 kept as a
lone surrogate)."""


def _openai(server: LoopbackServer, *args: str) -> list[str]:
    return ["prompt", *args, "--model", "openai:gpt-4o", "--base-url", server.openai_base_url]


def _stdin(data: bytes) -> io.TextIOWrapper:
    """stdin as a UTF-8 terminal's: text over bytes, strict decoding."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")


def test_a_prompt_argument_that_is_not_utf8_is_a_usage_error_and_leaves_no_session(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback([text("never sent")])
    session = tmp_path / "chat.json"

    code, out, err = run_main(capsys, *_openai(server, LATIN1_ARGUMENT, "--session", str(session)))

    assert (code, out) == (2, "")
    assert err == "agentrig: error: the prompt is not UTF-8 text (byte 0xe9 at character 4)\n"
    assert not session.exists()
    assert list(tmp_path.iterdir()) == []
    assert server.requests == []


def test_system_instructions_that_are_not_utf8_are_a_usage_error(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback([text("never sent")])
    code, _, err = run_main(capsys, *_openai(server, "hello", "--system", LATIN1_ARGUMENT))
    assert (code, err) == (2, "agentrig: error: --system is not UTF-8 text (byte 0xe9 at character 4)\n")
    assert server.requests == []


def test_a_prompt_on_stdin_that_is_not_utf8_is_a_usage_error(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    server = loopback([text("never sent")])
    monkeypatch.setattr(sys, "stdin", _stdin(b"caf\xe9 au lait\n"))

    code, out, err = run_main(capsys, *_openai(server, "-", "--session", str(tmp_path / "chat.json")))

    assert (code, out) == (2, "")
    assert err == "agentrig: error: the prompt on stdin is not UTF-8 text (byte 0xe9 at byte 4)\n"
    assert list(tmp_path.iterdir()) == []
    assert server.requests == []


def test_a_utf8_prompt_on_stdin_is_read_whatever_the_locale_and_keeps_text_mode_newlines(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = loopback([text("got it")])
    stdin = io.TextIOWrapper(io.BytesIO("café\r\nau lait\n".encode()), encoding="ascii")  # a C-locale terminal
    monkeypatch.setattr(sys, "stdin", stdin)

    code, out, _ = run_main(capsys, *_openai(server, "-"))

    assert (code, out) == (0, "got it\n")
    assert server.requests[0].body["messages"][-1]["content"] == "café\nau lait\n"
