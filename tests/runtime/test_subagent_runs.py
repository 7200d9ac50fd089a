"""Sub-agents reached the ways real tools reach them: picked from a dict into a local variable, streamed, built
inside the tool. The error for one left unscripted names what `agents:` takes (a module attribute), and every run
of a scripted one is exported, a failed run and a streamed run included.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import ScenarioExecution, execute_scenario
from agentrig.runtime.history.run_records import TurnRecord
from tests.runtime.engine_helpers import load_yaml

SOURCE = Path(__file__).parent / "data" / "specialists.py"
_numbers = itertools.count()


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh copy of the specialists module in tmp_path (pydantic-ai names an agent on its first run, for good)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    module = f"specialists_{os.getpid()}_{next(_numbers)}"
    shutil.copy(SOURCE, tmp_path / f"{module}.py")
    yield module
    sys.modules.pop(module, None)


def run(tmp_path: Path, text: str) -> ScenarioExecution:
    return asyncio.run(execute_scenario(load_yaml(tmp_path, text), cache=AgentCache()))


def only_turn(execution: ScenarioExecution) -> TurnRecord:
    (turn,) = execution.turns
    return turn


def scenario(module: str, tool: str, args: str, *, agents: str = "") -> str:
    return f"""
name: desk
agent: {module}:router
{agents}
turns:
  - user: Where is my parcel?
    model:
      - tool_calls: [{{id: c1, name: {tool}, args: {args}}}]
      - text: It is on its way.
"""


SHIPPING = '{topic: shipping, question: "where is parcel 7?"}'


def test_an_unscripted_sub_agent_held_in_a_local_variable_is_named_by_its_module_attribute(
    tmp_path: Path, desk: str
) -> None:
    turn = only_turn(run(tmp_path, scenario(desk, "consult", SHIPPING)))

    assert turn.error is not None
    message = turn.error.message
    assert f"script it under `agents:` as `{desk}:shipping_specialist`" in message
    # The two specialists share the model string; only the one that asked is named.
    assert "billing_specialist" not in message
    assert "(model openai:gpt-4o)" in message
    # pydantic-ai's name for the run is the tool's local variable: never offered as what to script.
    assert "specialist_agent" not in message


def test_an_unscripted_sub_agent_no_module_attribute_holds_says_agents_cannot_reach_it(
    tmp_path: Path, desk: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")  # the tool builds its agent during the run
    turn = only_turn(run(tmp_path, scenario(desk, "consult_fresh", '{question: "why?"}')))

    assert turn.error is not None
    assert "tool 'consult_fresh' (call c1)" in turn.error.message
    assert "no module attribute holds it" in turn.error.message
    assert "`agents:`" in turn.error.message


def test_a_failed_sub_agent_run_is_exported_with_what_it_was_sent(tmp_path: Path, desk: str) -> None:
    agents = f"""agents:
  {desk}:shipping_specialist:
    model:
      - error: {{kind: server_error}}
"""
    execution = run(tmp_path, scenario(desk, "consult", SHIPPING, agents=agents))

    turn = only_turn(execution)
    assert turn.error is not None
    assert turn.error.kind == "tool_failed", turn.error
    (sub_run,) = execution.subagent_runs
    assert sub_run.spec == f"{desk}:shipping_specialist"
    assert [m.kind for m in sub_run.messages] == ["request"]


def test_a_sub_agent_run_past_the_end_of_its_script_is_exported_too(tmp_path: Path, desk: str) -> None:
    agents = f"""agents:
  {desk}:shipping_specialist:
    model:
      - text: Tuesday.
"""
    text = scenario(desk, "consult", SHIPPING, agents=agents).replace(
        "      - text: It is on its way.\n",
        f"      - tool_calls: [{{id: c2, name: consult, args: {SHIPPING}}}]\n      - text: It is on its way.\n",
    )
    execution = run(tmp_path, text)

    turn = only_turn(execution)
    assert turn.error is not None
    assert f"agent {desk}:shipping_specialist: step 2: the script has no response left" in turn.error.message
    assert [(r.run, [m.kind for m in r.messages]) for r in execution.subagent_runs] == [
        (1, ["request", "response"]),
        (2, ["request"]),
    ]


def test_a_streamed_sub_agent_run_is_exported(tmp_path: Path, desk: str) -> None:
    agents = f"""agents:
  {desk}:shipping_specialist:
    model:
      - text: Tuesday.
"""
    execution = run(tmp_path, scenario(desk, "consult_streamed", SHIPPING, agents=agents))

    assert only_turn(execution).error is None, only_turn(execution).error
    (sub_run,) = execution.subagent_runs
    assert [m.kind for m in sub_run.messages] == ["request", "response"]


def test_a_failed_sub_agent_run_is_written_under_subagents(tmp_path: Path, desk: str) -> None:
    from agentrig.runtime.runfolder.jsonio import read_json_file
    from agentrig.runtime.suite.options import RunOptions
    from agentrig.runtime.suite.outputs.reports import files_json, prepare_run_out_dir
    from agentrig.runtime.suite.scenario_run import run_one

    agents = f"""agents:
  {desk}:shipping_specialist:
    model:
      - error: {{kind: server_error}}
"""
    loaded = load_yaml(tmp_path, scenario(desk, "consult", SHIPPING, agents=agents))
    prepare_run_out_dir(tmp_path / "out")  # as a run claims its --out before a scenario writes there
    result = run_one(loaded, options=RunOptions(out_dir=tmp_path / "out"))

    assert result.status == "failed"
    exported = tmp_path / "out" / "scenarios" / "desk" / "subagents" / f"{desk}.shipping_specialist.run1.history.json"
    assert [message["kind"] for message in read_json_file(exported)["messages"]] == ["request"]
    # report.json names it (its entry's `files`), relative to the report
    assert files_json(result)["subagents"] == [str(exported.relative_to(tmp_path / "out"))]
