"""compatibility.html in a real headless Chromium: what the matrix says of each version's environment (an
environment that could not be built, its build log, the packages beside a regression, the fields the canonical form
does not carry, a warning new on a version) is on the page, drawn from compatibility.json, without a console error."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from agentrig.runtime.matrix.compare import VersionOutput, load_version_output
from agentrig.runtime.matrix.field_inventory import FieldEntry, FieldInventory
from agentrig.runtime.matrix.report import build_report
from agentrig.runtime.matrix.run_warnings import SeenWarning
from tests.reports.browsing import ARTIFACTS, VISIBLE_ROWS, click_filter, open_page, wait_for
from tests.reports.chromium import Chromium
from tests.reports.runs import Runs, make_runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return make_runs(tmp_path_factory.mktemp("matrix-page-runs"))


def test_the_page_shows_environments_packages_fields_and_new_warnings(
    browser: Chromium, runs: Runs, tmp_path: Path
) -> None:
    out = tmp_path / "matrix"
    for version, source in (("2.68.0", runs.baseline), ("2.78.0", runs.candidate)):
        shutil.copytree(source, out / version)
    baseline, candidate = (load_version_output(v, out / v, exit_code=0) for v in ("2.68.0", "2.78.0"))
    warning = SeenWarning(
        category="DeprecatedModelWarning", message="gpt-4o is deprecated", module="pydantic_ai.providers"
    )
    outputs = [
        replace(
            baseline,
            packages={"pydantic-ai-slim": "2.68.0", "ag-ui-protocol": "0.1.22"},
            field_inventory=FieldInventory(pydantic_ai="2.68.0"),
        ),
        replace(
            candidate,
            packages={"pydantic-ai-slim": "2.78.0", "ag-ui-protocol": "1.0.0"},
            field_inventory=FieldInventory(
                pydantic_ai="2.78.0",
                fields=(
                    FieldEntry(
                        owner="response",
                        class_name="ModelResponse",
                        field="duration",
                        how="per-run",
                        reason="how long the request took",
                    ),
                ),
                unknown=(FieldEntry(owner="tool-call", class_name="ToolCallPart", field="ui_visibility"),),
            ),
            warnings={"answering": (warning,)},
        ),
        VersionOutput(
            version="9.9.9",
            directory=out / "9.9.9",
            exit_code=3,
            error="pydantic-ai 9.9.9: cannot build the environment e: no solution",
            build_error="pydantic-ai 9.9.9: cannot build the environment e: no solution",
            build_log="$ uv pip install pydantic-ai-slim==9.9.9\n  x No solution found when resolving",
        ),
    ]
    build_report(outputs, python_version="3.11", paths=["scenarios"], out=out)

    page = open_page(browser, out / "compatibility.html")
    try:
        header = page.evaluate("document.querySelector('header').innerText")
        assert page.evaluate("document.querySelector('h1').textContent").endswith(", 1 environment not built")
        assert "9.9.9: environment not built: cannot build the environment e: no solution" in header
        assert "9.9.9: 0 passed, 0 failed (not built)" in header
        assert "x No solution found when resolving" in header  # the end of its build log
        assert (
            "2.78.0: packages that differ from 2.68.0: pydantic-ai-slim 2.68.0 → 2.78.0, ag-ui-protocol 0.1.22 → 1.0.0"
            in header
        )
        assert "ag-ui-protocol 0.1.22 → 1.0.0 also changed: a difference may be theirs." in header
        assert page.evaluate("document.querySelectorAll('.env-packages > span').length") == 2  # set apart by " · "
        assert (
            "new fields not carried (absent on 2.68.0): ModelResponse.duration (per-run: how long the request" in header
        )
        assert "fields on neither of agentrig's lists: ToolCallPart.ui_visibility" in header
        assert (
            "2.78.0: new warning DeprecatedModelWarning (pydantic_ai.providers): gpt-4o is deprecated in answering"
            in header
        )
        banner = page.evaluate("document.querySelector('.banner').innerText")
        assert banner == (
            "Regressions: answering (failed on 2.78.0): ag-ui-protocol 0.1.22 → 1.0.0 also changed: "
            "the regression may be theirs."
        )
        click_filter(page, "regressions")
        page.evaluate(f"{VISIBLE_ROWS}[0].click()")
        wait_for(page, "document.querySelectorAll('#detail .side > div').length === 3")
        columns = page.evaluate("[...document.querySelectorAll('#detail .side > div')].map(d => d.innerText)")
        assert "new warning: DeprecatedModelWarning (pydantic_ai.providers): gpt-4o is deprecated" in columns[1]
        assert "environment not built: pydantic-ai 9.9.9: cannot build the environment" in columns[2]
        page.screenshot(ARTIFACTS / "compatibility-environments.png")
        assert page.console_errors == []
    finally:
        page.close()
