"""No secret in anything scaffold writes, and golden checks that compare what a golden may hold: the redacted form.
A real tool that returns a key still matches its golden, a golden holding a key in the clear fails with a reason
shown, and `--update-golden` writes the redacted form."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.checks.history_checks import check_golden
from agentrig.runtime.history.canonical import Message, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.redaction import REDACTED
from agentrig.runtime.history.wire import dumps_history
from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite
from tests.scaffold.faithful_agents import SECRET_TOOL_KEY
from tests.scaffold.replay import failures, run_scenario, scaffold_to

_AGENT = "tests.scaffold.faithful_agents:leaky_agent"
_BASIC = "dXNlcjpwYXNzd29yZA=="


def test_a_real_tool_returning_a_key_matches_its_golden_and_no_file_holds_the_key(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"name: leaky\nagent: {_AGENT}\nturns:\n  - user: config?\n    model:\n"
        "      - tool_calls: [{id: c1, name: config}]\n      - text: Configured.\n",
        encoding="utf-8",
    )
    (result,) = run_suite(RunOptions(paths=(suite,), out_dir=tmp_path / "out")).results
    assert result.status == "passed", failures(result)
    for form in ("session.json", "pydantic_ai_dump.json"):
        written = scaffold_to(tmp_path / "out" / "scenarios" / "leaky" / form, tmp_path / form, agent=_AGENT)
        assert written.golden_path is not None
        for path in (written.scenario_path, written.golden_path):
            text = path.read_text(encoding="utf-8")
            assert SECRET_TOOL_KEY not in text
            assert _BASIC not in text
        assert f"Authorization: Basic {REDACTED}" in written.golden_path.read_text(encoding="utf-8")
        replay = run_scenario(written.scenario_path)  # the real tool returns the key again
        assert replay.status == "passed", failures(replay)


def _history(content: str) -> list[Message]:
    return [
        Message.request(TextPart(content="config?")),
        Message.response(ToolCallPart(tool_call_id="c1", tool_name="config", args={})),
        Message.request(ToolReturnPart(tool_call_id="c1", tool_name="config", content=content)),
        Message.response(TextPart(content="Configured.")),
    ]


def test_a_golden_holding_a_key_fails_with_a_reason_and_update_golden_redacts_it(tmp_path: Path) -> None:
    golden = tmp_path / "golden.json"
    history = _history(f"token {SECRET_TOOL_KEY}")
    golden.write_bytes(dumps_history(history, pretty=True))  # a golden written before: the key in the clear
    check = check_golden(golden, history, update=False)
    assert not check.passed
    assert check.detail.startswith(f"{golden} holds a secret where this run's history has [REDACTED]")

    assert check_golden(golden, history, update=True).passed
    assert SECRET_TOOL_KEY not in golden.read_text(encoding="utf-8")
    assert check_golden(golden, history, update=False).passed


@pytest.mark.parametrize("content", ["token [REDACTED]", "other"])
def test_any_other_difference_still_shows_its_diff(content: str, tmp_path: Path) -> None:
    golden = tmp_path / "golden.json"
    assert check_golden(golden, _history("expected value"), update=True).passed
    check = check_golden(golden, _history(content), update=False)
    assert not check.passed
    assert '-          "content": "expected value"' in check.detail
