"""A scenario item's limits (`max_requests` and the rest, issue 43 item 4) give the verdict `agentrig run` gives: the
plugin shares the runtime, so the same failed check and its text are the item's failure."""

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
  - user: again
    model:
      - text: hello again
expect:
  max_requests: {limit}
  max_cost_usd: 0
  max_latency_s: 600
"""


def test_an_item_over_its_request_limit_fails_as_run_says(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        {
            "scenarios/under.yaml": _SCENARIO.format(name="under", limit=2),
            "scenarios/over.yaml": _SCENARIO.format(name="over", limit=1),
        },
    )

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["FAIL over (scenarios/over.yaml)", "  scenario: max_requests", "    expected: 1", "    actual:   2",
         "    max_requests: 2 > 1"],
        consecutive=True,
    )  # fmt: skip
