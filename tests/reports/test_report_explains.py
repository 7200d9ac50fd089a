"""report.html explains every failure (issue 31, item 4), in a real headless Chromium: a coloured diff for each
failed check that compares values, the text a forbidden string was found in, invariant failures that point at
their message and part in the transcript, a tool error shown as the cause with the checks that follow from it
folded under it, and an errored scenario with its error and no empty "Checks" heading. The Errors filter counts
what the run counts as errors."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.runfolder import jsonio
from tests.reports.browsing import ARTIFACTS, click_filter, detail_text, open_page, visible_names, wait_for
from tests.reports.chromium import Chromium
from tests.reports.explain_runs import make_explain_run
from tests.reports.runs import run_cli


@pytest.fixture(scope="module")
def explain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_explain_run(tmp_path_factory.mktemp("explain"))


def _diff_lines(page: Any, check: str) -> dict[str, list[str]]:
    """The added, removed and marked text of the diff in a failed check's box."""
    found = page.evaluate(
        "(() => { const box = [...document.querySelectorAll('#detail .check.failed')].find(b =>"
        f" b.querySelector('strong').textContent === {check!r}); const pick = s =>"
        " [...box.querySelectorAll(s)].map(e => e.textContent);"
        " return { add: pick('.diff .add'), del: pick('.diff .del'), mark: pick('.diff mark') }; })()"
    )
    return dict(found)


def test_a_structured_output_that_differs_shows_a_marked_diff(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html", "#json-equals")
    try:
        detail_text(page, "Why it failed: 1 check(s)")
        diff = _diff_lines(page, "turn 1: output.json_equals")
        assert diff["del"] == ["-    4", '-    "d": "y"']
        assert diff["add"] == ["+    3", '+    "d": "x"']
        assert diff["mark"] == ["4", "3", "y", "x"]  # the part of each changed line that changed
    finally:
        page.close()


def test_a_tool_call_sequence_that_differs_shows_the_call_that_differs(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html", "#tool-sequence")
    try:
        text = detail_text(page, "Why it failed")
        diff = _diff_lines(page, "turn 1: tool_calls.sequence")
        # The actual calls are cut down to what the matchers ask (no ids): only the differing argument shows.
        assert diff["del"] == ['-      "command": "cat"']
        assert diff["add"] == ['+      "command": "pwd"']
        # The detail quotes the calls as JSON, not as Python reprs.
        assert 'call 2: expected {"name":"bash","args":{"command":"cat"}}' in text
        assert "{'" not in text
    finally:
        page.close()


def test_a_text_the_model_must_not_see_is_marked_where_it_was(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html", "#must-not-see")
    try:
        detail_text(page, "Must not appear, and does")
        marks = page.evaluate(
            "[...document.querySelectorAll('#detail .check.failed pre.found mark')].map(m => m.textContent)"
        )
        assert marks == ["password"]
        found_in = page.evaluate("document.querySelector('#detail .check.failed pre.found').textContent")
        assert found_in == "the password is hunter2"
    finally:
        page.close()


def test_a_tool_error_is_the_cause_and_what_follows_from_it_is_folded(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html", "#tool-error-cause")
    try:
        text = detail_text(page, "Cause:")
        assert "Cause: turn 1 ended with tool_failed (a tool raised an error nothing expected)" in text
        assert "tool 'write_file' call #1 failed: disk full" in text
        folded = page.evaluate(
            "(() => { const d = document.querySelector('#detail details.after-cause'); return d && [d.open,"
            " [...d.querySelectorAll('.check.failed strong')].map(s => s.textContent)]; })()"
        )
        assert folded == [False, ["turn 1: output", "turn 1: usage.requests"]]
        # The cause is not shown a second time as a failed check of its own, and nothing is shown unfolded.
        assert page.evaluate("[...document.querySelectorAll('#detail .verdict > .check')].length") == 0
        page.screenshot(ARTIFACTS / "report-cause.png")
        page.evaluate("[...document.querySelectorAll('#detail .cause button')][0].click()")
        assert wait_for(page, "document.activeElement && document.activeElement.id.endsWith('turn-1')")
        # The list says why it failed too: the cause under the status.
        assert page.evaluate("document.querySelector('tr.selected td .sub').textContent") == "tool_failed"
    finally:
        page.close()


def test_an_errored_scenario_shows_its_error_and_no_empty_checks_heading(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html", "#agent-missing")
    try:
        text = detail_text(page, "Error agent_error")
        assert "nowhere_module_for_the_report_test" in text
        headings = page.evaluate("[...document.querySelectorAll('#detail h3')].map(h => h.textContent)")
        assert not [heading for heading in headings if heading.startswith(("Checks", "Why it failed"))]
        # Errors: what the run counts as errors (its exit code 3), and only that.
        click_filter(page, "error")
        assert visible_names(page) == ["agent-missing"]
        report = jsonio.read_json_file(explain / "report.json")
        assert report["summary"]["error"] == 1
        assert page.evaluate("document.querySelector('button[data-filter=\"error\"]').textContent") == "Errors (1)"
    finally:
        page.close()


def test_an_invariant_failure_points_at_its_message_and_part(browser: Chromium, explain: Path, tmp_path: Path) -> None:
    # No scripted run breaks an invariant (the orchestrator keeps them), so a report is given one, as `agentrig
    # check` would find it in an imported history: the first tool call has no return.
    run = tmp_path / "run"
    shutil.copytree(explain, run)
    report = jsonio.read_json_file(run / "report.json")
    entry = next(entry for entry in report["scenarios"] if entry["name"] == "hostile-ids")
    says = "tool call constructor has no return before the next request"
    entry["status"] = "failed"
    entry["checks"].append(
        {
            "name": "scenario: invariant no_dangling_tool_calls",
            "passed": False,
            "expected": [],
            "actual": [{"code": "no_dangling_tool_calls", "message": 1, "part": 0, "says": says}],
            "detail": f"no_dangling_tool_calls at message 1, part 0: {says}",
            "skipped_reason": None,
        }
    )
    (run / "report.json").write_bytes(jsonio.dumps(report, pretty=True))
    assert run_cli("report", str(run)) == 0
    page = open_page(browser, run / "report.html", "#hostile-ids")
    try:
        text = detail_text(page, "no_dangling_tool_calls")
        assert f"message[1].parts[0] {says}" in text.replace("\n", " ")
        page.evaluate("document.querySelector('#detail ul.located button').click()")
        pointed = wait_for(
            page,
            "[...document.querySelectorAll('#detail .pointed')].map(e => e.id || e.dataset.part).join(' ')",
        )
        row = page.evaluate("document.querySelector('tr.selected').dataset.i")
        assert pointed == f"s{row}-m-1 0"  # the message, and its first part
        assert "message[1]" in page.evaluate("document.querySelector('#detail .msg.pointed .number').textContent")
    finally:
        page.close()


def test_no_check_detail_quotes_a_python_repr(explain: Path) -> None:
    report = jsonio.read_json_file(explain / "report.json")
    details = [check["detail"] for entry in report["scenarios"] for check in entry["checks"] if check["detail"]]
    assert details
    assert not [detail for detail in details if "{'" in detail or "['" in detail]
