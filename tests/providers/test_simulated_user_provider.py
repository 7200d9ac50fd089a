"""A simulated user with `model: openai-chat:gpt-4o` (issue 43 item 3) asked for real: pydantic-ai's OpenAI client sends
the user model's requests to the loopback server (reached by `OPENAI_BASE_URL`, as a judge's provider is), which answers
its `next_message` tool. Each request carries the persona, the goal and the conversation so far; the messages run as
ordinary turns; the requests are counted and priced in the scenario's usage and cost; a recorded run replays offline
with the same turns; a failed user model stops the scenario with one line naming it."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage as GenaiUsage
from genai_prices import calc_price
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.runfolder import jsonio
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import Reply, ToolCallReply, error, text, tool_calls

pytestmark = pytest.mark.providers

_SCENARIO = """\
name: chat
system_prompt: You are a support agent.
turns:
  - user: Hi, I returned order A-1001.
    simulate:
      persona: An impatient customer.
      goal: Learn when the refund arrives.
      max_turns: 3
      model: openai-chat:gpt-4o
{steps}"""
_STEPS = """\
    model:
      - text: I see the return of order A-1001.
      - text: Within 5 business days.
"""


def _next(**arguments: Any) -> Reply:
    return tool_calls(
        ToolCallReply(id="call_1", name="next_message", args=arguments), input_tokens=500, output_tokens=20
    )


def _setup(
    loopback: ServerFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, replies: list[Reply], steps: str
) -> Any:
    server = loopback(replies)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "chat.yaml").write_text(_SCENARIO.format(steps=steps), encoding="utf-8")
    return server


def _entry(out: Path) -> dict[str, Any]:
    (entry,) = jsonio.read_json_file(out / "report.json")["scenarios"]
    return entry


def test_a_real_user_model_writes_the_turns_and_is_priced(
    loopback: ServerFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    replies = [_next(done=False, message="So when is my money back?"), _next(done=True)]
    server = _setup(loopback, monkeypatch, tmp_path, replies, _STEPS)

    result = CliRunner().invoke(app, ["run", str(tmp_path / "chat.yaml"), "--out", str(tmp_path / "out")])

    assert result.exit_code == 0, result.output
    first, second = server.requests
    sent = str(first.body["messages"])
    assert "<persona>\\nAn impatient customer.\\n</persona>" in sent
    assert "<goal>\\nLearn when the refund arrives.\\n</goal>" in sent
    assert "user: Hi, I returned order A-1001.\\nassistant: I see the return of order A-1001." in sent
    assert [tool["function"]["name"] for tool in first.body["tools"]] == ["next_message"]
    assert "user: So when is my money back?\\nassistant: Within 5 business days." in str(second.body["messages"])
    entry = _entry(tmp_path / "out")
    assert [turn["prompt"] for turn in entry["turns"]] == ["Hi, I returned order A-1001.", "So when is my money back?"]
    assert [turn["simulated"]["user"] for turn in entry["turns"]] == ["scenario", "openai-chat:gpt-4o"]
    assert entry["turns"][-1]["simulated"]["ended"] == "done"
    # The agent ran its script (two requests, no price): the user model's two are counted beside them and are all
    # the scenario cost.
    price = float(Decimal(calc_price(GenaiUsage(input_tokens=500, output_tokens=20), "gpt-4o").total_price))
    assert entry["usage"]["requests"] == 4
    assert entry["cost"]["usd"] == pytest.approx(2 * price)
    assert entry["attempts"]["requests"] == 2  # through the provider layer's attempt log


def test_a_recorded_simulated_run_replays_offline_with_the_same_turns(
    loopback: ServerFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    replies = [text("I see the return."), _next(done=False, message="When?"), text("In 5 days."), _next(done=True)]
    server = _setup(loopback, monkeypatch, tmp_path, replies, "")
    recordings = tmp_path / "recordings"
    live = ["--model", "openai-chat:gpt-4o", "--base-url", server.openai_base_url, "--record", str(recordings)]
    recorded = CliRunner().invoke(app, ["run", str(tmp_path / "chat.yaml"), "--out", str(tmp_path / "a"), *live])
    assert recorded.exit_code == 0, recorded.output
    assert sorted(path.name for path in recordings.iterdir()) == ["chat+user-0.json", "chat.json"]
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")

    offline = ["--replay", str(recordings)]
    replayed = CliRunner().invoke(app, ["run", str(tmp_path / "chat.yaml"), "--out", str(tmp_path / "b"), *offline])

    assert replayed.exit_code == 0, replayed.output
    assert len(server.requests) == 4  # nothing asked of the provider
    turns = [[(turn["prompt"], turn["output"]) for turn in _entry(tmp_path / out)["turns"]] for out in ("a", "b")]
    assert turns[0] == turns[1] == [("Hi, I returned order A-1001.", "I see the return."), ("When?", "In 5 days.")]
    assert _entry(tmp_path / "b")["cost"]["usd"] > 0  # replayed requests are priced as recorded


def test_a_failed_user_model_stops_the_scenario_naming_it(
    loopback: ServerFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _setup(loopback, monkeypatch, tmp_path, [error(400, "model not allowed")], _STEPS)

    result = CliRunner().invoke(app, ["run", str(tmp_path / "chat.yaml"), "--out", str(tmp_path / "out")])

    assert result.exit_code == 3, result.output  # a provider error nothing expected, as an agent's would be
    entry = _entry(tmp_path / "out")
    assert entry["status"] == "error"
    assert entry["error"]["kind"] == "request_rejected"
    assert entry["error"]["message"].startswith("turn 1: the simulated user openai-chat:gpt-4o wrote no message: ")
    assert "model not allowed" in entry["error"]["message"]
