"""A judge with `model: openai-chat:gpt-4o` (issue 43 item 1) asked for real: pydantic-ai's OpenAI client sends the
judge's request to the loopback server (reached by `OPENAI_BASE_URL`, as a judge's provider is), which answers the
verdict tool. The request carries the rubric, the output and the reference; the verdict decides the check; the judge's
request is counted and priced (genai-prices) in the scenario's usage and cost; a failed judge is a failed check."""

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
name: judged
system_prompt: You are a support agent.
turns:
  - user: When do I get my money back?
    model:
      - text: Your refund arrives within 5 business days.
    expect:
      judge:
        rubric: States the refund delay.
        reference: Refunds take 5 business days.
        threshold: 0.7
        model: openai-chat:gpt-4o
"""


def _verdict(**arguments: Any) -> Reply:
    call = ToolCallReply(id="call_1", name="verdict", args=arguments)
    return tool_calls(call, input_tokens=1000, output_tokens=100)


def _run(loopback: ServerFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, reply: Reply) -> Any:
    server = loopback([reply])
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    tmp_path.mkdir(exist_ok=True)
    scenario = tmp_path / "judged.yaml"
    scenario.write_text(_SCENARIO, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(scenario), "--out", str(out)])
    report = jsonio.read_json_file(out / "report.json")
    return server, result, report, out


def test_a_real_judge_round_trip_decides_the_check_and_is_priced(
    loopback: ServerFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    reply = _verdict(reason="Says 5 business days.", **{"pass": True}, score=0.8)
    server, result, report, _ = _run(loopback, monkeypatch, tmp_path, reply)

    assert result.exit_code == 0, result.output
    (request,) = server.requests
    sent = str(request.body["messages"])
    assert "<rubric>\\nStates the refund delay.\\n</rubric>" in sent
    assert "Your refund arrives within 5 business days." in sent
    assert "<reference>\\nRefunds take 5 business days.\\n</reference>" in sent
    assert [tool["function"]["name"] for tool in request.body["tools"]] == ["verdict"]
    (entry,) = report["scenarios"]
    (check,) = [check for check in entry["checks"] if check["name"] == "turn 1: judge"]
    price = float(Decimal(calc_price(GenaiUsage(input_tokens=1000, output_tokens=100), "gpt-4o").total_price))
    assert check["passed"] is True
    assert check["actual"] == {
        "pass": True,
        "score": 0.8,
        "reason": "Says 5 business days.",
        "model": "openai-chat:gpt-4o",
        "cost_usd": pytest.approx(price),
    }
    # The agent ran its script (one request, no price): the judge's request is counted beside it and is all the
    # scenario cost.
    assert entry["usage"]["requests"] == 2
    assert entry["usage"]["input_tokens"] >= 1000
    assert entry["cost"]["usd"] == pytest.approx(price)
    assert report["totals"]["requests"] == 2
    assert entry["attempts"]["requests"] == 1  # the judge's request went through the provider layer's attempt log


def test_a_real_judges_fail_and_its_error_are_failed_checks(
    loopback: ServerFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _, result, report, out = _run(
        loopback, monkeypatch, tmp_path, _verdict(reason="No delay stated.", **{"pass": False}, score=0.2)
    )
    assert result.exit_code == 1, result.output
    assert "the judge's verdict is fail (score 0.2): No delay stated." in (out / "junit.xml").read_text("utf-8")

    _, result, report, _ = _run(loopback, monkeypatch, tmp_path / "again", error(400, "model not allowed"))
    assert result.exit_code == 1, result.output
    (entry,) = report["scenarios"]
    (check,) = [check for check in entry["checks"] if check["name"] == "turn 1: judge"]
    assert check["passed"] is False
    assert check["detail"].startswith("the judge openai-chat:gpt-4o gave no verdict: ")
    assert "model not allowed" in check["detail"]


_REAL_AGENT = """\
name: judged
system_prompt: You are a support agent.
turns:
  - user: When do I get my money back?
    expect:
      judge:
        rubric: States the refund delay.
        threshold: 0.7
        model: openai-chat:gpt-4o
"""


def test_a_real_judge_is_recorded_and_replayed_offline_with_the_same_verdict(
    loopback: ServerFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    server = loopback([text("Within 5 business days."), _verdict(reason="Says 5 days.", **{"pass": True}, score=0.8)])
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "judged.yaml").write_text(_REAL_AGENT, encoding="utf-8")
    recordings = tmp_path / "recordings"
    live = ["--model", "openai-chat:gpt-4o", "--base-url", server.openai_base_url, "--record", str(recordings)]

    recorded = CliRunner().invoke(app, ["run", str(tmp_path / "judged.yaml"), "--out", str(tmp_path / "a"), *live])
    assert recorded.exit_code == 0, recorded.output
    assert sorted(path.name for path in recordings.iterdir()) == ["judged+judge-0.json", "judged.json"]
    assert len(server.requests) == 2
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")
    offline = ["--replay", str(recordings)]
    replayed = CliRunner().invoke(app, ["run", str(tmp_path / "judged.yaml"), "--out", str(tmp_path / "b"), *offline])

    assert replayed.exit_code == 0, replayed.output
    assert len(server.requests) == 2  # nothing asked of the provider
    checks = [
        {
            check["name"]: check
            for check in jsonio.read_json_file(tmp_path / out / "report.json")["scenarios"][0]["checks"]
        }
        for out in ("a", "b")
    ]
    assert checks[0]["turn 1: judge"] == checks[1]["turn 1: judge"]
    assert checks[1]["turn 1: judge"]["actual"]["reason"] == "Says 5 days."
    assert checks[1]["turn 1: judge"]["actual"]["cost_usd"] > 0  # a replay is priced as the recorded request was
    # Without its recording the replayed judge gives no verdict, and asks no provider for one.
    (recordings / "judged+judge-0.json").unlink()
    missing = CliRunner().invoke(app, ["run", str(tmp_path / "judged.yaml"), "--out", str(tmp_path / "c"), *offline])
    assert missing.exit_code == 1, missing.output
    (entry,) = jsonio.read_json_file(tmp_path / "c" / "report.json")["scenarios"]
    (check,) = [check for check in entry["checks"] if check["name"] == "turn 1: judge"]
    assert check["detail"].startswith("the judge openai-chat:gpt-4o gave no verdict: ")
    assert "judged+judge-0.json" in check["detail"]
    assert len(server.requests) == 2
