"""`agentrig run --repeat N` against the loopback provider: pass fractions with a Wilson interval, flaky scenarios
named, the rate from the scenario or the command line deciding the exit code, tokens and cost summed, one folder per
run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.suite.outputs.reports import REPEAT_SCENARIO_KEYS, REPEATS_KEYS, REPORT_KEYS
from agentrig.runtime.suite.repeats import base_name, repeat_name, wilson_interval
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import text

pytestmark = pytest.mark.providers


def _write(tmp_path: Path, pass_rate: float | None = None) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir(exist_ok=True)
    settings = f"settings: {{pass_rate: {pass_rate}}}\n" if pass_rate is not None else ""
    (directory / "weather.yaml").write_text(
        f"name: weather\n{settings}turns:\n  - user: Weather?\n    expect:\n      output: {{contains: sunny}}\n",
        encoding="utf-8",
    )
    return directory


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    try:
        main(["run", *args])
        code: Any = 0
    except SystemExit as exited:
        code = exited.code
    captured = capsys.readouterr()
    return (code if isinstance(code, int) else 1), captured.out + captured.err


def _flaky_server(loopback: ServerFactory) -> Any:
    """Answers sunny, rain, sunny, sunny, rain: 3 of 5 runs pass."""
    replies = ["It is sunny.", "It will rain.", "It is sunny all day.", "sunny", "rain again"]
    return loopback([text(reply, input_tokens=100, output_tokens=10) for reply in replies])


def _repeat_run(tmp_path: Path, server: Any, out: Path, *extra: str) -> list[str]:
    model = ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]
    return [str(tmp_path / "scenarios"), "--out", str(out), *model, "--repeat", "5", *extra]


def test_pass_fraction_interval_flaky_and_sums(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path)
    server = _flaky_server(loopback)
    out = tmp_path / "out"
    code, output = _run(capsys, *_repeat_run(tmp_path, server, out, "--pass-rate", "0.6"))
    assert code == 0, output  # 3/5 meets 0.6

    report = jsonio.read_json_file(out / "report.json")
    assert set(report) <= REPORT_KEYS
    assert set(report["repeats"]) == REPEATS_KEYS
    (entry,) = report["repeats"]["scenarios"]
    assert set(entry) == REPEAT_SCENARIO_KEYS
    assert (entry["runs"], entry["passed"], entry["failed"]) == (5, 3, 2)
    assert entry["pass_fraction"] == 0.6
    low, high = wilson_interval(3, 5)
    assert entry["interval"] == [round(low, 4), round(high, 4)]
    assert entry["verdict"] == "passed"
    assert entry["flaky"] is True
    assert report["repeats"]["flaky"] == ["weather"]
    assert entry["usage"]["input_tokens"] == 500  # summed over the repeats
    assert entry["cost_usd"] == pytest.approx(sum(s["cost"]["usd"] for s in report["scenarios"]))
    assert report["totals"]["input_tokens"] == 500
    # One folder per run, none colliding: weather@01 .. weather@05.
    assert sorted(path.name for path in (out / "scenarios").iterdir()) == [f"weather@0{i}" for i in range(1, 6)]
    assert "weather: 3/5 passed (60%, 95% CI 23%-88%), needs 60%: passed, flaky" in output
    assert "flaky: weather" in (out / "summary.md").read_text(encoding="utf-8")


def test_the_scenario_rate_wins_over_the_command_line_and_decides_the_exit_code(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, pass_rate=0.8)
    server = _flaky_server(loopback)
    code, output = _run(capsys, *_repeat_run(tmp_path, server, tmp_path / "out", "--pass-rate", "0.5"))
    assert code == 1, output  # 3/5 < 0.8, the scenario's own rate
    (entry,) = jsonio.read_json_file(tmp_path / "out" / "report.json")["repeats"]["scenarios"]
    assert entry["required_rate"] == 0.8
    assert entry["verdict"] == "failed"


def test_without_a_rate_every_run_must_pass(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path)
    server = _flaky_server(loopback)
    code, output = _run(capsys, *_repeat_run(tmp_path, server, tmp_path / "out"))
    assert code == 1, output


def test_a_rerun_replaces_the_folders_of_an_earlier_run(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path)
    server = loopback(default=text("sunny"))
    out = tmp_path / "out"
    model = ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]
    assert _run(capsys, str(tmp_path / "scenarios"), "--out", str(out), *model)[0] == 0
    assert _run(capsys, str(tmp_path / "scenarios"), "--out", str(out), *model, "--repeat", "2")[0] == 0
    assert sorted(path.name for path in (out / "scenarios").iterdir()) == ["weather@01", "weather@02"]


def test_wilson_interval_and_names() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(4, 5)
    assert (round(low, 3), round(high, 3)) == (0.376, 0.964)  # the textbook value for 4/5 at 95%
    low, high = wilson_interval(10, 10)
    assert high == pytest.approx(1.0)
    assert 0.69 < low < 0.73
    assert repeat_name("weather", 3, 12) == "weather@03"
    assert base_name("weather@03") == "weather"
    assert base_name("weather") == "weather"
