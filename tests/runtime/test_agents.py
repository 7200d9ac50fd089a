"""Agents: self-contained from YAML, the user's own by `module:attribute`, and the version-keyed cache."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai import Agent, DeferredToolRequests

from agentrig.errors import ScenarioError
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import (
    AgentCache,
    agent_for_prompt,
    agent_for_scenario,
    agent_version,
    load_user_agent,
)
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import execute_scenario
from agentrig.runtime.history.canonical import RetryPromptPart, ToolReturnPart
from agentrig.scenarios.model import Settings, ToolSpec
from tests.runtime import fixtures_agents
from tests.runtime.engine_helpers import assert_invariants, execute, load_yaml

USER_AGENT_SCENARIO = """
name: user-agent
agent: tests.runtime.fixtures_agents:{attribute}
turns:
  - user: Where is my order A-9?
    model:
      - expect_input: {{tools: [order_status, refund_policy], contains_text: ["A-9"]}}
        tool_calls: [{{id: o1, name: order_status, args: {{order_id: A-9}}}}]
      - tool_calls: [{{id: o2, name: order_status, args: {{order_id: A-1}}}}, {{id: p1, name: refund_policy}}]
      - text: Order A-1 has shipped; refunds within 30 days.
  - user: thanks
    model: [{{text: bye}}]
"""


@pytest.mark.parametrize("attribute", ["support_agent", "build_support_agent"])
def test_user_agent_runs_its_real_tools_with_the_scripted_model(tmp_path: Path, attribute: str) -> None:
    execution = execute(load_yaml(tmp_path, USER_AGENT_SCENARIO.format(attribute=attribute)))

    first, second = execution.turns
    assert first.error is None, first.error
    assert first.output == "Order A-1 has shipped; refunds within 30 days."
    assert all(check.passed for check in first.model_input_checks), first.model_input_checks
    returns = {
        p.tool_call_id: p.content
        for m in first.new_messages
        for p in m.parts
        if isinstance(p, ToolReturnPart | RetryPromptPart)
    }
    assert returns["o2"] == "shipped"
    assert returns["p1"] == "Refunds within 30 days of delivery."
    assert "unknown order 'A-9' (attempt 1)" in str(returns["o1"])
    assert {s.tool_call_id: s.status for s in first.tool_statuses} == {
        "o1": "failed",
        "o2": "completed",
        "p1": "completed",
    }
    assert second.output == "bye"
    assert_invariants(execution)


def test_user_agent_instructions_reach_the_model_every_turn(tmp_path: Path) -> None:
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    seen: list[str | None] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions)
        return ModelResponse(parts=[TextPart("ok")])

    loaded = load_yaml(tmp_path, USER_AGENT_SCENARIO.format(attribute="support_agent"))
    execution = asyncio.run(execute_scenario(loaded, model=FunctionModel(answer), cache=AgentCache()))

    assert not execution.scripted
    assert len(seen) == 2
    assert all(text and "support assistant" in text and "2026-01-15" in text for text in seen)


def test_user_agent_module_next_to_the_scenario_is_importable(tmp_path: Path) -> None:
    (tmp_path / "d1_local_agent_module.py").write_text(
        "from pydantic_ai import Agent\nagent = Agent('test', instructions='local')\n", encoding="utf-8"
    )
    loaded = load_yaml(
        tmp_path,
        """
        name: local
        agent: d1_local_agent_module:agent
        turns: [{user: hi, model: [{text: hello}]}]
        """,
    )
    (turn,) = execute(loaded).turns
    assert turn.output == "hello"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("d1_no_such_module:agent", "module 'd1_no_such_module' not found"),
        ("tests.runtime.fixtures_agents:missing", "has no attribute 'missing'"),
        ("tests.runtime.fixtures_agents:NOT_AN_AGENT", "is a int, not a pydantic-ai Agent"),
        ("tests.runtime.fixtures_agents:needs_arguments", "cannot be called without arguments"),
        ("tests.runtime.fixtures_agents:ORDERS", "is a dict, not a pydantic-ai Agent"),
    ],
)
def test_bad_agent_references_name_the_file_and_field(tmp_path: Path, spec: str, message: str) -> None:
    loaded = load_yaml(tmp_path, f"name: bad\nagent: {spec}\nturns: [{{user: hi}}]\n")
    with pytest.raises(ScenarioError) as raised:
        agent_for_scenario(loaded, cache=AgentCache())
    text = str(raised.value)
    assert message in text
    assert text.startswith(f"{loaded.path}:2: agent: ")


def test_import_error_inside_the_user_module_is_reported(tmp_path: Path) -> None:
    (tmp_path / "d1_broken_agent_module.py").write_text("import d1_dependency_that_does_not_exist\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match="importing 'd1_broken_agent_module' failed: No module named"):
        load_user_agent("d1_broken_agent_module:agent", search_paths=[tmp_path], scenario_path="s.yaml")


def test_load_user_agent_returns_the_module_level_agent() -> None:
    assert load_user_agent("tests.runtime.fixtures_agents:support_agent") is fixtures_agents.support_agent
    built = load_user_agent("tests.runtime.fixtures_agents:build_support_agent")
    assert isinstance(built, Agent)
    assert built is not fixtures_agents.support_agent


def test_self_contained_agent_output_type_allows_deferral_only_when_needed(tmp_path: Path) -> None:
    plain = load_yaml(tmp_path, "name: a\ntools: {t: {results: [{return: 1}]}}\nturns: [{user: hi}]\n", name="a.yaml")
    deferring = load_yaml(
        tmp_path, "name: b\ntools: {t: {results: [{defer: true}]}}\nturns: [{user: hi}]\n", name="b.yaml"
    )
    cache = AgentCache()

    plain_agent = agent_for_scenario(plain, cache=cache).agent
    deferring_agent = agent_for_scenario(deferring, cache=cache).agent

    assert isinstance(plain_agent, Agent)
    assert isinstance(deferring_agent, Agent)
    assert plain_agent.output_type is str
    assert DeferredToolRequests in deferring_agent.output_type  # pyright: ignore[reportOperatorIssue]


def test_agents_are_cached_by_behaviour_and_rebuilt_after_invalidate(tmp_path: Path) -> None:
    cache = AgentCache()
    loaded = load_yaml(tmp_path, "name: a\nsystem_prompt: P\nturns: [{user: hi}]\n")
    first = agent_for_scenario(loaded, cache=cache)
    second = agent_for_scenario(loaded, cache=cache)

    assert first.key == second.key
    assert first.agent is second.agent
    first.invalidate()
    assert first.key not in cache
    assert second.agent is not None
    assert len(cache) == 1


def test_agent_version_changes_with_every_setting_that_changes_behaviour() -> None:
    base = {"kind": "self-contained", "system_prompt": "P", "tools": {}, "settings": Settings()}
    reference = agent_version(**base)  # pyright: ignore[reportArgumentType]
    variants = [
        {**base, "system_prompt": "Q"},
        {**base, "tools": {"t": ToolSpec()}},
        {**base, "settings": Settings(tool_retries=3)},
        {**base, "settings": Settings(output_retries=3)},
        {**base, "settings": Settings(timeout=5)},
    ]
    versions = {agent_version(**variant) for variant in variants}  # pyright: ignore[reportArgumentType]
    assert reference not in versions
    assert len(versions) == len(variants)
    assert agent_version(**base) == reference  # pyright: ignore[reportArgumentType]
    assert agent_version(**{**base, "settings": Settings(max_iterations=3)}) == reference  # pyright: ignore[reportArgumentType]


def test_prompt_agent_is_self_contained_and_cached() -> None:
    cache = AgentCache()
    handle = agent_for_prompt("be terse", cache=cache)
    assert handle.label == "self-contained"
    assert handle.agent is agent_for_prompt("be terse", cache=cache).agent
