"""The retry policy users set (`--max-attempts`, `--max-retry-wait`, `--retry-budget`, `settings.provider`), and every
attempt visible: report.json's and usage.json's `attempts`, a `request_retry` event per retry with its status."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.reports.scenario_data import scenario_payload
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, error, rate_limited, text
from tests.providers.suites import events, report, scenario_file, write_suite
from tests.reports.runs import decompressed

pytestmark = pytest.mark.providers


def _run(capsys: pytest.CaptureFixture[str], server: LoopbackServer, suite: Path, out: Path, *args: str) -> int:
    model = ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]
    code, _, _ = run_main(capsys, "run", str(suite), "--out", str(out), *model, *args)
    return code


def test_a_retried_request_is_counted_and_logged_with_its_status(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    limited = error(429, "Rate limit reached", headers={"retry-after-ms": "40", "Retry-After": "1"})
    server = loopback([limited, error(503, "overloaded"), text("Hello!")])
    out = tmp_path / "out"
    assert _run(capsys, server, write_suite(tmp_path / "suite", 1), out) == 0

    attempts = report(out)["scenarios"][0]["attempts"]
    assert attempts["requests"] == 1
    assert (attempts["attempts"], attempts["retries"], attempts["failed"]) == (3, 2, {"429": 1, "503": 1})
    assert attempts["retry_wait_s"] >= 0.04  # retry-after-ms (40 ms) wins over Retry-After (1 s)
    assert attempts["retry_wait_s"] < 1.0
    assert scenario_file(out, "s000", "usage.json")["attempts"] == attempts
    totals = report(out)["totals"]["attempts"]  # the run's totals sum the scenarios' attempts
    assert (totals["requests"], totals["attempts"], totals["retries"], totals["failed"]) == (
        1,
        3,
        2,
        attempts["failed"],
    )
    assert "2 retried (3 attempts" in (out / "summary.md").read_text(encoding="utf-8")
    assert 'name="total_retries" value="2"' in (out / "junit.xml").read_text(encoding="utf-8")
    retries = [event for event in events(out, "s000") if event["type"] == "request_retry"]
    assert [
        (event["turn"], event["request"], event["attempt"], event["status"], event["kind"]) for event in retries
    ] == [
        (1, 1, 1, 429, "rate_limit"),
        (1, 1, 2, 503, "server_error"),
    ]
    assert retries[0]["wait_s"] == 0.04
    assert retries[0]["message"] == "openai: HTTP 429 Too Many Requests: Rate limit reached"
    # The log stays well formed (checked by the scenario's default event rules, which passed).
    assert all(check["passed"] for check in report(out)["scenarios"][0]["checks"])
    # report.html shows them: the scenario's data carries each retry, and the page says what a retry is.
    page_data = scenario_payload(out, report(out)["scenarios"][0], "")
    assert [event["status"] for event in page_data["retries"]] == [429, 503]
    assert page_data["entry"]["attempts"] == attempts
    page = decompressed((out / "report.html").read_text(encoding="utf-8"))
    assert "retried after" in page
    assert '"type":"request_retry"' in page.replace(" ", "")


def test_a_flaky_server_is_retried_and_every_failed_attempt_is_counted(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback(default=text("Hello!"), fail_every=3)
    out = tmp_path / "out"
    assert _run(capsys, server, write_suite(tmp_path / "suite", 6, turns=2), out, "--max-attempts", "5") == 0
    entries = report(out)["scenarios"]
    failed = sum(entry["attempts"]["failed"].get("503", 0) for entry in entries)
    assert failed == len(server.requests) - 12 > 0
    assert sum(entry["attempts"]["retries"] for entry in entries) == failed


def test_max_attempts_ends_a_request_after_that_many(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback(default=error(500, "boom"))
    out = tmp_path / "out"
    assert _run(capsys, server, write_suite(tmp_path / "suite", 1), out, "--max-attempts", "2") == 3
    entry = report(out)["scenarios"][0]
    assert entry["error"] == {
        "kind": "server_error",
        "message": "openai: HTTP 500 Internal Server Error: boom (after 2 attempts)",
    }
    assert (entry["attempts"]["attempts"], len(server.requests)) == (2, 2)


def test_a_scenarios_own_provider_settings_win_over_the_flags(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback(default=error(500, "boom"))
    suite = write_suite(tmp_path / "suite", 1, settings="  provider: {max_attempts: 1}\n")
    out = tmp_path / "out"
    assert _run(capsys, server, suite, out, "--max-attempts", "4") == 3
    assert len(server.requests) == 1
    assert report(out)["scenarios"][0]["error"]["message"] == "openai: HTTP 500 Internal Server Error: boom"


def test_max_retry_wait_caps_what_the_provider_asks_for(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback([rate_limited("3600"), text("Hello!")])
    out = tmp_path / "out"
    assert _run(capsys, server, write_suite(tmp_path / "suite", 1), out, "--max-retry-wait", "0.05") == 0
    assert report(out)["scenarios"][0]["attempts"]["retry_wait_s"] == 0.05


def test_the_retry_budget_is_shared_by_the_whole_run(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback([rate_limited("0"), text("Hello!"), rate_limited("0"), text("Hello!")])
    out = tmp_path / "out"
    suite = write_suite(tmp_path / "suite", 2)
    assert _run(capsys, server, suite, out, "--retry-budget", "1", "--max-concurrency", "1") == 3
    first, second = report(out)["scenarios"]
    assert (first["status"], first["attempts"]["retries"]) == ("passed", 1)
    assert second["status"] == "error"
    assert second["error"]["kind"] == "rate_limit"
    assert second["error"]["message"].endswith("(the run's retry budget of 1 is spent)")
    assert second["attempts"]["retries"] == 0
