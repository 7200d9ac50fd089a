"""A scenario's `max_latency_s`, `max_cost_usd` and `max_requests` (issue 43 item 4) on a scripted run, through
`agentrig run` in-process and through `agentrig.testing`: each passes under its limit and fails over it, shown as an
ordinary check with the measured value and the limit in report.json, junit.xml, summary.md and report.html.
(tests/providers/test_scenario_limits.py prices a real model's requests against `max_cost_usd`.)

The latency limits are far from any wall time the run can take (a microsecond, ten minutes): no timing is asserted."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.runfolder import jsonio
from agentrig.testing import run_scenario
from tests.cli.cli_helpers import run_main
from tests.reports.runs import decompressed

_SCENARIO = """\
name: limits
system_prompt: Be terse.
turns:
  - user: hi
    model:
      - text: hello
  - user: again
    model:
      - text: hello again
expect:
{expect}
"""


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], expect: str) -> tuple[int, Path]:
    scenario = tmp_path / "limits.yaml"
    scenario.write_text(_SCENARIO.format(expect=expect), encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run_main(capsys, "run", str(scenario), "--out", str(out))
    assert code in (0, 1), err
    return code, out


def _limit_checks(out: Path) -> dict[str, dict[str, Any]]:
    (entry,) = jsonio.read_json_file(out / "report.json")["scenarios"]
    return {check["name"]: check for check in entry["checks"] if check["name"].startswith("scenario: max_")}


def test_under_every_limit_each_is_a_passed_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(tmp_path, capsys, "  max_latency_s: 600\n  max_cost_usd: 0\n  max_requests: 2\n")

    assert code == 0
    checks = _limit_checks(out)
    assert list(checks) == ["scenario: max_latency_s", "scenario: max_cost_usd", "scenario: max_requests"]
    assert all(check["passed"] for check in checks.values())
    assert checks["scenario: max_requests"]["actual"] == 2
    assert checks["scenario: max_cost_usd"]["actual"] == 0  # a script sends nothing to a provider
    latency = checks["scenario: max_latency_s"]
    assert (latency["expected"], 0 < latency["actual"] <= 600) == (600, True)
    assert '"scenario: max_requests"' in decompressed((out / "report.html").read_text(encoding="utf-8"))


def test_over_a_limit_fails_with_the_measured_value_and_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run(tmp_path, capsys, "  max_latency_s: 0.000001\n  max_requests: 1\n")

    assert code == 1
    checks = _limit_checks(out)
    assert checks["scenario: max_requests"] == {
        "name": "scenario: max_requests",
        "passed": False,
        "expected": 1,
        "actual": 2,
        "detail": "max_requests: 2 > 1",
        "skipped_reason": None,
    }
    latency = checks["scenario: max_latency_s"]
    assert latency["passed"] is False
    assert latency["detail"] == f"max_latency_s: {latency['actual']} > 0.000001"
    (failure,) = ElementTree.parse(out / "junit.xml").getroot().iter("failure")
    assert "max_requests: 2 > 1" in (failure.text or "")
    assert "max_latency_s: " in (failure.text or "")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "max_requests: 2 > 1" in summary
    assert "max_requests: 2 > 1" in decompressed((out / "report.html").read_text(encoding="utf-8"))


def test_agentrig_testing_checks_the_limits_as_run_does() -> None:
    scenario: dict[str, Any] = {
        "name": "limits",
        "turns": [{"user": "hi", "model": [{"text": "hello"}]}, {"user": "again", "model": [{"text": "again"}]}],
    }

    passing = run_scenario({**scenario, "expect": {"max_requests": 2, "max_cost_usd": 0, "max_latency_s": 600}})
    passing.assert_passed()
    failing = run_scenario({**scenario, "expect": {"max_requests": 1}})

    assert failing.status == "failed"
    assert [(check.name, check.detail) for check in failing.failed_checks] == [
        ("scenario: max_requests", "max_requests: 2 > 1")
    ]
    with pytest.raises(AssertionError, match="max_requests: 2 > 1"):
        failing.assert_passed()


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ("max_requests: -1", "greater than or equal to 0"),
        ("max_cost_usd: -0.5", "greater than or equal to 0"),
        ("max_latency_s: 0", "greater than 0"),
    ],
)
def test_a_negative_limit_is_one_located_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], limit: str, message: str
) -> None:
    scenario = tmp_path / "limits.yaml"
    scenario.write_text(_SCENARIO.format(expect=f"  {limit}\n"), encoding="utf-8")

    code, _, err = run_main(capsys, "run", str(scenario), "--out", str(tmp_path / "out"))

    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"agentrig: error: {scenario}:11:"), line
    assert f": expect.{limit.split(':')[0]}: " in line
    assert message in line
