"""`--max-cost` with `--repeat` and requests side by side: the run spends at most its budget plus one request's
price per request in flight, and report.json and summary.md say by how much it went over.

Each scenario has three turns (three priced requests), so a scenario admitted while the budget lasted would, if
the check were made only when a scenario starts, go on sending after the budget was known to be spent."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage as GenaiUsage
from genai_prices import calc_price
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.reports.totals import format_usd
from agentrig.runtime.runfolder import jsonio
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import text

pytestmark = pytest.mark.providers

_TURNS = 3
_SCENARIO = """\
name: chat
system_prompt: Be terse.
turns:
  - user: Say hello.
  - user: Say hello again.
  - user: Say hello once more.
"""


def _one_request_usd() -> float:
    usage = GenaiUsage(input_tokens=1200, output_tokens=300)
    return float(Decimal(calc_price(usage, "gpt-4o", provider_id="openai").total_price))


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_spend_stays_within_the_budget_plus_one_request_per_request_in_flight(
    loopback: ServerFactory, tmp_path: Path, jobs: str
) -> None:
    server = loopback(default=text("hello", input_tokens=1200, output_tokens=300))
    (tmp_path / "chat.yaml").write_text(_SCENARIO, encoding="utf-8")
    price = _one_request_usd()
    budget = round(price * 3.5, 8)  # three and a half requests: the second scenario's first request spends it
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "run", str(tmp_path / "chat.yaml"), "--out", str(out), "--model", "openai:gpt-4o",
            "--base-url", server.openai_base_url, "--max-cost", f"{budget}",
            "--repeat", "10", "--max-concurrency", "4", "-j", jobs,
        ],
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output

    report: dict[str, Any] = jsonio.read_json_file(out / "report.json")
    totals = report["totals"]
    spent = totals["spent_usd"]
    assert spent == pytest.approx(len(server.requests) * price)
    assert spent <= budget + server.peak_in_flight * price + 1e-9, (len(server.requests), server.peak_in_flight)
    assert len(server.requests) < 10 * _TURNS  # the budget stopped the run
    assert totals["max_cost_usd"] == budget
    assert totals["max_cost_overshoot_usd"] == pytest.approx(max(0.0, spent - budget))
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert f"--max-cost budget {format_usd(budget)}" in summary, summary
    assert "spent" in summary
    assert ("over by" in summary) == (totals["max_cost_overshoot_usd"] > 0)
