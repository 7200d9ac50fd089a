"""report.html for every reader (issue 31, item 5), in a real headless Chromium: every row and sort header
reachable and usable by keyboard, with table roles and aria-sort; axe-core finds no serious violation on the run
page, an open failure, the baseline page and the matrix page; the event timeline shows times, the header says a
run was streamed, the search reaches into conversations, each scenario offers its rerun command, the baseline view
shows time and token changes, and long tags wrap instead of being cut off."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentrig.runtime.matrix.compare import load_version_output
from agentrig.runtime.matrix.report import build_report
from tests.reports.browsing import (
    VISIBLE_ROWS,
    axe_source,
    axe_violations,
    detail_text,
    focused,
    open_page,
    press,
    search,
    serious,
    visible_names,
    wait_for,
)
from tests.reports.chromium import Chromium, Page
from tests.reports.explain_runs import LONG_TAGS, NEEDLE, make_explain_run
from tests.reports.runs import Runs, make_runs, run_cli


@pytest.fixture(scope="module")
def explain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_explain_run(tmp_path_factory.mktemp("usability"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return make_runs(tmp_path_factory.mktemp("usability-runs"))


@pytest.fixture(scope="module")
def upgrade(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("upgrade") / "upgrade.html"
    assert run_cli("report", str(runs.candidate), "--baseline", str(runs.baseline), "-o", str(target)) == 0
    return target


@pytest.fixture(scope="module")
def matrix(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("matrix")
    for version, source in (("2.38.0", runs.baseline), ("2.68.0", runs.candidate)):
        shutil.copytree(source, out / version)
    outputs = [load_version_output(v, out / v, exit_code=0) for v in ("2.38.0", "2.68.0")]
    build_report(outputs, python_version="3.11", paths=["scenarios"], out=out)
    return out / "compatibility.html"


def _tab_until(page: Page, wanted: str, limit: int = 40) -> str:
    for _ in range(limit):
        press(page, "Tab")
        now = focused(page)
        if now.startswith(wanted):
            return now
    raise AssertionError(f"Tab never reached {wanted!r}; the focus is on {focused(page)!r}")


def test_rows_and_sort_headers_work_from_the_keyboard(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html")
    try:
        assert page.evaluate("document.getElementById('scenarios').getAttribute('role')") == "table"
        sorts = page.evaluate("[...document.querySelectorAll('#scenarios th')].map(th => th.getAttribute('aria-sort'))")
        assert sorts[0] == "ascending"
        assert set(sorts[1:]) == {"none"}
        # Tab reaches the sort buttons; Enter sorts, and aria-sort says how.
        assert _tab_until(page, "button.sort: Scenario")
        press(page, "Enter")
        assert page.evaluate("document.querySelectorAll('#scenarios th')[1].getAttribute('aria-sort')") == "ascending"
        press(page, "Enter")
        assert page.evaluate("document.querySelectorAll('#scenarios th')[1].getAttribute('aria-sort')") == "descending"
        names = visible_names(page)
        # Tab reaches the first row; the arrows move between rows; Enter opens the one focused.
        first = _tab_until(page, "a.row-link")
        assert first == f"a.row-link: {names[0]}"
        press(page, "ArrowDown")
        press(page, "ArrowDown")
        assert focused(page) == f"a.row-link: {names[2]}"
        press(page, "ArrowUp")
        assert focused(page) == f"a.row-link: {names[1]}"
        press(page, "End")
        assert focused(page) == f"a.row-link: {names[-1]}"
        press(page, "Home")
        press(page, "ArrowDown")
        press(page, "Enter")
        assert names[1] in detail_text(page, names[1]).splitlines()[0]
        assert page.evaluate("document.querySelector('a.row-link[aria-current]').textContent") == names[1]
    finally:
        page.close()


def _assert_no_serious_violation(page: Page, source: str, where: str) -> None:
    found = serious(axe_violations(page, source))
    assert found == [], f"{where}: {found}"


def test_axe_core_finds_no_serious_violation(
    browser: Chromium, explain: Path, upgrade: Path, matrix: Path, tmp_path: Path
) -> None:
    source = axe_source()
    page = open_page(browser, explain / "report.html", "#tool-error-cause")
    try:
        detail_text(page, "Cause:")
        page.evaluate("document.querySelectorAll('#detail details').forEach(d => d.open = true)")
        _assert_no_serious_violation(page, source, "a failed scenario, every fold open")
        page.evaluate("location.hash = '#json-equals'")
        detail_text(page, "json_equals")
        _assert_no_serious_violation(page, source, "a diff")
        page.evaluate("location.hash = '#streamed-tagged'")
        detail_text(page, "Event timeline")
        page.evaluate("document.querySelectorAll('#detail details').forEach(d => d.open = true)")
        _assert_no_serious_violation(page, source, "a streamed scenario, its timeline open")
        page.evaluate("location.hash = '#agent-missing'")
        detail_text(page, "Error agent_error")
        _assert_no_serious_violation(page, source, "an errored scenario, selected")
    finally:
        page.close()
    for path, fragment in ((upgrade, "#answering"), (matrix, "#answering")):
        page = open_page(browser, path, fragment)
        try:
            wait_for(page, "document.querySelector('#detail h2')")
            _assert_no_serious_violation(page, source, path.name)
        finally:
            page.close()


def test_the_timeline_shows_when_each_event_happened(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html", "#streamed-tagged")
    try:
        assert "Event timeline (streamed:" in detail_text(page, "Event timeline")
        times = page.evaluate(
            "[...document.querySelectorAll('#detail table.events tbody tr')].map(tr => tr.cells[0].textContent)"
        )
        assert times
        assert all(time.replace(".", "", 1).isdigit() for time in times)
        assert [float(time) for time in times] == sorted(float(time) for time in times)
    finally:
        page.close()


def test_the_header_says_which_scenarios_streamed(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html")
    try:
        assert "streamed: 1 of 11 scenarios" in page.evaluate("document.querySelector('header').innerText")
    finally:
        page.close()


def test_search_finds_a_word_only_the_conversation_holds(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html")
    try:
        search(page, NEEDLE)
        assert wait_for(page, "document.querySelector('.toolbar .count').textContent.includes('by their conversation')")
        assert visible_names(page) == ["streamed-tagged"]
        page.evaluate(f"{VISIBLE_ROWS}[0].querySelector('a.row-link').click()")
        detail_text(page, "streamed-tagged")
        assert (
            page.evaluate("[...document.querySelectorAll('#detail mark.search')].map(m => m.textContent)")
            == [NEEDLE]  # in the answer, marked where it is
        )
        search(page, "json")  # a key of the stored data is no match: only names and the conversation's text count
        wait_for(page, "!document.querySelector('.toolbar .count').textContent.includes('by their conversation')")
        assert visible_names(page) == ["json-equals"]
    finally:
        page.close()


def test_each_scenario_offers_the_command_that_runs_it_again(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html", "#json-equals")
    try:
        detail_text(page, "Run it again")
        command = page.evaluate("document.querySelector('#detail input.command').value")
        assert command == "agentrig run suite/json.yaml -k json-equals"
    finally:
        page.close()


def test_the_baseline_view_shows_time_and_token_changes(browser: Chromium, upgrade: Path) -> None:
    page = open_page(browser, upgrade, "#answering")
    try:
        text = detail_text(page, "Against the baseline")
        rows = page.evaluate(
            "[...document.querySelectorAll('#detail table.deltas tbody tr')]"
            ".map(tr => [...tr.cells].map(c => c.textContent))"
        )
        assert [row[0] for row in rows] == ["duration", "requests", "input tokens", "output tokens"]
        assert rows[1][1:] == ["3", "3", "+0 (+0%)"]
        assert "Scenarios in both: time" in page.evaluate("document.querySelector('.banner').textContent")
        cell = page.evaluate("document.querySelector('tr.selected td:last-child').innerText")
        assert " s" in cell
        assert "tok" in cell
        assert "(changed)" in text
    finally:
        page.close()


# The Tags column found by its header, not by position (columns such as Cost come and go before it).
TAGS_COLUMN = "[...document.querySelectorAll('#scenarios thead th')].findIndex(th => th.textContent.startsWith('Tags'))"


def test_long_tags_wrap_inside_their_cell(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html")
    try:
        clipped = page.evaluate(
            f"(() => {{ const TAGS = {TAGS_COLUMN};"
            " const row = [...document.querySelectorAll('#scenarios tbody tr')].find(tr =>"
            " tr.querySelector('a.row-link').textContent === 'streamed-tagged'); const cell = row.cells[TAGS];"
            " const box = cell.getBoundingClientRect(); return [...cell.querySelectorAll('.tag')].filter(tag => {"
            " const r = tag.getBoundingClientRect(); return r.right > box.right + 0.5 || tag.scrollWidth >"
            " tag.clientWidth + 1; }).map(tag => tag.textContent); })()"
        )
        assert clipped == []
        shown = page.evaluate(
            f"[...document.querySelectorAll('#scenarios tbody tr')].find(tr => tr.querySelector('a.row-link')"
            f".textContent === 'streamed-tagged').cells[{TAGS_COLUMN}].innerText"
        )
        assert all(tag in shown for tag in LONG_TAGS)
    finally:
        page.close()
