"""report.html holds whatever a run's data holds without being bent by it (issue 31, items 1-3), in a real
headless Chromium: links that cannot run script, a policy that runs only the page's own script, tool call ids
named like Object's properties, hidden characters shown, names that only look like keys kept, and names that are
keys redacted without two scenarios becoming one."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
from pathlib import Path

import pytest

from agentrig.runtime.runfolder import jsonio
from tests.reports.browsing import click_filter, detail_text, open_page, visible_names, wait_for
from tests.reports.chromium import Chromium
from tests.reports.explain_runs import KEY_NAMES, WORD_NAMES, make_explain_run
from tests.reports.runs import run_cli, write_suite

HOSTILE_DIR = "javascript:window.pwned=1;"


@pytest.fixture(scope="module")
def explain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_explain_run(tmp_path_factory.mktemp("trust"))


# --- item 1: no link and no string runs script -------------------------------------------------------------------


def test_the_policy_allows_only_the_pages_own_script_by_its_hash(explain: Path) -> None:
    page = (explain / "report.html").read_text(encoding="utf-8")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    assert "unsafe-inline" not in policy.group(1)
    script = page.rsplit("<script>", 1)[1].split("</script>", 1)[0]  # the one script that is not a data block
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy.group(1)
    style = page.split("<style>", 1)[1].split("</style>", 1)[0]
    assert f"style-src 'sha256-{base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()}'" in policy.group(1)


def test_a_run_folder_named_like_a_javascript_url_gives_inert_links(browser: Chromium, tmp_path: Path) -> None:
    with contextlib.chdir(tmp_path):
        write_suite(Path("scenarios"), "The directory is empty.")
        assert run_cli("run", "scenarios/ahoy.yaml", "--out", HOSTILE_DIR, "-q") == 0
        assert run_cli("report", HOSTILE_DIR, "-o", "page.html") == 0
    page = open_page(browser, tmp_path / "page.html", "#ahoy")
    try:
        detail_text(page, "Files")
        links = page.evaluate("[...document.querySelectorAll('#detail a')].map(a => [a.getAttribute('href'), a.href])")
        assert links, "the scenario's files are linked"
        for raw, resolved in links:
            assert raw.startswith("javascript%3Awindow.pwned%3D1%3B/scenarios/ahoy/")  # every segment encoded
            assert resolved.startswith((tmp_path / "javascript:window.pwned=1;").as_uri().split("javascript")[0])
            assert resolved.startswith("file://")
        # Even a javascript: link that got into the page does not run: the policy allows only the page's script.
        page.evaluate(
            "(() => { const a = document.createElement('a'); a.href = 'javascript:window.pwned=1';"
            " document.body.appendChild(a); a.click(); })()"
        )
        wait_for(page, "new Promise(resolve => setTimeout(() => resolve(true), 200))")
        assert page.evaluate("window.pwned === undefined")
        assert page.evaluate("document.documentElement.dataset.ready")  # and the page's own script did run
    finally:
        page.close()


# --- item 2: ids named like Object's properties ------------------------------------------------------------------


def test_tool_call_ids_named_like_object_properties_keep_the_transcript(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html", "#hostile-ids")
    try:
        text = detail_text(page, "Conversation")
        for call_id in ("constructor", "toString", "__proto__"):
            assert f"Tool call probe {call_id} success" in text.replace("\n", " ")
            assert f"Tool return probe {call_id} success" in text.replace("\n", " ")
        assert page.console_errors == []
    finally:
        page.close()


# --- item 3: hidden characters, names like keys ----------------------------------------------------------------


def test_hidden_characters_are_shown_not_obeyed(browser: Chromium, explain: Path) -> None:
    page = open_page(browser, explain / "report.html", "#hostile-ids")
    try:
        detail_text(page, "Conversation")
        user = page.evaluate("[...document.querySelectorAll('#detail .part pre')][0].textContent")
        assert "\u202e" not in user
        assert "\u200b" not in user
        assert user == "Look \u27e6RLO\u27e7evil\u27e6PDF\u27e7 and zero\u27e6ZWSP\u27e7width"
        titles = page.evaluate("[...document.querySelectorAll('#detail .invisible')].map(e => e.title)")
        assert any(title.startswith("U+202E RLO right-to-left override") for title in titles)
    finally:
        page.close()


def test_names_that_only_start_like_keys_are_kept_everywhere(browser: Chromium, explain: Path) -> None:
    for file in ("report.json", "summary.md", "junit.xml", "report.html"):
        text = (explain / file).read_text(encoding="utf-8")
        assert all(name in text for name in WORD_NAMES), file
    page = open_page(browser, explain / "report.html")
    try:
        assert set(WORD_NAMES) <= set(visible_names(page))
        for number, name in ((2, WORD_NAMES[0]), (3, WORD_NAMES[1])):
            page.evaluate(f"location.hash = '#{name}'")
            assert f"prompt of learn {number}" in detail_text(page, f"prompt of learn {number}")
    finally:
        page.close()


def test_names_that_are_keys_are_redacted_and_stay_two_scenarios(browser: Chromium, explain: Path) -> None:
    for file in ("report.json", "summary.md", "junit.xml", "report.html"):
        text = (explain / file).read_text(encoding="utf-8")
        assert not any(name in text for name in KEY_NAMES), file
    report = jsonio.read_json_file(explain / "report.json")
    ids = [entry["id"] for entry in report["scenarios"]]
    assert len(set(ids)) == len(ids)
    assert {"suite/named0.yaml::[REDACTED-1]", "suite/named1.yaml::[REDACTED-2]"} <= set(ids)
    page = open_page(browser, explain / "report.html")
    try:
        click_filter(page, "passed")
        assert {"[REDACTED-1]", "[REDACTED-2]"} <= set(visible_names(page))
        for number, name in ((0, "[REDACTED-1]"), (1, "[REDACTED-2]")):
            page.evaluate(f"[...document.querySelectorAll('a.row-link')].find(a => a.textContent === '{name}').click()")
            text = detail_text(page, f"prompt of {KEY_NAMES[number].split('-')[1]} {number}")
            assert name in text.splitlines()[0]
            assert "Conversation (2 messages)" in text  # its own folder was read, though its name was redacted
        assert page.console_errors == []
    finally:
        page.close()
