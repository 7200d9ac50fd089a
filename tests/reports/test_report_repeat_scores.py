"""report.html of a repeated run compared with a baseline (issue 43), in a real headless Chromium: the header shows,
as a person sees it, each scenario's pass rate with its 95% interval, its score, each judged check's pass rate and
score, and the change against the baseline run.

The runs are scripted (a scripted judge: every run of a scenario gets its verdict), four runs a scenario: the
baseline's judges pass, the new run's `refund` judge fails and its `delay` judge still passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reports.browsing import open_page, wait_for
from tests.reports.chromium import Chromium
from tests.reports.runs import run_cli

_SCENARIO = """\
name: {name}
turns:
  - user: When do I get my money back?
    model:
      - text: Your refund arrives within 5 business days.
    expect:
      judge:
        rubric: States the refund delay.
        threshold: 0.7
        script: {{pass: {passed}, score: {score}}}
"""


def _suite(directory: Path, refund: tuple[str, float], delay: tuple[str, float]) -> Path:
    directory.mkdir()
    for name, (passed, score) in (("refund", refund), ("delay", delay)):
        text = _SCENARIO.format(name=name, passed=passed, score=score)
        (directory / f"{name}.yaml").write_text(text, encoding="utf-8")
    return directory


@pytest.fixture(scope="module")
def repeated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repeat-scores")
    before = _suite(root / "before", ("true", 0.9), ("true", 0.8))
    assert run_cli("run", str(before), "--repeat", "4", "--out", str(root / "baseline"), "-q") == 0
    now = _suite(root / "now", ("false", 0.2), ("true", 0.85))
    out = ["--out", str(root / "now-out"), "-q"]
    assert run_cli("run", str(now), "--repeat", "4", "--baseline", str(root / "baseline"), *out) == 1
    return root


def test_the_header_shows_each_scenarios_score_pass_rate_and_baseline_change(browser: Chromium, repeated: Path) -> None:
    page = open_page(browser, repeated / "now-out" / "report.html")
    try:
        # innerText is the text as laid out: what CSS hides is not in it. The list must also take up room on screen.
        shown = wait_for(
            page,
            "(() => { const list = document.querySelector('ul.repeats');"
            " const box = list && list.getBoundingClientRect();"
            " return list && box.width > 0 && box.height > 0 && list.checkVisibility() && list.innerText; })()",
        )
        lines = [line.strip() for line in str(shown).splitlines() if line.strip()]
    finally:
        page.close()
    assert lines == [
        "repeats: each scenario 4 times",
        f"baseline: {repeated / 'baseline'}",
        "delay: 4/4 passed (100%, 95% CI 51%-100%), needs 100%: passed",
        "score mean 0.85 (min 0.85, median 0.85, max 0.85)",
        "vs baseline 100% (95% CI 51%-100%): pass rate +0 pts, score +0.05, intervals overlap",
        "turn 1: judge: 4/4 passed (95% CI 51%-100%), score mean 0.85 (min 0.85, median 0.85, max 0.85); vs baseline "
        "100% (95% CI 51%-100%): pass rate +0 pts, score +0.05, intervals overlap",
        "refund: 0/4 passed (0%, 95% CI 0%-49%), needs 100%: failed",
        "score mean 0.20 (min 0.20, median 0.20, max 0.20)",
        "vs baseline 100% (95% CI 51%-100%): pass rate -100 pts, score -0.70, intervals apart",
        "turn 1: judge: 0/4 passed (95% CI 0%-49%), score mean 0.20 (min 0.20, median 0.20, max 0.20); vs baseline "
        "100% (95% CI 51%-100%): pass rate -100 pts, score -0.70, intervals apart",
    ]
