"""`agentrig check`: one line per violation, exit codes 0/1/2, --json, --only, no pydantic-ai import."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.history.canonical import Message, SystemPromptPart, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.wire import dumps_history
from tests.cli.cli_helpers import run_main

DATA = Path(__file__).parent.parent / "runtime" / "data"
runner = CliRunner()


def write_history(path: Path, *messages: Message) -> Path:
    path.write_bytes(dumps_history(messages))
    return path


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    return write_history(
        tmp_path / "clean.json",
        Message.request(TextPart(content="go")),
        Message.response(ToolCallPart(tool_call_id="a", tool_name="bash", args={})),
        Message.request(ToolReturnPart(tool_call_id="a", content="ok")),
        Message.response(TextPart(content="done")),
    )


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    return write_history(
        tmp_path / "broken.json",
        Message.request(SystemPromptPart(content="sys"), TextPart(content="go")),
        Message.response(ToolCallPart(tool_call_id="a", tool_name="bash", args={})),
        Message.request(TextPart(content="again")),
        Message.request(ToolReturnPart(tool_call_id="ghost", content="x")),
    )


def test_clean_file_exits_0_with_an_ok_line(clean: Path) -> None:
    result = runner.invoke(app, ["check", str(clean)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{clean}: OK (4 messages)\n"


def test_violations_are_printed_one_per_line_and_exit_1(clean: Path, broken: Path) -> None:
    result = runner.invoke(app, ["check", str(clean), str(broken)])
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines() == [
        f"{clean}: OK (4 messages)",
        f"{broken}: message[0].parts[0]: no_persisted_system_prompt: system prompt persisted in the history",
        f"{broken}: message[1].parts[0]: no_dangling_tool_calls: tool call 'a' (bash) is not answered by the next "
        "request",
        f"{broken}: message[3]: no_consecutive_requests: request follows the request at message[2]",
        f"{broken}: message[3].parts[0]: no_orphaned_tool_returns: tool return for 'ghost' answers no earlier tool "
        "call",
    ]


def test_json_output_and_only(broken: Path) -> None:
    result = runner.invoke(
        app, ["check", "--json", "--only", "no_consecutive_requests", "--only", "no_orphaned_tool_returns", str(broken)]
    )
    assert result.exit_code == 1, result.output
    assert orjson.loads(result.stdout) == [
        {
            "file": str(broken),
            "code": "no_consecutive_requests",
            "message": "request follows the request at message[2]",
            "message_index": 3,
            "part_index": None,
        },
        {
            "file": str(broken),
            "code": "no_orphaned_tool_returns",
            "message": "tool return for 'ghost' answers no earlier tool call",
            "message_index": 3,
            "part_index": 0,
        },
    ]


def test_json_output_of_a_clean_file_is_an_empty_list(clean: Path) -> None:
    result = runner.invoke(app, ["check", "--json", str(clean)])
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout) == []


def test_unknown_invariant_is_a_usage_error(clean: Path) -> None:
    result = runner.invoke(app, ["check", "--only", "no_bugs", str(clean)])
    assert result.exit_code == 2
    assert "unknown invariant 'no_bugs'" in result.output


def test_unreadable_file_exits_2_with_one_line_and_other_files_are_still_checked(tmp_path: Path, broken: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "agentrig.history/1", "messages": [')
    result = runner.invoke(app, ["check", str(bad), str(tmp_path / "missing.json"), str(broken)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"agentrig: error: {bad}: truncated JSON at line 1, column 47",
        f"agentrig: error: {tmp_path / 'missing.json'}: no such file",
    ]
    assert len(result.stdout.splitlines()) == 4  # the readable file's violations are still reported


@pytest.mark.parametrize("name", ["pydantic_ai_2_38_dump.json", "pydantic_ai_2_68_dump.json"])
def test_checks_pydantic_ai_dumps(name: str) -> None:
    result = runner.invoke(app, ["check", str(DATA / name)])
    # pydantic-ai persists the system prompt in its own dumps; nothing else is wrong with them.
    assert result.exit_code == 1, result.output
    assert (
        result.stdout
        == f"{DATA / name}: message[0].parts[0]: no_persisted_system_prompt: system prompt persisted in the history\n"
    )


def test_check_and_the_canonical_layer_never_import_pydantic_ai(clean: Path) -> None:
    code = (
        "import sys\n"
        "from agentrig.cli import app\n"
        f"code = app(['check', {str(clean)!r}], standalone_mode=False)\n"
        "assert code == 0, code\n"
        "import agentrig.runtime.history.cleanup, agentrig.runtime.history.tool_registry\n"
        "import agentrig.runtime.history.sessions\n"
        "assert 'pydantic_ai' not in sys.modules, 'pydantic_ai was imported'\n"
        "print('clean')\n"
    )
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.endswith("clean\n")


_TWO_STRUCTURED_TURNS = """\
name: two-structured-turns
agent: tests.runtime.fixtures_agents:build_structured_agent
turns:
  - user: Where is A-1?
    model:
      - tool_calls: [{id: o1, name: final_result, args: {status: shipped}}]
  - user: And A-2?
    model:
      - tool_calls: [{id: o2, name: final_result, args: {status: processing}}]
"""


def test_the_history_pydantic_ai_keeps_of_a_multi_turn_structured_output_agent_checks_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # pydantic-ai ends a run whose output came through the output tool with a request holding that tool's
    # return, and starts the next run with a request of its own (2.38 and 2.68): the dump agentrig writes
    # is pydantic-ai's own history, which agentrig must not call broken.
    scenario = tmp_path / "two.yaml"
    scenario.write_text(_TWO_STRUCTURED_TURNS, encoding="utf-8")
    out = tmp_path / "out"
    code, stdout, _ = run_main(capsys, "run", str(scenario), "--out", str(out))
    assert code == 0, stdout
    folder = out / "scenarios" / "two-structured-turns"
    dump = orjson.loads((folder / "pydantic_ai_dump.json").read_bytes())
    assert [m["kind"] for m in dump][2:4] == ["request", "request"]  # the pair the invariant must allow

    dump_file, history_file = folder / "pydantic_ai_dump.json", folder / "history.json"
    code, stdout, stderr = run_main(capsys, "check", str(dump_file), str(history_file))
    assert code == 0, stdout + stderr
    assert stdout.splitlines() == [
        f"{dump_file}: OK (6 messages)",
        f"{history_file}: OK (5 messages)",
    ]
