"""Agents written the usual way, tested by YAML alone: deps, a model named at import, structured output,
dynamic instructions, a scripted sub-agent, approvals, retry settings, tool exceptions and factories.

Each test copies tests/runtime/data/bankbot.py under a fresh module name, so it is imported anew (with no
provider key set) by the scenario that names it.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.checks.expectations import check_scenario
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import ScenarioExecution, execute_scenario
from agentrig.runtime.history.canonical import ToolReturnPart
from agentrig.runtime.history.run_records import TurnRecord
from agentrig.scenarios.loader import LoadedScenario
from tests.runtime.engine_helpers import assert_invariants, load_yaml

SOURCE = Path(__file__).parent / "data" / "bankbot.py"
_numbers = itertools.count()


@pytest.fixture
def bank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh copy of the bank agent's module in tmp_path; no provider key in the environment."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    module = f"bankbot_{os.getpid()}_{next(_numbers)}"
    shutil.copy(SOURCE, tmp_path / f"{module}.py")
    yield module
    sys.modules.pop(module, None)


def run(loaded: LoadedScenario) -> ScenarioExecution:
    return asyncio.run(execute_scenario(loaded, cache=AgentCache()))


def failed_checks(loaded: LoadedScenario, execution: ScenarioExecution) -> list[Any]:
    checks = check_scenario(loaded, execution.turns, execution.session.messages, registry=execution.registry)
    return [c for c in checks if not c.passed]


def events(module: str) -> list[str]:
    return list(sys.modules[module].EVENTS)


def only_turn(execution: ScenarioExecution) -> TurnRecord:
    (turn,) = execution.turns
    return turn


BALANCE = """
name: balance
agent: {m}:support_agent
deps: {m}:{deps}
turns:
  - user: What is my balance?
    model:
      - expect_input:
          instructions_contain: ["You are a bank's support agent.", "The customer's name is 'John'"]
        tool_calls: [{{id: b1, name: customer_balance}}]
      - expect_input: {{contains_text: ["$123.45"]}}
        tool_calls:
          - {{id: f1, name: final_result, args: {{advice: "Hello John: $123.45", block_card: false, risk: 1}}}}
    expect:
      output:
        type: SupportOutput
        json_equals: {{advice: "Hello John: $123.45", block_card: false, risk: 1}}
        json_subset: {{block_card: false}}
        json_schema: {{type: object, required: [advice, risk], properties: {{risk: {{type: integer, maximum: 10}}}}}}
        contains: "123.45"
"""


@pytest.mark.parametrize("deps", ["bank_deps", "plain_deps", "async_deps"])
def test_deps_instructions_and_structured_output_of_an_agent_named_with_a_model_at_import(
    tmp_path: Path, bank: str, deps: str
) -> None:
    loaded = load_yaml(tmp_path, BALANCE.format(m=bank, deps=deps))
    execution = run(loaded)

    turn = only_turn(execution)
    assert turn.error is None, turn.error
    assert failed_checks(loaded, execution) == []
    assert turn.output_type == f"{bank}.SupportOutput"
    assert turn.output_json == {"advice": "Hello John: $123.45", "block_card": False, "risk": 1}
    assert turn.instructions is not None
    assert "The customer's name is 'John'" in turn.instructions
    assert execution.session.extras["last_output"] == {"type": turn.output_type, "json": turn.output_json}
    assert "OPENAI_API_KEY" not in os.environ  # the import's placeholder key is gone again
    if deps == "bank_deps":
        assert events(bank) == ["opened", "closed"]  # the context manager's exit ran after the scenario
    assert_invariants(execution)


def test_structured_output_checks_fail_on_a_different_value_or_type(tmp_path: Path, bank: str) -> None:
    text = BALANCE.format(m=bank, deps="plain_deps").replace("type: SupportOutput", "type: Failed")
    text = text.replace("json_subset: {block_card: false}", "json_subset: {block_card: true}")
    loaded = load_yaml(
        tmp_path, text.replace('json_equals: {advice: "Hello John: $123.45"', 'json_equals: {advice: "Hi"')
    )
    failed = {c.name for c in failed_checks(loaded, run(loaded))}
    assert failed == {"turn 1: output.type", "turn 1: output.json_equals", "turn 1: output.json_subset"}


def test_instructions_check_fails_when_the_instructions_lack_the_text(tmp_path: Path, bank: str) -> None:
    text = BALANCE.format(m=bank, deps="plain_deps").replace("'John'", "'Mary'")
    loaded = load_yaml(tmp_path, text)
    failed = [c.name for c in failed_checks(loaded, run(loaded))]
    assert failed == ["turn 1, step 1: input.instructions_contain"]


def test_without_deps_the_dynamic_instructions_fail_as_the_agent_would(tmp_path: Path, bank: str) -> None:
    loaded = load_yaml(tmp_path, BALANCE.format(m=bank, deps="plain_deps").replace(f"deps: {bank}:plain_deps\n", ""))
    turn = only_turn(run(loaded))
    assert turn.error is not None
    assert "NoneType" in turn.error.message


SUBAGENT = """
name: delegation
agent: {m}:support_agent
deps: {m}:plain_deps
agents:
  {m}:extractor:
    model:
      - expect_input: {{contains_text: ["paid 12 and 30"], instructions_contain: "Extract every amount."}}
        tool_calls: [{{id: x1, name: final_result, args: {{response: [12, 30]}}}}]
        usage: {{input_tokens: 7, output_tokens: 3}}
turns:
  - user: I paid 12 and 30, is that fine?
    model:
      - tool_calls: [{{id: e1, name: extract_amounts, args: {{text: "paid 12 and 30"}}}}]
        usage: {{input_tokens: 10, output_tokens: 5}}
      - expect_input: {{contains_text: ["[12,30]"]}}
        tool_calls: [{{id: f1, name: final_result, args: {{advice: "fine", block_card: false, risk: 0}}}}]
        usage: {{input_tokens: 20, output_tokens: 5}}
    expect:
      usage: {{requests: 3, input_tokens: 37, output_tokens: 13}}
      output: {{json_subset: {{advice: fine}}}}
"""


def test_a_scripted_sub_agent_answers_rolls_up_its_usage_and_exports_its_history(tmp_path: Path, bank: str) -> None:
    loaded = load_yaml(tmp_path, SUBAGENT.format(m=bank))
    execution = run(loaded)

    assert only_turn(execution).error is None, only_turn(execution).error
    assert failed_checks(loaded, execution) == []
    (sub_run,) = execution.subagent_runs
    assert sub_run.spec == f"{bank}:extractor"
    assert sub_run.run == 1
    assert [m.kind for m in sub_run.messages] == ["request", "response"]


def test_an_unscripted_sub_agent_is_refused_with_one_line_naming_it(tmp_path: Path, bank: str) -> None:
    text = SUBAGENT.format(m=bank)
    text = text[: text.index("agents:")] + text[text.index("turns:") :]
    loaded = load_yaml(tmp_path, text)
    turn = run(loaded).turns[0]

    assert turn.error is not None
    assert turn.error.kind == "tool_failed"
    assert "tool 'extract_amounts' (call e1)" in turn.error.message
    assert "ran an agent (model openai:gpt-4o-mini) with no script" in turn.error.message
    assert f"script it under `agents:` as `{bank}:extractor`" in turn.error.message
    assert {s.tool_call_id: s.status for s in turn.tool_statuses} == {"e1": "failed"}


def test_a_scripted_run_refuses_unscripted_models_even_where_requests_are_allowed(
    tmp_path: Path, bank: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic_ai.models import override_allow_model_requests

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # were the guard missing: a local refusal
    text = SUBAGENT.format(m=bank)
    loaded = load_yaml(tmp_path, text[: text.index("agents:")] + text[text.index("turns:") :])
    with override_allow_model_requests(True):  # as outside the tests: agentrig sets the guard itself
        turn = run(loaded).turns[0]
    assert turn.error is not None
    assert "ran an agent (model openai:gpt-4o-mini) with no script" in turn.error.message


def test_the_test_suite_refuses_real_model_requests() -> None:
    import pydantic_ai.models

    assert pydantic_ai.models.ALLOW_MODEL_REQUESTS is False


def test_unused_sub_agent_steps_are_a_script_mismatch(tmp_path: Path, bank: str) -> None:
    text = SUBAGENT.format(m=bank).replace(
        "        usage: {input_tokens: 7, output_tokens: 3}\n",
        "        usage: {input_tokens: 7, output_tokens: 3}\n      - text: never asked\n",
        1,
    )
    turn = run(load_yaml(tmp_path, text)).turns[0]
    assert turn.error is not None
    assert turn.error.kind == "script_mismatch"
    assert f"agent {bank}:extractor" in turn.error.message


TOOL_ERROR = """
name: tool-error
agent: {m}:support_agent
deps: {m}:plain_deps
turns:
  - user: What time is it in Atlantis?
    model:
      - tool_calls: [{{id: t1, name: local_time, args: {{zone: Atlantis/Capital}}}}]
    expect:
      error: {{kind: tool_failed, contains: "tool 'local_time' (call t1) raised LookupError"}}
      tool_calls: {{status: {{t1: failed}}}}
"""


def test_an_exception_from_a_real_tool_fails_that_call_and_names_the_tool(tmp_path: Path, bank: str) -> None:
    loaded = load_yaml(tmp_path, TOOL_ERROR.format(m=bank))
    execution = run(loaded)

    assert failed_checks(loaded, execution) == []
    turn = only_turn(execution)
    assert turn.interrupted is False
    parts = [p for m in execution.session.messages for p in m.parts]
    outcomes = [p.outcome for p in parts if isinstance(p, ToolReturnPart)]
    assert outcomes == ["failed"]
    assert_invariants(execution)


APPROVAL = """
name: approval
agent: {m}:support_agent
deps: {m}:plain_deps
turns:
  - user: I lost my card!
    model:
      - tool_calls: [{{id: a1, name: block_card, args: {{reason: lost}}}}]
  - approvals: {{a1: {decision}}}
    model:
      - expect_input: {{contains_text: ["{seen}"]}}
        tool_calls: [{{id: f1, name: final_result, args: {{advice: "done", block_card: true, risk: 8}}}}]
    expect:
      output: {{json_subset: {{block_card: true}}}}
"""


@pytest.mark.parametrize(
    ("decision", "seen", "blocked"),
    [
        ("true", "the card is blocked", ["blocked: lost"]),
        ("{args: {reason: stolen}}", "the card is blocked", ["blocked: stolen"]),
        ("false", "The tool call was denied.", []),
        ("{deny: 'ask the customer first'}", "ask the customer first", []),
    ],
)
def test_approvals_run_the_real_tool_or_deny_it(
    tmp_path: Path, bank: str, decision: str, seen: str, blocked: list[str]
) -> None:
    loaded = load_yaml(tmp_path, APPROVAL.format(m=bank, decision=decision, seen=seen))
    execution = run(loaded)

    assert [t.error for t in execution.turns] == [None, None]
    assert failed_checks(loaded, execution) == []
    assert events(bank) == blocked
    assert_invariants(execution)


def test_a_plain_result_for_a_call_awaiting_approval_is_refused(tmp_path: Path, bank: str) -> None:
    text = APPROVAL.format(m=bank, decision="true", seen="x").replace(
        "approvals: {a1: true}", "deferred_results: {a1: true}"
    )
    turn = run(load_yaml(tmp_path, text)).turns[1]
    assert turn.error is not None
    assert "a1, which asked for approval: decide under `approvals`" in turn.error.message
    assert events(bank) == []


RETRIES = """
name: retries
agent: {m}:support_agent
deps: {m}:plain_deps
settings: {{output_retries: 2}}
turns:
  - user: Is this risky?
    model:
      - tool_calls: [{{id: f1, name: final_result, args: {{advice: a, block_card: false, risk: 50}}}}]
      - tool_calls: [{{id: f2, name: final_result, args: {{advice: b, block_card: false, risk: 60}}}}]
      - expect_input: {{contains_text: ["risk is a number from 0 to 10"]}}
        tool_calls: [{{id: f3, name: final_result, args: {{advice: c, block_card: false, risk: 5}}}}]
    expect:
      output: {{json_subset: {{advice: c}}}}
"""


def test_output_retries_of_the_scenario_apply_to_the_users_agent(tmp_path: Path, bank: str) -> None:
    loaded = load_yaml(tmp_path, RETRIES.format(m=bank))
    execution = run(loaded)
    assert only_turn(execution).error is None, only_turn(execution).error
    assert failed_checks(loaded, execution) == []


def test_without_the_setting_the_agents_own_retry_budget_holds(tmp_path: Path, bank: str) -> None:
    loaded = load_yaml(tmp_path, RETRIES.format(m=bank).replace("settings: {output_retries: 2}\n", ""))
    turn = only_turn(run(loaded))
    assert turn.error is not None
    assert "output" in turn.error.message
    assert "(1)" in turn.error.message


TOOL_RETRIES = """
name: tool-retries
agent: {m}:support_agent
deps: {m}:plain_deps
settings: {{tool_retries: 2}}
turns:
  - user: Is account 7 open?
    model:
      - tool_calls: [{{id: l1, name: flaky_lookup, args: {{account: "7"}}}}]
      - tool_calls: [{{id: l2, name: flaky_lookup, args: {{account: "7"}}}}]
      - tool_calls: [{{id: l3, name: flaky_lookup, args: {{account: "7"}}}}]
      - expect_input: {{contains_text: ["7: open"]}}
        tool_calls: [{{id: f1, name: final_result, args: {{advice: open, block_card: false, risk: 0}}}}]
"""


def test_tool_retries_of_the_scenario_apply_to_the_users_agent(tmp_path: Path, bank: str) -> None:
    with_setting = only_turn(run(load_yaml(tmp_path, TOOL_RETRIES.format(m=bank))))
    sys.modules[bank].flaky_calls.clear()
    without = TOOL_RETRIES.format(m=bank).replace("settings: {tool_retries: 2}\n", "")
    turn = only_turn(run(load_yaml(tmp_path, without, name="without.yaml")))

    assert with_setting.error is None, with_setting.error
    assert turn.error is not None
    assert "exceeded max retries count of 1" in turn.error.message


PROVIDER_AT_IMPORT = """
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

agent = Agent(OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider()), instructions="Be brief.")
"""


def test_an_agent_module_building_its_provider_at_import_loads_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    module = f"provider_bot_{os.getpid()}_{next(_numbers)}"
    (tmp_path / f"{module}.py").write_text(PROVIDER_AT_IMPORT, encoding="utf-8")
    text = f"name: p\nagent: {module}:agent\nturns: [{{user: hi, model: [{{text: hello}}]}}]\n"
    try:
        execution = run(load_yaml(tmp_path, text))
    finally:
        sys.modules.pop(module, None)
    assert only_turn(execution).output == "hello"
    assert "OPENAI_API_KEY" not in os.environ


FACTORY = """
- name: first
  agent: {m}:build_agent
  turns: [{{user: hi, model: [{{text: one}}]}}]
- name: second
  agent: {m}:build_agent
  turns: [{{user: hi, model: [{{text: two}}]}}]
"""


def test_a_factory_is_called_once_per_scenario(tmp_path: Path, bank: str) -> None:
    from agentrig.scenarios.loader import load_scenario_file

    path = tmp_path / "factory.yaml"
    path.write_text(FACTORY.format(m=bank), encoding="utf-8")
    cache = AgentCache()
    first, second = load_scenario_file(path)
    outputs = [asyncio.run(execute_scenario(loaded, cache=cache)).turns[0].output for loaded in (first, second)]

    assert outputs == ["one", "two"]
    assert events(bank) == ["built", "built"]


def test_run_deps_is_the_default_for_scenarios_that_name_none(tmp_path: Path, bank: str) -> None:
    from agentrig.runtime.suite.options import RunOptions
    from agentrig.runtime.suite.scenario_run import run_one

    loaded = load_yaml(tmp_path, BALANCE.format(m=bank, deps="plain_deps").replace(f"deps: {bank}:plain_deps\n", ""))
    with_default = run_one(loaded, options=RunOptions(out_dir=None, default_deps=f"{bank}:plain_deps"))
    without = run_one(loaded, options=RunOptions(out_dir=None))
    missing = run_one(loaded, options=RunOptions(out_dir=None, default_deps=f"{bank}:no_such_builder"))

    assert (with_default.status, without.status, missing.status) == ("passed", "failed", "error")
    assert missing.error is not None
    assert f"--deps: module '{bank}' has no attribute 'no_such_builder'" in missing.error.message


def test_reports_carry_structured_output_instructions_and_sub_agent_histories(tmp_path: Path, bank: str) -> None:
    from agentrig.runtime.runfolder.jsonio import read_json_file
    from agentrig.runtime.suite.options import RunOptions
    from agentrig.runtime.suite.outputs.reports import prepare_run_out_dir, scenario_json
    from agentrig.runtime.suite.scenario_run import run_one

    loaded = load_yaml(tmp_path, SUBAGENT.format(m=bank))
    prepare_run_out_dir(tmp_path / "out")  # as a run claims its --out before a scenario writes there
    result = run_one(loaded, options=RunOptions(out_dir=tmp_path / "out"))

    turn = scenario_json(result)["turns"][0]
    assert turn["output_type"] == f"{bank}.SupportOutput"
    assert turn["output_json"] == {"advice": "fine", "block_card": False, "risk": 0}
    assert "The customer's name is 'John'" in turn["instructions"]
    exported = tmp_path / "out" / "scenarios" / "delegation" / "subagents" / f"{bank}.extractor.run1.history.json"
    assert exported.is_file()
    session = read_json_file(tmp_path / "out" / "scenarios" / "delegation" / "session.json")
    assert session["last_output"]["type"] == f"{bank}.SupportOutput"


def test_with_a_real_model_sub_agent_scripts_are_ignored_too(
    tmp_path: Path, bank: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic_ai.models.test import TestModel

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")  # a real run imports the agent with the user's keys
    loaded = load_yaml(tmp_path, SUBAGENT.format(m=bank))
    real = TestModel(call_tools=["extract_amounts"])  # the sub-agent runs on its own model: refused in the tests
    execution = asyncio.run(execute_scenario(loaded, model=real, cache=AgentCache()))
    assert execution.subagent_runs == ()
    turn = only_turn(execution)
    assert turn.error is not None
    assert f"script it under `agents:` as `{bank}:extractor`" in turn.error.message
