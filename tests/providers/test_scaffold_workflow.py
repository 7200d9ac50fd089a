"""The workflow of docs/scaffold.md, end to end against the loopback provider: a conversation goes wrong with a
real provider, `agentrig scaffold` turns it into a scenario, the scenario fails until the fix, and joins the suite.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.runfolder import jsonio
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, ToolCallReply, text, tool_calls
from tests.same_conversation import compared_messages
from tests.scaffold import shop

pytestmark = pytest.mark.providers

_LIVE = """\
name: shop-live
agent: tests.scaffold.shop:build_agent
turns:
  - user: Convert 10 EUR to USD.
"""

_OTHER = """\
name: greeting
system_prompt: Be brief.
turns:
  - user: Hi.
    model: [{text: Hello., usage: {input_tokens: 5, output_tokens: 1}}]
"""


def _real_run(server: LoopbackServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The conversation with the real (loopback) provider, recorded: the recording's path."""
    live = tmp_path / "live"
    live.mkdir()
    (live / "shop-live.yaml").write_text(_LIVE, encoding="utf-8")
    model = ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]
    args = ["run", str(live), "--out", str(tmp_path / "live-out"), *model, "--record", str(tmp_path / "rec")]
    code, out, err = run_main(capsys, *args)
    assert code == 0, out + err
    return tmp_path / "rec" / "shop-live.json"


def test_a_recorded_conversation_becomes_a_regression_scenario(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # 1. With a real provider the agent converts 10 EUR at the wrong rate (its tool's bug): 10.0 USD.
    convert = ToolCallReply(id="call_1", name="convert", args={"amount": 10, "currency": "USD"})
    server = loopback([tool_calls(convert), text("10 EUR is 10.0 USD.")])
    recording = _real_run(server, tmp_path, capsys)
    requests_made = len(server.requests)

    # 2. One command: the scenario, with the agent's real tools.
    suite = tmp_path / "suite"
    scenario = suite / "usd-conversion.yaml"
    code, out, err = run_main(
        capsys, "scaffold", str(recording), "-o", str(scenario), "--agent", "tests.scaffold.shop:build_agent",
        "--name", "usd-conversion",
    )  # fmt: skip
    assert code == 0, err
    (suite / "greeting.yaml").write_text(_OTHER, encoding="utf-8")  # the suite it joins

    # 3. Offline, it reproduces the conversation exactly: the suite passes, the provider hears nothing.
    code, out, err = run_main(capsys, "run", str(suite), "--out", str(tmp_path / "out-1"))
    assert code == 0, out + err
    assert len(server.requests) == requests_made
    live_history = jsonio.read_json_file(tmp_path / "live-out" / "scenarios" / "shop-live" / "history.json")
    replayed = jsonio.read_json_file(tmp_path / "out-1" / "scenarios" / "usd-conversion" / "history.json")
    assert compared_messages(replayed) == compared_messages(live_history)

    # 4. The team writes down what is right (the tool must return 10.8): the scenario fails until the fix.
    golden = suite / "golden" / "usd-conversion.json"
    golden.write_text(golden.read_text(encoding="utf-8").replace('"content": 10.0', '"content": 10.8'))
    code, out, _ = run_main(capsys, "run", str(suite), "--out", str(tmp_path / "out-2"))
    assert code == 1
    assert "usd-conversion ... FAIL" in out

    # 5. The fix lands; the scenario passes and stays in the suite, failing the day the behaviour changes again.
    monkeypatch.setitem(shop.RATES, "USD", 1.08)
    code, out, err = run_main(capsys, "run", str(suite), "--out", str(tmp_path / "out-3"))
    assert code == 0, out + err


def test_a_prompt_session_becomes_a_scenario_that_replays_it(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback([text("Paris.", input_tokens=21, output_tokens=2), text("About 2.1 million.")])
    session = tmp_path / "chat.json"
    model = ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url, "--session", str(session)]
    assert run_main(capsys, "prompt", "Capital of France?", *model)[0] == 0
    assert run_main(capsys, "prompt", "How many people live there?", *model)[0] == 0

    scenario = tmp_path / "suite" / "chat.yaml"
    code, _, err = run_main(capsys, "scaffold", str(session), "-o", str(scenario))
    assert code == 0, err
    code, out, err = run_main(capsys, "run", str(scenario), "--out", str(tmp_path / "out"))
    assert code == 0, out + err
    replayed = jsonio.read_json_file(tmp_path / "out" / "scenarios" / "chat" / "history.json")
    assert compared_messages(replayed) == compared_messages(jsonio.read_json_file(session))
