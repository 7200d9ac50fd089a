"""`agentrig prompt --session`: no turn is ever lost to a second writer, and nothing is sent (or paid for)
when the session cannot be saved."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig.runtime.runfolder import jsonio
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, Reply, ToolCallReply, text, tool_calls

pytestmark = [pytest.mark.providers, pytest.mark.process]


def _command(server: LoopbackServer, prompt: str, session: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "agentrig",
        "prompt",
        prompt,
        "--model",
        "openai:gpt-4o",
        "--base-url",
        server.openai_base_url,
        "--session",
        str(session),
    ]


def _wait_for_requests(server: LoopbackServer, count: int) -> None:
    """Until the server has received `count` requests (bounded by a generous limit, not a timing assertion)."""
    limit = time.monotonic() + 60
    while len(server.requests) < count:
        assert time.monotonic() < limit, "the first prompt never reached the server"
        time.sleep(0.02)


def test_a_second_prompt_on_a_busy_session_fails_and_no_turn_is_lost(loopback: ServerFactory, tmp_path: Path) -> None:
    """Two real processes: the first holds its request open at the server while the second starts."""
    held = threading.Event()
    server = loopback([Reply(text="first answer", hold=held)], default=text("second answer"))
    session = tmp_path / "same.json"
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "OPENAI_API_KEY": "sk-test"}
    first = subprocess.Popen(
        _command(server, "first prompt", session), env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        _wait_for_requests(server, 1)
        second = subprocess.run(
            _command(server, "second prompt", session), env=environment, capture_output=True, text=True, timeout=120
        )
    finally:
        held.set()
        first_out, first_err = first.communicate(timeout=120)

    assert first.returncode == 0, first_err
    assert first_out == b"first answer\n"
    assert second.returncode == 2, second.stderr
    assert second.stderr.startswith(f"agentrig: error: {session}: in use by another agentrig prompt; nothing was sent")
    assert len(server.requests) == 1  # the second prompt sent nothing
    stored = jsonio.read_json_file(session)
    assert [m["parts"][0]["content"] for m in stored["messages"]] == ["first prompt", "first answer"]


def test_a_session_that_cannot_be_written_fails_before_the_request(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = loopback([text("paid for")])
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    session = blocker / "session.json"

    with pytest.raises(SystemExit) as exited:
        main(
            [
                "prompt",
                "hi",
                "--model",
                "openai:gpt-4o",
                "--base-url",
                server.openai_base_url,
                "--session",
                str(session),
            ]
        )

    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agentrig: error: {session}: cannot write the session there (")
    assert err.endswith("); nothing was sent\n")
    assert server.requests == []


def test_json_on_ctrl_c_prints_the_record_with_interrupted(loopback: ServerFactory, tmp_path: Path) -> None:
    """A real SIGINT in a subprocess (the tool the model calls sends it): exit 130 and the promised record."""
    (tmp_path / "interrupting_agent.py").write_text(
        "import asyncio, os, signal\n"
        "from pydantic_ai import Agent\n"
        "agent = Agent()\n"
        "@agent.tool_plain\n"
        "async def press_ctrl_c() -> str:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    await asyncio.sleep(30)\n"
        "    return 'never'\n",
        encoding="utf-8",
    )
    server = loopback([tool_calls(ToolCallReply(id="call_int", name="press_ctrl_c"), content="Working on it. ")])
    command = [*_command(server, "go", tmp_path / "session.json"), "--agent", "interrupting_agent:agent", "--json"]
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "OPENAI_API_KEY": "sk-test"}

    finished = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120)

    assert finished.returncode == 130, finished.stderr
    record = json.loads(finished.stdout)
    assert record["interrupted"] is True
    assert record["model"] == "openai:gpt-4o"
    assert record["messages"][-1]["parts"][0]["content"].startswith("[INTERRUPTED]")
