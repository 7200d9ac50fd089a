"""Totals and money (`agentrig run` against the loopback provider): cost per scenario and in total from genai-prices,
a model without a price said so, `--prices`, `--max-cost`, and bad input refused in one line with nothing touched."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage as GenaiUsage
from genai_prices import calc_price
from typer.testing import CliRunner

from agentrig.cli import app, main
from agentrig.runtime.reports.totals import COST_KEYS, TOTALS_KEYS
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.suite.outputs.reports import REPORT_KEYS, SCENARIO_KEYS
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import text

pytestmark = pytest.mark.providers

_SCENARIO = """\
name: {name}
system_prompt: Be terse.
turns:
  - user: Say hello ({name}).
    expect:
      output: {{contains: hello}}
"""


def _scenarios(tmp_path: Path, *names: str) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir(exist_ok=True)
    for name in names:
        (directory / f"{name}.yaml").write_text(_SCENARIO.format(name=name), encoding="utf-8")
    return directory


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["run", *args])
    return result.exit_code, result.output


def _report(out: Path) -> dict[str, Any]:
    return jsonio.read_json_file(out / "report.json")


def _gpt_4o_price(input_tokens: int, output_tokens: int) -> Decimal:
    """What genai-prices says one request costs, asked directly (the figure agentrig must report)."""
    usage = GenaiUsage(input_tokens=input_tokens, output_tokens=output_tokens)
    return Decimal(calc_price(usage, "gpt-4o", provider_id="openai").total_price)


def test_cost_per_scenario_and_in_total_from_genai_prices(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback(default=text("hello there", input_tokens=1200, output_tokens=300))
    out = tmp_path / "out"
    model = ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]
    code, output = _run(str(_scenarios(tmp_path, "one", "two")), "--out", str(out), *model)
    assert code == 0, output

    report = _report(out)
    assert set(report) <= REPORT_KEYS
    one_request = float(_gpt_4o_price(1200, 300))
    assert one_request > 0
    for scenario in report["scenarios"]:
        assert set(scenario) == SCENARIO_KEYS
        assert set(scenario["cost"]) == COST_KEYS
        assert scenario["cost"]["usd"] == pytest.approx(one_request)
        assert scenario["cost"]["spent_usd"] == pytest.approx(one_request)
        assert scenario["cost"]["model"] == "openai:gpt-4o"
        assert scenario["cost"]["priced_by"].startswith("genai-prices ")
    totals = report["totals"]
    assert set(totals) == TOTALS_KEYS
    assert totals["attempts"] == {  # two requests, each answered at once
        "requests": 2,
        "attempts": 2,
        "retries": 0,
        "retry_wait_s": 0.0,
        "queue_wait_s": totals["attempts"]["queue_wait_s"],
        "failed": {},
    }
    assert (totals["requests"], totals["input_tokens"], totals["output_tokens"]) == (2, 2400, 600)
    assert totals["cost_usd"] == pytest.approx(2 * one_request)
    assert totals["priced"] == 2
    assert totals["unpriced"] == 0
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "| Cost |" in summary
    assert "2 requests, 2,400 tokens in / 600 out, $" in summary
    junit = (out / "junit.xml").read_text(encoding="utf-8")
    assert 'name="total_cost_usd"' in junit
    assert 'name="cost_usd"' in junit
    html = (out / "report.html").read_text(encoding="utf-8")
    assert '"cost_usd":' in html
    assert "totals: 2 requests" in output


def test_a_model_without_a_price_says_so_instead_of_zero(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback(default=text("hello"))
    out = tmp_path / "out"
    model = ["--model", "openai:my-local-model", "--base-url", server.openai_base_url]
    code, output = _run(str(_scenarios(tmp_path, "one")), "--out", str(out), *model)
    assert code == 0, output
    report = _report(out)
    (scenario,) = report["scenarios"]
    assert scenario["cost"]["usd"] is None
    assert scenario["cost"]["note"].startswith("no price for openai:my-local-model")
    assert report["totals"]["cost_usd"] is None
    assert report["totals"]["unpriced"] == 1
    assert "no price for openai:my-local-model" in report["totals"]["cost_note"]
    assert "no price" in (out / "summary.md").read_text(encoding="utf-8")


def test_a_prices_file_prices_a_model_genai_prices_does_not_know(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback(default=text("hello", input_tokens=1_000_000, output_tokens=500_000))
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai:my-local-model: {input: 0.5, output: 2}\n", encoding="utf-8")
    out = tmp_path / "out"
    model = ["--model", "openai:my-local-model", "--base-url", server.openai_base_url, "--prices", str(prices)]
    code, output = _run(str(_scenarios(tmp_path, "one")), "--out", str(out), *model)
    assert code == 0, output
    (scenario,) = _report(out)["scenarios"]
    assert scenario["cost"]["usd"] == pytest.approx(0.5 + 1.0)
    assert scenario["cost"]["priced_by"] == f"--prices {prices}"


def test_a_scripted_run_has_no_price_and_says_why(tmp_path: Path) -> None:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    (directory / "s.yaml").write_text(
        "name: s\nturns:\n  - user: hi\n    model: [{text: hello}]\n    expect: {output: {contains: hello}}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    code, output = _run(str(directory), "--out", str(out))
    assert code == 0, output
    report = _report(out)
    assert report["scenarios"][0]["cost"] == {
        "usd": None,
        "spent_usd": None,
        "model": None,
        "priced_by": None,
        "note": "scripted run: no provider, no price",
    }
    assert report["totals"]["cost_usd"] is None
    assert report["totals"]["unpriced"] == 0
    assert report["totals"]["cost_note"] == "scripted run: no provider, no price"


def test_max_cost_stops_starting_scenarios_once_spent(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback(default=text("hello", input_tokens=1200, output_tokens=300))
    out = tmp_path / "out"
    one_request = float(_gpt_4o_price(1200, 300))
    budget = f"{one_request * 1.5:.6f}"  # spent after the second scenario
    model = ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url, "--max-cost", budget]
    code, output = _run(str(_scenarios(tmp_path, "a", "b", "c", "d")), "--out", str(out), *model)
    assert code == 0, output  # what ran passed; the rest is skipped, with the reason

    assert len(server.requests) == 2
    report = _report(out)
    statuses = {scenario["name"]: scenario["status"] for scenario in report["scenarios"]}
    assert statuses == {"a": "passed", "b": "passed", "c": "skipped", "d": "skipped"}
    skipped = next(scenario for scenario in report["scenarios"] if scenario["name"] == "c")
    assert "--max-cost budget of $" in skipped["checks"][0]["skipped_reason"]
    assert report["totals"]["not_run_for_budget"] == 2
    assert report["totals"]["max_cost_usd"] == float(budget)
    assert "2 scenarios not run" in output
    junit = (out / "junit.xml").read_text(encoding="utf-8")
    assert "--max-cost budget" in junit


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-cost", "-1"], "--max-cost must be an amount of US dollars above 0, got -1"),
        (["--max-cost", "nan"], "--max-cost must be an amount"),
        (["--repeat", "0"], "--repeat must be at least 1, got 0"),
        (["--repeat", "3", "--pass-rate", "1.5"], "--pass-rate must be between 0 and 1"),
        (["--record-mode", "once"], "--record-mode once needs --model"),
        (["--record-mode", "sometimes", "--model", "openai:gpt-4o"], "--record-mode sometimes: expected one of"),
        (["--model", "openai:my-local-model", "--max-cost", "1"], "--max-cost 1: no price for openai:my-local-model"),
        (["--max-cost", "1"], "--max-cost 1 limits what a real model costs: it needs --model"),
        (["--baseline", "MISSING"], "--baseline compares repeated runs: give --repeat N"),
        (["--baseline", "MISSING", "--repeat", "2"], "nope.yaml: no such directory"),
        (["--model", "openai:x", "--prices", "PRICES"], "prices.yaml:2: openai:x.inptu: unknown field"),
        (["--model", "openai:x", "--prices", "MISSING"], "--prices"),
    ],
)
def test_bad_accounting_input_is_one_line_exit_2_and_touches_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai:x:\n  inptu: 1\n  output: 2\n", encoding="utf-8")
    named = {"PRICES": str(prices), "MISSING": str(tmp_path / "nope.yaml")}
    args = [named.get(arg, arg) for arg in args]
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text('{"format": "agentrig.report/1"}', encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        main(["run", str(_scenarios(tmp_path, "one")), "--out", str(out), *args])
    captured = capsys.readouterr()
    assert exited.value.code == 2, captured
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1, captured
    assert not captured.out, captured
    assert message in lines[0]
    assert sorted(path.name for path in out.iterdir()) == ["report.json"]  # nothing touched
    assert (out / "report.json").read_text(encoding="utf-8") == '{"format": "agentrig.report/1"}'
