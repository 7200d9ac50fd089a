"""The pytest plugin's record modes against the loopback provider: `rewrite` records like `agentrig run --record`,
`none` replays offline like `--replay` (a changed request fails with both sides shown)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml  # noqa: F401  # pyright: ignore[reportUnusedImport]  # shared by pytester's inner sessions (tests/pytest_plugin/conftest.py)
from typer.testing import CliRunner

import agentrig.runtime.suite.single  # pyright: ignore[reportUnusedImport]
import agentrig.scenarios.loader  # noqa: F401  # pyright: ignore[reportUnusedImport]
from agentrig.cli import app
from agentrig.runtime.runfolder import jsonio
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import ToolCallReply, text, tool_calls
from tests.same_conversation import compared_messages

pytestmark = pytest.mark.providers
pytest_plugins = ["pytester"]

SCENARIO = """\
name: weather
system_prompt: You answer with the weather tool.
tools:
  weather:
    description: The weather in a city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
    results:
      - return: sunny
turns:
  - user: "Weather in CITY?"
    expect:
      output: {contains: sunny}
      tool_calls: {used: [weather]}
"""


def _write(pytester: pytest.Pytester, city: str) -> None:
    (pytester.path / "scenarios").mkdir(exist_ok=True)
    (pytester.path / "scenarios" / "weather.yaml").write_text(SCENARIO.replace("CITY", city), encoding="utf-8")


def test_rewrite_records_and_none_replays_offline_as_agentrig_run_does(
    pytester: pytest.Pytester, loopback: ServerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(pytester, "Paris")
    calls = tool_calls(ToolCallReply(id="call_1", name="weather", args={"city": "Paris"}))
    server = loopback([calls, text("It is sunny in Paris.")])
    real = ["--agentrig-model", "openai:gpt-4o", "--agentrig-base-url", server.openai_base_url]

    recorded = pytester.runpytest_inprocess(
        *real, "--agentrig-record-mode", "rewrite", "--agentrig-recordings", "rec", "--agentrig-out", "out-rec"
    )
    replayed = pytester.runpytest_inprocess(
        "--agentrig-record-mode", "none", "--agentrig-recordings", "rec", "--agentrig-out", "out-replay"
    )

    recorded.assert_outcomes(passed=1)
    replayed.assert_outcomes(passed=1)
    assert len(server.requests) == 2  # the replay sent nothing
    assert (pytester.path / "rec" / "weather.json").is_file()
    history = "scenarios/weather/history.json"
    assert compared_messages(jsonio.read_json_file(pytester.path / "out-replay" / history)) == compared_messages(
        jsonio.read_json_file(pytester.path / "out-rec" / history)
    )
    # The recording is the one `agentrig run --replay` reads.
    monkeypatch.chdir(pytester.path)
    cli = CliRunner().invoke(app, ["run", "scenarios", "--replay", "rec", "--out", "out-cli", "-q"])
    assert cli.exit_code == 0, cli.output

    _write(pytester, "Rome")  # the agent's request changed since the recording
    changed = pytester.runpytest_inprocess("--agentrig-record-mode", "none", "--agentrig-recordings", "rec")

    changed.assert_outcomes(failed=1)
    output = changed.stdout.str()
    assert "Rome" in output, output
    assert "Paris" in output, output
    assert len(server.requests) == 2


def test_replaying_from_a_missing_directory_is_a_usage_error(pytester: pytest.Pytester, tmp_path: Path) -> None:
    _write(pytester, "Paris")

    result = pytester.runpytest_inprocess("--agentrig-record-mode", "none", "--agentrig-recordings", "nowhere")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agentrig-record-mode none * no such directory*"])


def test_once_records_what_is_missing_and_replays_the_rest_without_a_key(
    pytester: pytest.Pytester, loopback: ServerFactory
) -> None:
    _write(pytester, "Paris")
    calls = tool_calls(ToolCallReply(id="call_1", name="weather", args={"city": "Paris"}))
    server = loopback([calls, text("It is sunny in Paris.")])
    real = ["--agentrig-model", "openai:gpt-4o", "--agentrig-base-url", server.openai_base_url]
    once = ["--agentrig-record-mode", "once", "--agentrig-recordings", "rec"]

    first = pytester.runpytest_inprocess(*real, *once)
    first.assert_outcomes(passed=1)
    assert len(server.requests) == 2
    # Recorded now: `once` replays it, and `none` with the model named needs no key and no server.
    second = pytester.runpytest_inprocess(*real, *once)
    second.assert_outcomes(passed=1)
    offline = pytester.runpytest_inprocess(
        "--agentrig-model", "openai:gpt-4o", "--agentrig-record-mode", "none", "--agentrig-recordings", "rec"
    )
    offline.assert_outcomes(passed=1)
    assert len(server.requests) == 2
    other = pytester.runpytest_inprocess(
        "--agentrig-model", "openai:gpt-4o-mini", "--agentrig-record-mode", "none", "--agentrig-recordings", "rec"
    )
    other.assert_outcomes(failed=1)
    assert "recorded with openai:gpt-4o, but this run's --model is openai:gpt-4o-mini" in other.stdout.str()
