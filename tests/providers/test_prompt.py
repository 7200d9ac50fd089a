"""`agentrig prompt` against the loopback server: output forms, sessions, exit codes, redaction."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.history.per_run import message_json_without_per_run_values
from agentrig.runtime.runfolder import jsonio
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import (
    LoopbackServer,
    Reply,
    ToolCallReply,
    context_length_exceeded,
    error,
    rate_limited,
    text,
    tool_calls,
)
from tests.reports.runs import readable_text

pytestmark = pytest.mark.providers

_FAKE_KEY = "sk-recognisable-fake-key-0xC0FFEE"


def _openai(server: LoopbackServer, *args: str) -> list[str]:
    return ["prompt", *args, "--model", "openai:gpt-4o", "--base-url", server.openai_base_url]


def test_prints_the_answer(loopback: ServerFactory, capsys: pytest.CaptureFixture[str]) -> None:
    server = loopback([text("Paris.")])
    code, out, err = run_main(capsys, *_openai(server, "Capital of France?", "--system", "Answer in one word."))
    assert (code, out, err) == (0, "Paris.\n", "")
    body = server.requests[0].body
    assert body["messages"] == [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Capital of France?"},
    ]


def test_quiet_prints_nothing(loopback: ServerFactory, capsys: pytest.CaptureFixture[str]) -> None:
    server = loopback([text("Paris.")])
    assert run_main(capsys, *_openai(server, "Capital?", "-q")) == (0, "", "")


def test_reads_the_prompt_from_stdin(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = loopback([text("got it")])
    monkeypatch.setattr(sys, "stdin", io.StringIO("a prompt\nover two lines\n"))
    code, out, _ = run_main(capsys, *_openai(server, "-"))
    assert (code, out) == (0, "got it\n")
    assert server.requests[0].body["messages"][-1]["content"] == "a prompt\nover two lines\n"


def test_json_record(loopback: ServerFactory, capsys: pytest.CaptureFixture[str]) -> None:
    server = loopback([text("Paris.", input_tokens=21, output_tokens=2)])
    code, out, _ = run_main(capsys, *_openai(server, "Capital of France?", "--json"))
    assert code == 0
    record = jsonio.loads(out)
    assert set(record) == {"output", "messages", "usage", "attempts", "model", "duration_s", "warnings"}
    assert record["warnings"] == []  # the key is there, empty, when nothing warned
    assert record["attempts"] == {
        "requests": 1,
        "attempts": 1,
        "retries": 0,
        "retry_wait_s": 0.0,
        "queue_wait_s": record["attempts"]["queue_wait_s"],
        "failed": {},
    }
    assert record["output"] == "Paris."
    assert record["model"] == "openai:gpt-4o"
    # The conversation id pydantic-ai drew for the run is on every message (a continued session keeps it).
    (conversation,) = {message.get("conversation_id") for message in record["messages"]}
    assert isinstance(conversation, str)
    assert [message_json_without_per_run_values(message) for message in record["messages"]] == [
        {"kind": "request", "parts": [{"part_kind": "text", "content": "Capital of France?"}]},
        {"kind": "response", "parts": [{"part_kind": "text", "content": "Paris."}]},
    ]
    assert (record["usage"]["requests"], record["usage"]["input_tokens"], record["usage"]["output_tokens"]) == (
        1,
        21,
        2,
    )
    assert record["duration_s"] >= 0


def test_session_is_continued_and_saved(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback([text("Noted: 42."), text("It was 42.")])
    session = tmp_path / "session.json"

    assert run_main(capsys, *_openai(server, "Remember 42.", "--session", str(session)))[0] == 0
    assert run_main(capsys, *_openai(server, "What number?", "--session", str(session)))[1] == "It was 42.\n"

    second = server.requests[1].body["messages"]
    assert [(m["role"], m["content"]) for m in second] == [
        ("user", "Remember 42."),
        ("assistant", "Noted: 42."),
        ("user", "What number?"),
    ]
    stored = jsonio.read_json_file(session)
    assert stored["current_model"] == "openai:gpt-4o"
    assert [m["kind"] for m in stored["messages"]] == ["request", "response", "request", "response"]
    assert stored["session_total_usage"]["requests"] == 2


def test_anthropic_model(loopback: ServerFactory, capsys: pytest.CaptureFixture[str]) -> None:
    server = loopback([text("Bonjour.")])
    args = [
        "prompt",
        "Say hello in French.",
        "--model",
        "anthropic:claude-loopback-test",
        "--base-url",
        server.anthropic_base_url,
    ]
    assert run_main(capsys, *args)[:2] == (0, "Bonjour.\n")
    assert server.requests[0].path == "/v1/messages"


def test_no_model_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(capsys, "prompt", "hi")
    assert (code, out) == (2, "")
    assert err == "agentrig: error: no model: pass --model provider:name (e.g. openai:gpt-4o) or set AGENTRIG_MODEL\n"


def test_model_from_the_environment(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = loopback([text("ok")])
    monkeypatch.setenv("AGENTRIG_MODEL", "openai:gpt-4o-mini")
    assert run_main(capsys, "prompt", "hi", "--base-url", server.openai_base_url)[:2] == (0, "ok\n")
    assert server.requests[0].body["model"] == "gpt-4o-mini"


@pytest.mark.parametrize(
    ("replies", "requests", "line", "kind"),
    [
        ([error(401, "invalid api key")], 1, "openai: HTTP 401 Unauthorized: invalid api key", "auth"),
        (
            [rate_limited("0")] * 3,
            3,
            "openai: HTTP 429 Too Many Requests: Rate limit reached for requests (after 3 attempts)",
            "rate_limit",
        ),
        (
            [error(500, "upstream exploded")] * 3,
            3,
            "openai: HTTP 500 Internal Server Error: upstream exploded (after 3 attempts)",
            "server_error",
        ),
        (
            [context_length_exceeded()],
            1,
            "openai: HTTP 400 Bad Request: This model's maximum context length",
            "context_length",
        ),
    ],
)
def test_provider_errors_exit_3_with_one_line(
    loopback: ServerFactory,
    capsys: pytest.CaptureFixture[str],
    replies: list[Any],
    requests: int,
    line: str,
    kind: str,
) -> None:
    server = loopback(replies)
    code, out, err = run_main(capsys, *_openai(server, "hi", "--json"))
    assert code == 3
    assert err.startswith(f"agentrig: error: {line}")
    assert err.count("\n") == 1
    assert jsonio.loads(out)["error"]["kind"] == kind
    assert len(server.requests) == requests


def test_rate_limit_retried_then_answered(loopback: ServerFactory, capsys: pytest.CaptureFixture[str]) -> None:
    server = loopback([rate_limited("0"), rate_limited("0"), text("finally")])
    assert run_main(capsys, *_openai(server, "hi")) == (0, "finally\n", "")
    assert len(server.requests) == 3


def test_user_agent_with_tools(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "prompt_test_agent.py").write_text(
        textwrap.dedent(
            """
            from pydantic_ai import Agent

            agent = Agent(instructions="Use the tools.")

            @agent.tool_plain
            def double(x: int) -> int:
                return 2 * x
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "prompt_test_agent", raising=False)
    server = loopback([tool_calls(ToolCallReply(id="call_d", name="double", args={"x": 21})), text("42")])

    code, out, _ = run_main(capsys, *_openai(server, "Double 21.", "--agent", "prompt_test_agent:agent", "--json"))

    assert code == 0
    record = jsonio.loads(out)
    assert record["output"] == "42"
    assert [m["kind"] for m in record["messages"]] == ["request", "response", "request", "response"]
    assert record["messages"][2]["parts"][0] == {
        "part_kind": "tool-return",
        "tool_call_id": "call_d",
        "tool_name": "double",
        "content": 42,
    }
    assert server.requests[0].body["tools"][0]["function"]["name"] == "double"


def test_max_iterations_ends_the_run_with_exit_1(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "prompt_loop_agent.py").write_text(
        "from pydantic_ai import Agent\nagent = Agent()\n\n@agent.tool_plain\ndef again() -> str:\n    return 'more'\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "prompt_loop_agent", raising=False)
    server = loopback(default=tool_calls(ToolCallReply(id="call_again", name="again")))
    code, _, err = run_main(
        capsys, *_openai(server, "loop", "--agent", "prompt_loop_agent:agent", "--max-iterations", "2")
    )
    assert code == 1
    assert "stopped after 2 model requests" in err
    assert len(server.requests) == 2


def test_timeout_saves_an_interrupted_session(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback([Reply(text="too late", hold=threading.Event())])  # answered only when the server closes
    session = tmp_path / "session.json"
    code, _, err = run_main(capsys, *_openai(server, "slow one", "--timeout", "0.3", "--session", str(session)))
    assert code == 3
    assert "timeout" in err
    stored = jsonio.read_json_file(session)
    assert stored["messages"][-1]["kind"] == "response"
    assert stored["messages"][-1]["parts"][0]["content"].startswith("[INTERRUPTED]")


def test_no_secret_reaches_output_or_files(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", _FAKE_KEY)
    server = loopback([text(f"your key is {_FAKE_KEY}"), error(401, f"Incorrect API key provided: {_FAKE_KEY}")])
    out_dir = tmp_path / "out"
    session = out_dir / "session.json"

    results = [
        run_main(capsys, *_openai(server, f"echo {_FAKE_KEY}", "--json", "--session", str(session))),
        run_main(capsys, *_openai(server, "again", "--json", "--session", str(session))),
    ]

    assert [code for code, _, _ in results] == [0, 3]
    assert server.requests[0].headers["authorization"] == f"Bearer {_FAKE_KEY}"  # the key was really used
    for _, out, err in results:
        assert _FAKE_KEY not in out
        assert _FAKE_KEY not in err
    assert "[REDACTED]" in results[1][2]
    written = [path for path in out_dir.rglob("*") if path.is_file()]
    assert written
    for path in written:
        assert _FAKE_KEY not in readable_text(path), path


def test_quoted_keys_keep_the_session_valid_and_plain_output_redacted(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", _FAKE_KEY)
    server = loopback([text('Send Authorization: "Bearer x" with api_key="YOUR_KEY".'), text(f"echo: {_FAKE_KEY}")])
    session = tmp_path / "session.json"

    first = run_main(capsys, *_openai(server, 'Fix: Client(api_key="YOUR_KEY")', "--session", str(session)))
    stored = jsonio.read_json_file(session)  # valid JSON, though prompt and answer quote keys inside strings
    second = run_main(capsys, *_openai(server, "and the key?", "--session", str(session)))

    assert first == (0, 'Send Authorization: "Bearer [REDACTED]" with api_key="[REDACTED]".\n', "")
    assert second == (0, "echo: [REDACTED]\n", "")  # plain stdout, not only --json, hides the key
    assert stored["messages"][0]["parts"][0]["content"] == 'Fix: Client(api_key="[REDACTED]")'
    assert len(jsonio.read_json_file(session)["messages"]) == 4


def test_ctrl_c_exits_130_and_saves_the_session(loopback: ServerFactory, tmp_path: Path) -> None:
    """A real SIGINT in a subprocess: the tool the model calls interrupts the process."""
    (tmp_path / "interrupting_agent.py").write_text(
        textwrap.dedent(
            """
            import os
            import signal

            from pydantic_ai import Agent

            agent = Agent()

            @agent.tool_plain
            async def press_ctrl_c() -> str:
                os.kill(os.getpid(), signal.SIGINT)
                import asyncio
                await asyncio.sleep(30)
                return 'never'
            """
        )
    )
    server = loopback([tool_calls(ToolCallReply(id="call_int", name="press_ctrl_c"), content="Working on it. ")])
    session = tmp_path / "session.json"
    command = [
        sys.executable,
        "-m",
        "agentrig",
        *_openai(server, "go", "--agent", "interrupting_agent:agent", "--session", str(session)),
    ]
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}

    finished = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120)

    assert finished.returncode == 130, finished.stderr
    assert "interrupted" in finished.stderr
    stored = jsonio.read_json_file(session)
    last = stored["messages"][-1]
    assert last["kind"] == "response"
    assert last["parts"][0]["content"].startswith("[INTERRUPTED]")


_SCENARIO = """\
name: {name}
system_prompt: You are terse.
turns:
  - user: Say hello.
    model:
      - text: Hello!
        usage: {{input_tokens: 20, output_tokens: 3}}
    expect:
      output: {{equals: Hello!}}
"""


def test_run_with_a_real_model_across_scenarios(loopback: ServerFactory, tmp_path: Path) -> None:
    """`agentrig run --model` through the real OpenAI client: each scenario runs in its own event loop."""
    for name in ("first-greeting", "second-greeting"):
        (tmp_path / f"{name}.yaml").write_text(_SCENARIO.format(name=name))
    server = loopback(default=text("Hello!"))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "agentrig", "run", str(tmp_path), "--out", str(out)]
    command += ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}

    finished = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300)

    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "Exception ignored" not in finished.stderr
    assert len(server.requests) == 2
    report = jsonio.read_json_file(out / "report.json")
    assert [scenario["status"] for scenario in report["scenarios"]] == ["passed", "passed"]


def test_a_corrupt_session_is_a_usage_error_and_left_alone(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback([text("never sent")])
    session = tmp_path / "session.json"
    session.write_text('{"version": 1, "messages": [')
    code, out, err = run_main(capsys, *_openai(server, "hi", "--session", str(session)))
    assert (code, out) == (2, "")
    assert err.startswith(f"agentrig: error: {session}: truncated JSON")
    assert session.read_text() == '{"version": 1, "messages": ['
    assert server.requests == []
