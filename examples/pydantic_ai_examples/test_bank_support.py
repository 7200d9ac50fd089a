"""A user's own pytest tests of `pydantic_ai_examples.bank_support`, written with `agentrig.testing`.

Nothing here is agentrig's test suite: it is what a team that owns this agent would put beside its other tests,
with the deps its application builds (here `example_deps.bank_customer`: an in-memory SQLite database). Run by
`python -m nox -s examples` next to the YAML scenarios of this folder (docs/pytest.md).
"""

from __future__ import annotations

from collections.abc import Iterator

import example_deps  # pyright: ignore[reportMissingImports]
import pytest
from pydantic_ai.models.test import TestModel
from pydantic_ai_examples.bank_support import SupportDependencies, SupportOutput, support_agent

from agentrig.testing import (
    ScenarioRunner,
    assert_no_unknown_tools,
    assert_tool_called,
    assert_tool_calls_in_order,
    assert_usage,
    run_scenario,
)


@pytest.fixture
def deps() -> Iterator[SupportDependencies]:
    with example_deps.bank_customer() as built:
        yield built


def test_the_agent_looks_the_balance_up(deps: SupportDependencies) -> None:
    # The three lines: our agent's own run, then what it called.
    result = support_agent.run_sync("What is my balance?", deps=deps, model=TestModel())
    assert_tool_called(result, "customer_balance")
    assert_no_unknown_tools(result, known=["customer_balance"])


def test_the_balance_reaches_the_model_and_the_answer_is_structured(deps: SupportDependencies) -> None:
    # A scripted conversation against the real agent: its real tool runs against the database in `deps`.
    run = run_scenario(
        {
            "name": "balance-for-john",
            "turns": [
                {
                    "user": "What is my balance?",
                    "model": [
                        {"tool_calls": [{"id": "c1", "name": "customer_balance"}]},
                        {
                            "expect_input": {"contains_text": ["$123.45"]},
                            "tool_calls": [
                                {
                                    "id": "out",
                                    "name": "final_result",
                                    "args": {
                                        "support_advice": "John, you have $123.45.",
                                        "block_card": False,
                                        "risk": 1,
                                    },
                                }
                            ],
                        },
                    ],
                    "expect": {"output": {"type": "SupportOutput", "json_subset": {"block_card": False}}},
                }
            ],
        },
        agent=support_agent,
        deps=deps,
    )
    run.assert_passed()
    assert SupportOutput.model_validate(run.output_json).support_advice == "John, you have $123.45."
    assert_tool_calls_in_order(run, "customer_balance", ("final_result", {"risk": 1}))
    assert_usage(run, requests=2)


def test_a_lost_card_is_blocked_with_the_session_options(
    agentrig_scenario: ScenarioRunner, deps: SupportDependencies
) -> None:
    # The same API as a fixture: `pytest --agentrig-stream` runs this scenario streamed too.
    run = agentrig_scenario.run(
        """
        name: lost-card
        turns:
          - user: I just lost my card!
            model:
              - tool_calls:
                  - {id: out, name: final_result, args: {support_advice: Blocked., block_card: true, risk: 9}}
            expect:
              output: {json_subset: {block_card: true}}
              tool_calls: {not_used: [customer_balance]}
        """,
        agent=support_agent,
        deps=deps,
    )
    run.assert_passed()
    assert_usage(run, requests=1, tool_calls=0)
