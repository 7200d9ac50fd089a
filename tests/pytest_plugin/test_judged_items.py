"""A scenario item's judged check (issue 43 item 1) gives the verdict `agentrig run` gives: the plugin shares the
runtime, so the scripted judge's score and reason are the item's failure text."""

from __future__ import annotations

import pytest

from tests.pytest_plugin.project import write

pytest_plugins = ["pytester"]

_SCENARIO = """\
name: {name}
turns:
  - user: hi
    model:
      - text: hello
    expect:
      judge: {{rubric: Greets warmly., threshold: 0.7, script: {{pass: true, score: {score}, reason: Curt.}}}}
"""


def test_an_item_whose_judge_scores_under_the_threshold_fails_as_run_says(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        {
            "scenarios/warm.yaml": _SCENARIO.format(name="warm", score=0.9),
            "scenarios/curt.yaml": _SCENARIO.format(name="curt", score=0.3),
        },
    )

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["FAIL curt (scenarios/curt.yaml)", "  turn 1: judge", "*score 0.3 < threshold 0.7: Curt."]
    )
