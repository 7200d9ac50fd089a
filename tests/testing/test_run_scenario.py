"""`agentrig.testing.run_scenario`: a scenario inside a user's own test, against their agent object and deps."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml  # also shared by pytester's inner sessions
from pydantic_ai import Agent, RunContext

from agentrig.errors import ScenarioError
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.testing import (
    ScenarioRun,
    assert_tool_called,
    assert_tool_calls_in_order,
    load_scenario,
    run_scenario,
    run_scenario_async,
)

pytest_plugins = ["pytester"]


@dataclass
class Bank:
    balances: dict[str, float]


bank_agent = Agent(None, deps_type=Bank, instructions="You are a bank.")


@bank_agent.tool
def balance(ctx: RunContext[Bank], customer: str) -> str:
    return f"${ctx.deps.balances[customer]:.2f}"


BALANCE = {
    "name": "balance",
    "turns": [
        {
            "user": "What is John's balance?",
            "model": [
                {"tool_calls": [{"id": "c1", "name": "balance", "args": {"customer": "john"}}]},
                {"expect_input": {"contains_text": ["$12.50"]}, "text": "John has $12.50."},
            ],
            "expect": {"output": {"contains": "$12.50"}, "tool_calls": {"used": ["balance"]}},
        }
    ],
    "expect": {"usage": {"requests": 2}},
}


def test_a_dict_scenario_runs_the_users_agent_with_their_deps_object() -> None:
    run = run_scenario(BALANCE, agent=bank_agent, deps=Bank({"john": 12.5}))

    run.assert_passed()
    assert run.status == "passed"
    assert run.output == "John has $12.50."
    assert run.usage.requests == 2
    assert {check.name for check in run.checks} >= {"turn 1: output.contains", "scenario: usage.requests"}
    assert [message.kind for message in run.messages] == ["request", "response", "request", "response"]
    assert_tool_called(run, "balance", {"customer": "john"})  # the assertions read a ScenarioRun as well


def test_a_failing_scenario_does_not_raise_until_assert_passed_and_then_reads_like_agentrig_run() -> None:
    run = run_scenario(BALANCE, agent=bank_agent, deps=Bank({"john": 99.0}))

    assert run.status == "failed"
    assert not run.passed
    with pytest.raises(AssertionError) as failure:
        run.assert_passed()
    text = str(failure.value)
    assert text.startswith("FAIL balance (<inline>)\n")
    assert "turn 1, step 2: input.contains_text" in text
    assert "    expected: $12.50" in text
    assert [check.name for check in run.failed_checks][:1] == ["turn 1, step 2: input.contains_text"]


def test_a_yaml_string_and_a_file_give_the_same_scenario(tmp_path: Path) -> None:
    text = """
        - name: first
          turns: [{user: hi, model: [{text: hello}], expect: {output: {equals: hello}}}]
        - name: second
          turns: [{user: hi, model: [{text: bye}]}]
        """
    file = tmp_path / "two.yaml"
    file.write_text(text.replace("\n        ", "\n"), encoding="utf-8")

    from_text = run_scenario(text, name="first")
    from_file = run_scenario(file, name="first")
    from_file_name = run_scenario(str(file), name="second")

    assert [from_text.status, from_file.status, from_file_name.status] == ["passed"] * 3
    assert without_per_run_values(from_text.messages) == without_per_run_values(from_file.messages)
    assert from_file_name.output == "bye"
    with pytest.raises(ValueError, match=r"2 scenarios; pass name= \(the scenarios given: \['first', 'second'\]\)"):
        run_scenario(file)


def test_an_invalid_inline_scenario_is_agentrigs_located_error() -> None:
    with pytest.raises(ScenarioError) as bad_field:
        load_scenario({"name": "x", "turns": [{"user": "hi", "modle": []}]})
    with pytest.raises(ScenarioError) as unknown_tool:
        load_scenario("name: y\nturns:\n  - user: hi\n    model: [{tool_calls: [{id: c1, name: lokup}]}]\n")

    assert str(bad_field.value).startswith("<inline>:")
    assert "turns[0].modle" in str(bad_field.value)
    assert str(unknown_tool.value).startswith("<inline>:4:")
    assert "the agent has no tool 'lokup'" in str(unknown_tool.value)
    # With the user's agent given, its tools are known only when it runs: the call fails the scenario instead.
    run = run_scenario(
        "name: z\nturns:\n  - user: hi\n    model: [{tool_calls: [{id: c1, name: blance}]}, {text: ok}]\n",
        agent=bank_agent,
        deps=Bank({}),
    )
    assert run.status == "failed"
    assert any("names a tool the agent has" in check.name for check in run.failed_checks)


def test_the_agent_can_be_named_as_module_attribute_and_the_run_awaited() -> None:
    async def in_a_test() -> ScenarioRun:
        return await run_scenario_async(BALANCE, agent=f"{__name__}:bank_agent", deps=Bank({"john": 12.5}))

    run = asyncio.run(in_a_test())

    run.assert_passed()
    assert_tool_calls_in_order(run, ("balance", {"customer": "john"}))


def john_bank() -> Bank:
    """Deps a scenario names as `deps: module:attribute`."""
    return Bank({"john": 12.5})


BALANCE_FILE = """\
name: balance-from-file
turns:
  - user: What is John's balance?
    model:
      - tool_calls: [{id: c1, name: balance, args: {customer: john}}]
      - text: John has $12.50.
        expect_input: {contains_text: ["$12.50"]}
"""


def test_a_scenario_file_given_an_agent_object_is_checked_against_that_agent(tmp_path: Path) -> None:
    file = tmp_path / "balance.yaml"
    file.write_text(BALANCE_FILE, encoding="utf-8")

    run = run_scenario(file, agent=bank_agent, deps=Bank({"john": 12.5}))

    run.assert_passed()  # `balance` is the given agent's tool, as with the same YAML given as text
    with pytest.raises(ScenarioError, match="the agent has no tool 'balance'"):
        run_scenario(file)  # no agent given: the file is self-contained, and has no such YAML tool


def test_deps_a_scenario_names_are_built_for_the_agent_object() -> None:
    named_deps = {**BALANCE, "deps": f"{__name__}:john_bank"}

    run = run_scenario(named_deps, agent=bank_agent)
    as_text = run_scenario(yaml.safe_dump(named_deps), agent=bank_agent)

    run.assert_passed()
    as_text.assert_passed()
    with pytest.raises(ScenarioError, match="deps are for the agent named in `agent`"):
        run_scenario(named_deps)  # without an agent, a scenario's deps have no agent to go to


def test_run_scenario_in_an_async_test_says_to_await_run_scenario_async() -> None:
    async def in_an_async_test() -> None:
        run_scenario(BALANCE, agent=bank_agent, deps=Bank({"john": 12.5}))

    with pytest.raises(RuntimeError, match=r"inside a running event loop .*`await run_scenario_async\(\.\.\.\)`"):
        asyncio.run(in_an_async_test())


def test_an_expected_error_is_typed_on_its_turn() -> None:
    run = run_scenario(
        """
        name: limited
        system_prompt: You are terse.
        turns:
          - user: hi
            model:
              - error: {kind: rate_limit, message: "429 Too Many Requests"}
            expect:
              error: {kind: rate_limit}
          - user: again
            model: [{text: fine}]
        """
    )

    run.assert_passed()
    assert run.error is None  # expected: the scenario passed
    first, second = run.turns
    assert first.error is not None
    assert (first.error.kind, first.index, first.output) == ("rate_limit", 0, None)
    assert "429 Too Many Requests" in first.error.message
    assert (second.error, second.output, second.prompt) == (None, "fine", "again")


def test_the_fixture_runs_with_the_sessions_options(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_mine="""
        from pathlib import Path

        def test_golden(agentrig_scenario):
            run = agentrig_scenario.run(
                '''
                name: greet
                turns: [{user: hi, model: [{text: hello}]}]
                expect: {golden: golden/greet.json}
                ''',
                base_dir=Path(__file__).parent,
            )
            run.assert_passed()
        """
    )

    without = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    updating = pytester.runpytest_inprocess("--agentrig-update-golden", "-p", "no:cacheprovider")
    after = pytester.runpytest_inprocess("-p", "no:cacheprovider")

    without.assert_outcomes(failed=1)
    without.stdout.fnmatch_lines(["*golden file * is missing; run with --agentrig-update-golden*"])
    updating.assert_outcomes(passed=1)
    assert (pytester.path / "golden" / "greet.json").is_file()
    after.assert_outcomes(passed=1)


def test_a_scenario_whose_extra_is_missing_skips_the_test_that_asserts_it_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # It did not run, so it did not pass: `assert_passed` skips the calling test, naming what to install.
    from agentrig.scenarios import composition_model

    _, install = composition_model.EXTRAS["harness"]
    monkeypatch.setitem(composition_model.EXTRAS, "harness", (("agentrig_no_such_module",), install))
    run = run_scenario({"name": "needs", "requires": ["harness"], "turns": [{"user": "hi", "model": [{"text": "hi"}]}]})

    assert (run.status, run.passed) == ("skipped", False)
    with pytest.raises(pytest.skip.Exception, match=r"^requires harness: pip install pydantic-ai-harness$"):
        run.assert_passed()
