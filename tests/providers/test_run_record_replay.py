"""`agentrig run --record DIR` against the loopback provider, then `--replay DIR` offline."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app, main
from agentrig.runtime.runfolder import jsonio
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, ToolCallReply, text, tool_calls
from tests.same_conversation import compared_messages

pytestmark = pytest.mark.providers

_SCENARIO = """\
name: weather
system_prompt: You answer with the weather tool.
tools:
  weather:
    description: The weather in a city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
    results:
      - return: sunny
turns:
  - user: "{question}"
    expect:
      output: {contains: sunny}
      tool_calls: {used: [weather]}
"""


def _write(tmp_path: Path, question: str) -> Path:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir(exist_ok=True)
    (scenarios / "weather.yaml").write_text(_SCENARIO.replace("{question}", question), encoding="utf-8")
    return scenarios


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["run", *args])
    return result.exit_code, result.output


def _record(loopback: ServerFactory, tmp_path: Path) -> tuple[Path, LoopbackServer, Path]:
    """Record the weather scenario against the loopback provider: (scenarios dir, server, recordings dir)."""
    scenarios = _write(tmp_path, "Weather in Paris?")
    calls = tool_calls(ToolCallReply(id="call_1", name="weather", args={"city": "Paris"}))
    server = loopback([calls, text("It is sunny in Paris.")])
    recordings = tmp_path / "recordings"
    model = ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]
    code, output = _run(str(scenarios), "--out", str(tmp_path / "rec"), *model, "--record", str(recordings))
    assert code == 0, output
    return scenarios, server, recordings


def test_record_then_replay_gives_the_same_history_offline(loopback: ServerFactory, tmp_path: Path) -> None:
    scenarios, server, recordings = _record(loopback, tmp_path)
    assert len(server.requests) == 2
    assert (recordings / "weather.json").is_file()

    code, output = _run(str(scenarios), "--out", str(tmp_path / "replay"), "--replay", str(recordings))
    assert code == 0, output
    assert len(server.requests) == 2  # nothing new reached the provider
    recorded = jsonio.read_json_file(tmp_path / "rec" / "scenarios" / "weather" / "history.json")
    replayed = jsonio.read_json_file(tmp_path / "replay" / "scenarios" / "weather" / "history.json")
    assert compared_messages(replayed) == compared_messages(recorded)


def test_replay_fails_with_a_diff_when_the_agent_now_asks_something_else(
    loopback: ServerFactory, tmp_path: Path
) -> None:
    scenarios, _, recordings = _record(loopback, tmp_path)

    _write(tmp_path, "Weather in Rome?")  # the agent's request changed since the recording
    code, output = _run(str(scenarios), "--out", str(tmp_path / "replay"), "--replay", str(recordings))
    assert code == 1, output
    report = jsonio.read_json_file(tmp_path / "replay" / "report.json")
    (scenario,) = report["scenarios"]
    assert scenario["status"] == "failed"
    assert "Rome" in output, output
    assert "Paris" in output, output


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--record", "r", "--replay", "r"], "--record and --replay cannot be used together"),
        (["--record", "r"], "--record needs --model"),
        (["--replay", "r", "--update-golden"], "--update-golden needs the scripted model"),
    ],
)
def test_bad_record_replay_combinations_are_usage_errors(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = _write(tmp_path, "Weather?")
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(scenarios), "--out", str(tmp_path / "out"), *flags])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
