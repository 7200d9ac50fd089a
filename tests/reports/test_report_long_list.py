"""report.html with a long list: the shown rows sit in row groups drawn only when on screen, so a sort restyles a
screenful whatever the length of the list (issue 31 asked a sort of 2,000 rows to take under 0.2 s; the time is
bench/bench_report_html.py's, this module checks what makes it: the work the browser does, counted by its own
trace, not timed), and the list still sorts, filters and moves by keyboard across the groups, with clean ARIA.

The pages are built as `agentrig report` builds them, from a run of two scenarios copied N times (as the bench
does)."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.runfolder import jsonio
from tests.reports.browsing import (
    VISIBLE_ROWS,
    axe_source,
    axe_violations,
    click_filter,
    focused,
    open_page,
    press,
    serious,
    settled,
    visible_names,
)
from tests.reports.chromium import Chromium, Page
from tests.reports.runs import run_cli

_SCENARIOS = """\
name: {name}
tags: [list]
turns:
  - user: Say {word}.
    model:
      - text: {word}
    expect:
      output: {{contains: {expected}}}
"""


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("long-list")
    with contextlib.chdir(root):
        Path("pass.yaml").write_text(_SCENARIOS.format(name="pass", word="fine", expected="fine"), encoding="utf-8")
        Path("fail.yaml").write_text(_SCENARIOS.format(name="fail", word="wrong", expected="fine"), encoding="utf-8")
        assert run_cli("run", "pass.yaml", "fail.yaml", "--out", "seed", "-q", "--no-html") == 1
    return root / "seed"


def _duration(number: int) -> float:
    return round((number * 37 % 101) / 100 + number / 10000, 4)  # distinct, in no order


def long_run(seed: Path, count: int) -> Path:
    """A run folder of `count` scenarios (every fifth failed) and its page, written by `agentrig report`."""
    report = jsonio.read_json_file(seed / "report.json")
    templates = {entry["name"]: entry for entry in report["scenarios"]}
    run = seed.parent / f"run-{count}"
    entries: list[dict[str, Any]] = []
    for number in range(count):
        template = templates["fail" if number % 5 == 2 else "pass"]
        name = f"row-{number:04d}"
        shutil.copytree(seed / str(template["output_dir"]), run / "scenarios" / name)
        entries.append(
            {**template, "name": name, "id": f"list.yaml::{name}", "duration_s": _duration(number),
             "output_dir": f"scenarios/{name}"}
        )  # fmt: skip
    summary = {**report["summary"], "total": count, "failed": count // 5, "passed": count - count // 5}
    jsonio.write_atomic(run / "report.json", jsonio.dumps({**report, "summary": summary, "scenarios": entries}))
    assert run_cli("report", str(run)) == 0
    return run / "report.html"


@pytest.fixture(scope="module")
def pages(seed: Path) -> dict[int, Path]:
    return {count: long_run(seed, count) for count in (120, 600)}


_SORT_BY_TIME = """new Promise(resolve => {
  [...document.querySelectorAll('#scenarios th button')].find(b => b.textContent === 'Time').click();
  (function settled() {  // every group filled (list.js fills those off screen in later tasks), then two frames
    if (document.querySelector('#scenarios[aria-busy]')) setTimeout(settled, 5);
    else requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 0)));
  })();
})"""


def _restyled_by_a_sort(browser: Chromium, page_path: Path) -> int:
    """How many elements the browser restyled for the first sort in a fresh tab (its trace's count)."""
    page = open_page(browser, page_path)
    try:
        events = page.trace(_SORT_BY_TIME)
        return sum(int(event["args"]["elementCount"]) for event in events if event.get("name") == "UpdateLayoutTree")
    finally:
        page.close()


def test_a_sort_restyles_a_screenful_whatever_the_length_of_the_list(browser: Chromium, pages: dict[int, Path]) -> None:
    short, long = (_restyled_by_a_sort(browser, pages[count]) for count in (120, 600))
    assert short > 0, (short, long)
    # 480 more rows: restyled, each would add at least one element (rows drawn one by one: 902 against 1,382).
    # Drawn a group at a time, only the 48 more groups' own elements are added.
    assert long - short < 100, (short, long)


def _names_on_screen(page: Page) -> list[str]:
    """The row names drawn in the list's viewport, top to bottom, as the browser hit-tests them (what a reader
    sees, not what the DOM holds)."""
    return page.evaluate(
        "(() => { const list = document.getElementById('list'), box = list.getBoundingClientRect();"
        " const head = list.querySelector('thead').getBoundingClientRect(), names = [];"
        " for (let y = head.bottom + 2; y < box.bottom - 2; y += 6) {"
        "   const row = document.elementFromPoint(box.left + 150, y)?.closest('#scenarios tbody tr');"
        "   const name = row && row.querySelector('a.row-link').textContent;"
        "   if (name && names[names.length - 1] !== name) names.push(name); }"
        " return names; })()"
    )


def test_the_rows_on_screen_are_the_sorted_ones_top_and_bottom(browser: Chromium, pages: dict[int, Path]) -> None:
    page = open_page(browser, pages[600])
    try:
        page.evaluate(_SORT_BY_TIME)
        expected = _expected_by_time(600)
        top = _names_on_screen(page)
        assert len(top) > 5
        assert top == expected[: len(top)]
        for _ in range(2):  # again once the groups drawn at the bottom have their real height
            page.evaluate(
                "new Promise(resolve => { const list = document.getElementById('list');"
                " list.scrollTop = list.scrollHeight; requestAnimationFrame(() => requestAnimationFrame(resolve)); })"
            )
        bottom = _names_on_screen(page)
        assert len(bottom) > 5
        assert bottom == expected[-len(bottom) :]
    finally:
        page.close()


def _rows_in_groups(page: Page) -> list[int]:
    return page.evaluate("[...document.querySelectorAll('#scenarios tbody:not([hidden])')].map(b => b.rows.length)")


def _expected_by_time(count: int, *, failed_only: bool = False) -> list[str]:
    numbers = [number for number in range(count) if not failed_only or number % 5 == 2]
    return [f"row-{number:04d}" for number in sorted(numbers, key=_duration)]


def test_the_long_list_sorts_and_filters_across_its_groups(browser: Chromium, pages: dict[int, Path]) -> None:
    page = open_page(browser, pages[120])
    try:
        groups = _rows_in_groups(page)
        assert sum(groups) == 120
        assert len(groups) > 2
        page.evaluate(_SORT_BY_TIME)
        assert visible_names(page) == _expected_by_time(120)
        page.evaluate(_SORT_BY_TIME)  # again: descending
        assert visible_names(page) == _expected_by_time(120)[::-1]
        click_filter(page, "failed")
        assert visible_names(page) == _expected_by_time(120, failed_only=True)[::-1]
        assert sum(_rows_in_groups(page)) == 24
        assert page.evaluate(f"{VISIBLE_ROWS}.length") == 24
        assert page.evaluate("document.querySelector('.toolbar .count').textContent") == "24 of 120 shown"
        click_filter(page, "all")
        assert visible_names(page) == _expected_by_time(120)[::-1]
    finally:
        page.close()


def _on_screen(page: Page, name: str) -> bool:
    return page.evaluate(
        "(() => { const list = document.getElementById('list').getBoundingClientRect();"
        f" const row = [...document.querySelectorAll('a.row-link')].find(a => a.textContent === {name!r})"
        ".getBoundingClientRect(); return row.top >= list.top && row.bottom <= list.bottom && row.height > 0; })()"
    )


def test_the_keyboard_moves_across_the_groups_and_axe_finds_nothing_serious(
    browser: Chromium, pages: dict[int, Path]
) -> None:
    page = open_page(browser, pages[120])
    try:
        names = visible_names(page)
        page.evaluate(
            f"[...document.querySelectorAll('a.row-link')].find(a => a.textContent === {names[18]!r}).focus()"
        )
        press(page, "ArrowDown")
        press(page, "ArrowDown")  # from the first group into the second
        assert focused(page) == f"a.row-link: {names[20]}"
        press(page, "End")
        assert focused(page) == f"a.row-link: {names[-1]}"
        assert _on_screen(page, names[-1])  # a group drawn when the focus reached it
        press(page, "ArrowUp")
        assert focused(page) == f"a.row-link: {names[-2]}"
        press(page, "Home")
        assert focused(page) == f"a.row-link: {names[0]}"
        assert _on_screen(page, names[0])
        page.evaluate(_SORT_BY_TIME)  # the focused row moves to another group: it keeps the focus
        assert focused(page) == f"a.row-link: {names[0]}"
        assert visible_names(page) == _expected_by_time(120)
        assert serious(axe_violations(page, axe_source())) == []
    finally:
        page.close()


_BUSY = "document.getElementById('scenarios').hasAttribute('aria-busy')"


def _groups_filled_in_order(page: Page) -> bool:
    """Every shown group holds as many rows as the first (list.js's GROUP_SIZE) but the last, and no hidden group
    holds any."""
    sizes = page.evaluate(
        "[...document.querySelectorAll('#scenarios tbody')].map(b => b.hidden ? -b.rows.length : b.rows.length)"
    )
    shown = [size for size in sizes if size > 0]
    return shown[0] > 1 and all(size == shown[0] for size in shown[:-1]) and not any(size < 0 for size in sizes)


def test_a_list_filled_in_later_tasks_ends_with_exactly_the_right_rows_in_order(
    browser: Chromium, pages: dict[int, Path]
) -> None:
    """600 rows, 60 groups: the groups off screen are filled after the click (list.js), and once the table is no
    longer busy it holds every shown row once, in order, and no other."""
    page = open_page(browser, pages[600])
    try:
        page.evaluate(_SORT_BY_TIME)
        assert not page.evaluate(_BUSY)
        assert visible_names(page) == _expected_by_time(600)
        assert _groups_filled_in_order(page)
        page.evaluate(_SORT_BY_TIME)
        assert visible_names(page) == _expected_by_time(600)[::-1]
        click_filter(page, "failed")
        assert visible_names(page) == _expected_by_time(600, failed_only=True)[::-1]
        assert page.evaluate("document.querySelectorAll('#scenarios tr[data-key]').length") == 120
        assert _groups_filled_in_order(page)
        click_filter(page, "all")
        assert visible_names(page) == _expected_by_time(600)[::-1]
        assert _groups_filled_in_order(page)
    finally:
        page.close()


def _status_then_name(count: int) -> list[str]:
    failed = [number for number in range(count) if number % 5 == 2]
    passed = [number for number in range(count) if number % 5 != 2]
    return [f"row-{number:04d}" for number in failed + passed]


def test_changes_made_while_the_list_is_still_filling_end_in_the_last_ones_order(
    browser: Chromium, pages: dict[int, Path]
) -> None:
    page = open_page(browser, pages[600])
    try:
        busy = page.evaluate(
            "(() => { const sort = t => [...document.querySelectorAll('#scenarios th button')]"
            ".find(b => b.textContent === t).click();"
            ' const filter = k => document.querySelector(`button[data-filter="${k}"]`).click();'
            f" sort('Time'); const busy = {_BUSY}; sort('Time'); filter('failed'); filter('all'); sort('Scenario');"
            " sort('Status'); return busy; })()"
        )
        assert busy  # the first sort left groups to fill when the next change came
        settled(page)
        assert visible_names(page) == _status_then_name(600)
        assert _groups_filled_in_order(page)
    finally:
        page.close()


def test_a_key_press_while_the_list_is_filling_fills_it_first(browser: Chromium, pages: dict[int, Path]) -> None:
    page = open_page(browser, pages[600])
    try:
        answer = page.evaluate(
            "(() => { document.querySelector('#scenarios a.row-link').focus();"
            " [...document.querySelectorAll('#scenarios th button')].find(b => b.textContent === 'Time').click();"
            f" const busy = {_BUSY};"
            " document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key: 'End', bubbles: true }));"
            f" return [busy, {_BUSY}, document.activeElement.textContent]; }})()"
        )
        assert answer == [True, False, _expected_by_time(600)[-1]]
        assert visible_names(page) == _expected_by_time(600)
    finally:
        page.close()
