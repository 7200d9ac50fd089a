"""`--max-cost` with scenarios side by side: a scenario starts only while the spend so far, plus what those running
are expected to spend, stays under the budget (suite/budget.py)."""

from __future__ import annotations

from agentrig.runtime.history.run_records import Cost, ScenarioResult
from agentrig.runtime.suite.budget import RunBudget


def _spent(usd: float) -> ScenarioResult:
    cost = Cost(usd=usd, spent_usd=usd, model="openai:gpt-4o")
    return ScenarioResult(name="s", path="s.yaml", status="passed", cost=cost)


def test_the_first_scenario_runs_alone_until_its_cost_is_known() -> None:
    budget = RunBudget(3.5)
    assert budget.allows_start(0)
    assert not budget.allows_start(1)  # nothing finished: a width of 8 would otherwise start 8 blind
    budget.add(_spent(1.0))
    assert budget.allows_start(0)


def test_scenarios_start_side_by_side_while_the_expected_spend_stays_under_the_budget() -> None:
    budget = RunBudget(3.5)
    budget.add(_spent(1.0))
    assert budget.allows_start(1)  # 1.0 spent + 1 running x 1.0
    assert budget.allows_start(2)  # 3.0 expected
    assert not budget.allows_start(3)  # 4.0 expected: the fourth waits for the others
    for _ in range(3):
        budget.add(_spent(1.0))
    assert budget.exhausted
    assert not budget.allows_start(0)


def test_without_a_budget_nothing_waits() -> None:
    budget = RunBudget(None)
    assert budget.allows_start(0)
    assert budget.allows_start(50)
