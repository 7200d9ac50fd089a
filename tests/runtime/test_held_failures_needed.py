"""A run holds tool failures (`held_failures.HeldFailures`, a run capability whose hooks cost every step) only when a
tool of its agent can fail: a self-contained agent whose YAML tools all end in a rule that matches every call and
none of which `fail`s, with no output type of its own, runs without it (`yaml_tools.tools_may_fail`). Whatever can
fail still gets the first failing call in call order, however the calls finish."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache, agent_for_scenario
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import execute_scenario
from agentrig.runtime.engine.pydantic_ai_engine.yaml_tools import tools_may_fail
from agentrig.runtime.history.canonical import ToolReturnPart
from agentrig.scenarios.model import ToolSpec
from tests.runtime.engine_helpers import load_yaml


def _tool(*results: dict[str, object]) -> dict[str, ToolSpec]:
    return {"t": ToolSpec.model_validate({"results": list(results)})}


@pytest.mark.parametrize(
    ("results", "may_fail"),
    [
        pytest.param([{"return": "x"}], False, id="a return for every call"),
        pytest.param([{"when": {"a": 1}, "return": "one"}, {"return": "x"}], False, id="a catch-all after a rule"),
        pytest.param([{"retry": "again"}], False, id="a retry (pydantic-ai's signal)"),
        pytest.param([{"defer": True}], False, id="a deferral"),
        pytest.param([{"return": "no", "outcome": "failed"}], False, id="ToolFailed (the run goes on)"),
        pytest.param([{"fail": "broke"}], True, id="a fail"),
        pytest.param([{"return": "x"}, {"fail": "broke"}], True, id="a fail after a catch-all"),
        pytest.param([{"when": {"a": 1}, "return": "one"}], True, id="a call no rule matches"),
        pytest.param([{"call": 1, "return": "one"}], True, id="a second call no rule matches"),
        pytest.param([], True, id="no rules"),
    ],
)
def test_which_yaml_tools_may_fail(results: list[dict[str, object]], may_fail: bool) -> None:
    assert tools_may_fail(_tool(*results)) is may_fail


CATCH_ALL = """
name: catch-all
tools:
  t: {results: [{return: done}]}
OUTPUT
turns:
  - user: go
    model:
      - tool_calls: [{id: c1, name: t, args: {}}]
      - text: "{}"
"""


def test_an_agent_with_an_output_type_or_a_failing_tool_holds_failures(tmp_path: Path) -> None:
    plain = agent_for_scenario(load_yaml(tmp_path, CATCH_ALL.replace("OUTPUT", "")), cache=AgentCache())
    typed = CATCH_ALL.replace("OUTPUT", "output: {schema: {type: object, properties: {}}}")
    with_output = agent_for_scenario(load_yaml(tmp_path, typed, name="typed.yaml"), cache=AgentCache())
    failing = CATCH_ALL.replace("OUTPUT", "").replace("{return: done}", "{fail: broke}")
    with_fail = agent_for_scenario(load_yaml(tmp_path, failing, name="failing.yaml"), cache=AgentCache())
    assert (plain.tools_may_fail, with_output.tools_may_fail, with_fail.tools_may_fail) == (False, True, True)


RACING_FAILURES = """
name: racing-yaml-failures
tools:
  a: {results: [{return: a done}]}
  b: {results: [{fail: b broke, delay: 0.05}]}
  c: {results: [{fail: c broke}]}
turns:
  - user: go
    model:
      - tool_calls: [{id: c1, name: a, args: {}}, {id: c2, name: b, args: {}}, {id: c3, name: c, args: {}}]
      - text: never sent
"""


def test_the_first_failing_yaml_call_in_call_order_fails_the_turn(tmp_path: Path) -> None:
    # c fails first in time, b first in call order: without held failures, c's would end the run.
    execution = asyncio.run(execute_scenario(load_yaml(tmp_path, RACING_FAILURES), cache=AgentCache()))
    (turn,) = execution.turns
    assert turn.error is not None
    assert turn.error.message == "tool 'b' call #1 failed: b broke"
    results = [part for message in execution.session.messages for part in message.parts]
    outcomes = {part.tool_call_id: part.outcome for part in results if isinstance(part, ToolReturnPart)}
    assert outcomes == {"c1": "success", "c2": "failed", "c3": "interrupted"}
