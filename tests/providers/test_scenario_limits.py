"""`max_cost_usd` and `max_requests` on a real model (issue 43 item 4): the loopback provider answers through
pydantic-ai's OpenAI client, genai-prices prices each request, and the scenario's limit is checked against that cost;
a model without a price fails the limit, saying why, rather than passing on a blank."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.runfolder import jsonio
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import text

pytestmark = pytest.mark.providers

_SCENARIO = """\
name: priced
system_prompt: Be terse.
turns:
  - user: Say hello.
expect:
  max_cost_usd: {limit}
  max_requests: 1
"""


def _run(loopback: ServerFactory, tmp_path: Path, limit: str, model: str = "openai:gpt-4o") -> dict[str, Any]:
    server = loopback(default=text("hello there", input_tokens=1200, output_tokens=300))
    scenario = tmp_path / "priced.yaml"
    scenario.write_text(_SCENARIO.format(limit=limit), encoding="utf-8")
    out = tmp_path / "out"
    args = ["run", str(scenario), "--out", str(out), "--model", model, "--base-url", server.openai_base_url]
    result = CliRunner().invoke(app, args)
    (entry,) = jsonio.read_json_file(out / "report.json")["scenarios"]
    return {"exit": result.exit_code, "output": result.output, **entry}


def _check(entry: dict[str, Any], name: str) -> dict[str, Any]:
    (check,) = [check for check in entry["checks"] if check["name"] == f"scenario: {name}"]
    return check


def test_a_cost_under_the_limit_passes(loopback: ServerFactory, tmp_path: Path) -> None:
    entry = _run(loopback, tmp_path, "1.0")

    assert entry["exit"] == 0, entry["output"]
    check = _check(entry, "max_cost_usd")
    assert check["passed"] is True
    assert check["actual"] == entry["cost"]["usd"] > 0  # the scenario's own priced cost
    assert _check(entry, "max_requests")["actual"] == 1


def test_a_cost_over_the_limit_fails_showing_both(loopback: ServerFactory, tmp_path: Path) -> None:
    entry = _run(loopback, tmp_path, "0.000001")

    assert entry["exit"] == 1, entry["output"]
    check = _check(entry, "max_cost_usd")
    usd = entry["cost"]["usd"]
    assert (check["passed"], check["actual"], check["expected"]) == (False, usd, 0.000001)
    assert check["detail"] == f"max_cost_usd: {usd} > 0.000001"
    assert f"max_cost_usd: {usd} > 0.000001" in entry["output"]


def test_a_model_without_a_price_fails_the_limit_saying_so(loopback: ServerFactory, tmp_path: Path) -> None:
    entry = _run(loopback, tmp_path, "1.0", model="openai:my-local-model")

    assert entry["exit"] == 1, entry["output"]
    check = _check(entry, "max_cost_usd")
    assert (check["passed"], check["actual"]) == (False, None)
    assert check["detail"].startswith("max_cost_usd: no price for openai:my-local-model")
    assert check["detail"].endswith("give the model a price with --prices")
