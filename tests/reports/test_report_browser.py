"""report.html and compatibility.html in a real headless Chromium, opened from file://: no console error, no
network request, filters and search change the rows, one click shows why a scenario failed. One browser serves
the module; screenshots go to $AGENTRIG_TEST_ARTIFACTS (default: test-artifacts/ in the repository).

When no browser is found the tests install Debian's chromium (scripts/install_browser.sh) if they run as root
with apt-get, and otherwise skip, saying how to install one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentrig.runtime.matrix.compare import load_version_output
from agentrig.runtime.matrix.report import build_report
from tests.reports.browsing import ARTIFACTS, REPOSITORY, VISIBLE_ROWS, click_filter, open_page, visible_names, wait_for
from tests.reports.chromium import Chromium, Page
from tests.reports.runs import Runs, make_runs, run_cli

SORT_BY_NAME = "[...document.querySelectorAll('#scenarios th button')].find(b => b.textContent === 'Scenario').click()"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return make_runs(tmp_path_factory.mktemp("browser-runs"))


def _assert_stands_alone(page: Page, path: Path) -> None:
    assert page.console_errors == []
    assert {url.split("#")[0] for url in page.requests} <= {path.resolve().as_uri()}, page.requests
    assert page.evaluate("window.pwned === undefined")  # the hostile prompt stayed text


def test_the_run_page_loads_from_disk_without_errors_or_requests(browser: Chromium, runs: Runs) -> None:
    report = runs.candidate / "report.html"
    page = open_page(browser, report)
    try:
        assert page.evaluate("document.querySelector('h1').textContent") == "agentrig: 2 passed, 1 failed, 0 skipped"
        # Failures first: the default order is by status, worst first.
        assert visible_names(page) == ["answering", "ahoy", "hostile-prompt"]
        _assert_stands_alone(page, report)
    finally:
        page.close()


def test_filters_search_and_sorting_change_the_visible_rows(browser: Chromium, runs: Runs) -> None:
    page = open_page(browser, runs.candidate / "report.html")
    try:
        click_filter(page, "failed")
        assert visible_names(page) == ["answering"]
        click_filter(page, "passed")
        assert sorted(visible_names(page)) == ["ahoy", "hostile-prompt"]
        click_filter(page, "error")
        assert visible_names(page) == []
        click_filter(page, "all")
        page.evaluate(
            "(() => { const box = document.querySelector('.toolbar input');"
            " box.value = 'security'; box.dispatchEvent(new Event('input')); })()"
        )
        assert visible_names(page) == ["hostile-prompt"]  # found by its tag
        page.evaluate(
            "(() => { const box = document.querySelector('.toolbar input');"
            " box.value = ''; box.dispatchEvent(new Event('input')); })()"
        )
        page.evaluate(SORT_BY_NAME)
        assert visible_names(page) == ["ahoy", "answering", "hostile-prompt"]
        page.evaluate(SORT_BY_NAME)
        assert visible_names(page) == ["hostile-prompt", "answering", "ahoy"]
        assert page.console_errors == []
    finally:
        page.close()


def test_one_click_on_a_failed_scenario_shows_its_conversation_and_why(browser: Chromium, runs: Runs) -> None:
    page = open_page(browser, runs.candidate / "report.html")
    try:
        page.evaluate(f"{VISIBLE_ROWS}.find(tr => tr.textContent.includes('answering')).click()")
        detail = str(
            wait_for(
                page,
                "document.getElementById('detail').innerText.includes('Why it failed') &&"
                " document.getElementById('detail').innerText",
            )
        )
        assert "Why it failed: 2 check(s)" in detail
        assert "turn 1: output.equals" in detail
        assert "scenario: golden" in detail
        assert page.evaluate("document.querySelectorAll('#detail .check.failed .diff .add').length") >= 2
        assert "Retry prompt for tool bash" in detail
        assert "Thinking (" in detail  # the thought, folded
        assert "Instructions the model got" in detail
        assert "1 req · 150 in / 6 out tokens" in detail  # usage per response
        shot = browser_screenshot(page, "report-failed-scenario.png")
        assert shot.stat().st_size > 10_000
        page.evaluate(
            "[...document.querySelectorAll('#detail h3')].find(h => h.textContent.startsWith('Conversation'))"
            ".scrollIntoView()"
        )
        wait_for(page, "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))")
        browser_screenshot(page, "report-conversation.png")
        assert page.console_errors == []
    finally:
        page.close()


def browser_screenshot(page: Page, name: str) -> Path:
    return page.screenshot(ARTIFACTS / name)


def test_the_baseline_page_shows_which_scenario_changed_and_how(browser: Chromium, runs: Runs, tmp_path: Path) -> None:
    target = tmp_path / "upgrade.html"
    assert run_cli("report", str(runs.candidate), "--baseline", str(runs.baseline), "-o", str(target)) == 0
    page = open_page(browser, target, "#answering")
    try:
        detail = str(
            wait_for(
                page,
                "document.getElementById('detail').innerText.includes('Against the baseline') &&"
                " document.getElementById('detail').innerText",
            )
        )
        assert "(changed)" in detail
        assert "Nothing is here." in detail
        click_filter(page, "changed")
        assert visible_names(page) == ["answering"]
        _assert_stands_alone(page, target)
    finally:
        page.close()


def test_the_matrix_page_shows_side_by_side_which_scenario_broke(browser: Chromium, runs: Runs, tmp_path: Path) -> None:
    out = tmp_path / "matrix"
    for version, source in (("2.38.0", runs.baseline), ("2.68.0", runs.candidate)):
        shutil.copytree(source, out / version)
    build_report(
        [load_version_output(v, out / v, exit_code=0) for v in ("2.38.0", "2.68.0")],
        python_version="3.11",
        paths=["scenarios"],
        out=out,
    )
    page = open_page(browser, out / "compatibility.html")
    try:
        assert "1 regression(s)" in page.evaluate("document.querySelector('h1').textContent")
        click_filter(page, "regressions")
        assert visible_names(page) == ["answering"]
        page.evaluate(f"{VISIBLE_ROWS}[0].click()")
        wait_for(page, "document.querySelectorAll('#detail .side > div').length === 2")
        columns = page.evaluate("[...document.querySelectorAll('#detail .side > div')].map(d => d.innerText)")
        assert columns[0].startswith("2.38.0")
        assert "passed" in columns[0]
        assert columns[1].startswith("2.68.0")
        assert "failed" in columns[1]
        assert "output.equals" in columns[1]
        assert page.evaluate("document.querySelectorAll('#detail .diff .add').length") >= 1
        browser_screenshot(page, "compatibility-regression.png")
        assert page.console_errors == []
        assert {url.split("#")[0] for url in page.requests} <= {(out / "compatibility.html").resolve().as_uri()}
    finally:
        page.close()


def test_compaction_interruption_deferral_and_the_stream_show_in_the_transcript(
    browser: Chromium, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    chosen = ["compaction_threshold", "abort_partial_text", "deferred_tool", "streamed_deltas"]
    paths = [str(REPOSITORY / "scenarios" / f"{name}.yaml") for name in chosen]
    assert run_cli("run", *paths, "--out", str(out), "-q") == 0
    report = out / "report.html"

    def detail(name: str) -> str:
        page = open_page(browser, report, f"#{name}")
        try:
            text = str(
                wait_for(page, "document.querySelector('#detail h2') && document.getElementById('detail').innerText")
            )
            assert page.console_errors == []
            return text
        finally:
            page.close()

    compaction = detail("compaction-threshold")
    assert "Compaction" in compaction
    assert "the 2 messages above were summarized for the model" in compaction
    assert "The user is preparing release 2.1" in compaction  # what they were summarized as
    assert "(summarized for the model)" in compaction
    interrupted = detail("abort-partial-text")
    assert "interrupted" in interrupted
    assert "[INTERRUPTED]" in interrupted
    assert "deferred then success" in detail("deferred-tool-resume").replace("\n", " ")
    assert "Event timeline (streamed:" in detail("streamed-deltas")
