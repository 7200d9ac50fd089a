"""agentrig's Python API for your own tests (docs/pytest.md#the-python-api).

Assertions over any pydantic-ai run's messages (your own `agent.run`, not only agentrig's):

    from agentrig.testing import assert_tool_called

    def test_balance(deps):
        result = support_agent.run_sync("What is my balance?", deps=deps, model=TestModel())
        assert_tool_called(result, "customer_balance", {"id": 123})

A scenario inside a test, inline or from a file, against your agent object with your deps:

    run = run_scenario({"name": "balance", "turns": [...]}, agent=support_agent, deps=deps)
    run.assert_passed()

With agentrig installed, pytest also has the `agentrig_scenario` fixture: a `ScenarioRunner` using the session's
`--agentrig-*` options (stream, real model, record mode, goldens).
"""

from __future__ import annotations

from agentrig.testing.assertions import (
    ToolCall,
    assert_no_unknown_tools,
    assert_tool_called,
    assert_tool_calls_in_order,
    assert_tool_not_called,
    assert_usage,
    canonical_messages,
    tool_calls,
)
from agentrig.testing.scenarios import (
    NOT_GIVEN,
    ScenarioRun,
    ScenarioRunner,
    TurnRun,
    load_scenario,
    run_scenario,
    run_scenario_async,
)

__all__ = [
    "NOT_GIVEN",
    "ScenarioRun",
    "ScenarioRunner",
    "ToolCall",
    "TurnRun",
    "assert_no_unknown_tools",
    "assert_tool_called",
    "assert_tool_calls_in_order",
    "assert_tool_not_called",
    "assert_usage",
    "canonical_messages",
    "load_scenario",
    "run_scenario",
    "run_scenario_async",
    "tool_calls",
]
