"""report.html shows a person what each scenario warned about: a count under its status, a Warnings filter, the
run's count in the header and, beside the scenario, each warning with its category, module and count; a warning's
text stays text. In headless Chromium (tests/reports/browsing.py)."""

from __future__ import annotations

import textwrap
import uuid
import warnings
from pathlib import Path

import pytest

from tests.reports.browsing import (
    ARTIFACTS,
    VISIBLE_ROWS,
    axe_source,
    axe_violations,
    click_filter,
    detail_text,
    open_page,
    serious,
    visible_names,
)
from tests.reports.chromium import Chromium
from tests.reports.runs import run_cli

_HOSTILE = "</script><b>bold</b><script>window.pwned = 1</script>"

_AGENT = textwrap.dedent(
    f"""
    import warnings
    from pydantic_ai import Agent, PydanticAIDeprecationWarning

    agent = Agent(None)

    @agent.tool_plain
    def legacy() -> str:
        warnings.warn("legacy() is going away", PydanticAIDeprecationWarning)
        warnings.warn("legacy() is going away", PydanticAIDeprecationWarning)  # another place: shown twice
        warnings.warn({_HOSTILE!r}, UserWarning)
        return "ok"
    """
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run of two scenarios, one of whose agent warns (a module of a name no other test imported)."""
    directory = tmp_path_factory.mktemp("warned-run")
    module = f"page_agent_{uuid.uuid4().hex[:12]}"
    (directory / f"{module}.py").write_text(_AGENT, encoding="utf-8")
    (directory / "noisy.yaml").write_text(
        f"name: noisy\nagent: {module}:agent\nturns:\n  - user: hi\n    model:\n"
        "      - tool_calls: [{id: t1, name: legacy, args: {}}]\n      - text: done\n",
        encoding="utf-8",
    )
    (directory / "quiet.yaml").write_text(
        "name: quiet\nturns:\n  - user: hi\n    model:\n      - text: hello\n", encoding="utf-8"
    )
    with warnings.catch_warnings():  # Python's defaults, not this suite's `error`
        warnings.simplefilter("default")
        code = run_cli("run", str(directory), "--out", str(directory / "out"), "--quiet")
    assert code == 0
    return directory / "out" / "report.html", module


def test_the_page_shows_each_scenarios_warnings_beside_it(browser: Chromium, run: tuple[Path, str]) -> None:
    report, module = run
    page = open_page(browser, report)
    try:
        header = page.evaluate("document.querySelector('header.top').innerText")
        assert "warnings: 3 shown in 1 scenario" in header
        noisy_row = page.evaluate(f"{VISIBLE_ROWS}.find(tr => tr.textContent.includes('noisy')).innerText")
        assert "3 warnings" in noisy_row
        click_filter(page, "warnings")
        assert visible_names(page) == ["noisy"]
        page.evaluate("location.hash = '#noisy'")
        detail = detail_text(page, "Warnings (3)")
        assert f"PydanticAIDeprecationWarning: legacy() is going away ({module}, shown 2 times)" in detail
        assert f"UserWarning: {_HOSTILE} ({module})" in detail  # the text as it is, not markup
        assert page.evaluate("document.querySelector('#detail .warnings b') === null && window.pwned === undefined")
        page.screenshot(ARTIFACTS / "report-warnings.png")
        found = serious(axe_violations(page, axe_source()))
        assert found == [], found
        page.evaluate("location.hash = '#quiet'")
        assert "Warnings" not in detail_text(page, "quiet")
        assert page.console_errors == []
    finally:
        page.close()
