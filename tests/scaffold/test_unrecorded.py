"""Issue 42 item 1, a failed tool's error a pydantic-ai dump does not record: `agentrig diff` sets aside only the
placeholder scaffold wrote for it (on either side), says so, and still tells every other difference."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.history.canonical import Message, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.wire import dumps_history
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.scaffold.endings import UNKNOWN_FAILURE
from tests.cli.cli_helpers import run_main

_REAL = "tool 'write_file' call #1 failed: disk full"
_PLACEHOLDER = f"tool 'write_file' (call tc_1) raised Exception: {UNKNOWN_FAILURE}"
_NOTE = "1 tool error text not recorded in the source (a pydantic-ai dump keeps none): set aside\n"


def _history(content: str, *, tool: str = "write_file", answer: str = "It failed.") -> list[Message]:
    return [
        Message.request(TextPart(content="Save")),
        Message.response(ToolCallPart(tool_call_id="tc_1", tool_name=tool, args={"path": "a"})),
        Message.request(ToolReturnPart(tool_call_id="tc_1", tool_name=tool, content=content, outcome="failed")),
        Message.request(TextPart(content="Did it work?")),
        Message.response(TextPart(content=answer)),
    ]


def _write(path: Path, messages: list[Message]) -> str:
    jsonio.write_atomic(path, dumps_history(messages))
    return str(path)


@pytest.mark.parametrize("placeholder_first", [False, True])
def test_only_the_placeholder_is_set_aside_and_named(
    placeholder_first: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, replay = _write(tmp_path / "s.json", _history(_REAL)), _write(tmp_path / "r.json", _history(_PLACEHOLDER))
    first, second = (replay, source) if placeholder_first else (source, replay)
    assert run_main(capsys, "diff", first, second)[:2] == (0, "identical\n" + _NOTE)
    assert run_main(capsys, "diff", "-q", first, second)[:2] == (0, "")


def test_a_difference_beside_the_placeholder_still_differs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _write(tmp_path / "s.json", _history(_REAL))
    for number, other in enumerate([_history(_PLACEHOLDER, answer="It worked."), _history(_PLACEHOLDER, tool="x")]):
        code, out, _ = run_main(capsys, "diff", source, _write(tmp_path / f"r{number}.json", other))
        assert code == 1, out


def test_two_real_texts_are_never_set_aside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _write(tmp_path / "s.json", _history(_REAL))
    code, out, _ = run_main(capsys, "diff", source, _write(tmp_path / "r.json", _history("tool 'write_file' x")))
    assert code == 1, out
    assert "set aside" not in out, out
