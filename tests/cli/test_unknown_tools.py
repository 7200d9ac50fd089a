"""A scripted call to a tool the agent does not have (`fetsh` for `fetch`) is never green: pydantic-ai only
answers it with "Unknown tool name", so agentrig checks for it, unless the scenario expects that call."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.checks.unknown_tool_checks import unknown_tool_checks
from agentrig.runtime.history.canonical import Message, RetryPromptPart, TextPart, ToolCallPart
from agentrig.runtime.runfolder.jsonio import read_json_file
from agentrig.scenarios.loader import load_scenario_file
from tests.cli.cli_helpers import run_main

_SELF_CONTAINED = """\
name: {name}
tools:
  fetch:
    results:
      - return: page
turns:
  - user: get it
    model:
      - tool_calls: [{{id: t1, name: fetsh, args: {{url: x}}}}]
      - text: done
{expect}"""

_USER_AGENT = """\
from pydantic_ai import Agent

agent = Agent()


@agent.tool_plain
def fetch(url: str) -> str:
    return "page"
"""


def test_validate_flags_the_call_with_a_did_you_mean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(_SELF_CONTAINED.format(name="typo", expect=""), encoding="utf-8")
    code, out, _ = run_main(capsys, "validate", str(path))
    assert code == 2
    assert out.splitlines()[0] == (
        f"error  {path}:9:37: turns[0].model[0].tool_calls[0].name: the agent has no tool 'fetsh' (did you mean "
        "'fetch'?); its tools: 'fetch' (a call meant to reach no tool is named in a tool_calls expectation)"
    )
    # `run` refuses the file the same way, before running anything
    code, _, err = run_main(capsys, "run", str(path), "--out", str(tmp_path / "out"))
    assert code == 2
    assert "the agent has no tool 'fetsh' (did you mean 'fetch'?)" in err


@pytest.mark.parametrize(
    "expect",
    [
        "    expect:\n      tool_calls: {status: {t1: failed}}\n",
        "    expect:\n      tool_calls: {used: [fetsh]}\n",
        "expect:\n  tool_calls: {sequence: [{name: fetsh}]}\n",
        "expect:\n  tool_calls: {counts: {fetsh: 1}}\n",
    ],
)
def test_a_call_the_scenario_expects_is_valid_and_passes(tmp_path: Path, expect: str) -> None:
    path = tmp_path / "intended.yaml"
    path.write_text(_SELF_CONTAINED.format(name="intended", expect=expect), encoding="utf-8")
    assert CliRunner().invoke(app, ["validate", str(path)]).exit_code == 0
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output


def test_a_users_agent_without_the_tool_fails_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "fetching_agent.py").write_text(_USER_AGENT, encoding="utf-8")
    path = tmp_path / "typo.yaml"
    path.write_text(
        _SELF_CONTAINED.format(name="typo", expect="").replace("tools:\n  fetch:\n    results:\n      - return: page\n",
                                                              "agent: fetching_agent:agent\n"),
        encoding="utf-8",
    )  # fmt: skip
    assert CliRunner().invoke(app, ["validate", str(path)]).exit_code == 0  # its tools are known only at run time
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 1, result.output
    failed = [check for check in read_json_file(out / "report.json")["scenarios"][0]["checks"] if not check["passed"]]
    assert failed == [
        {
            "name": "scenario: tool call t1 names a tool the agent has",
            "passed": False,
            "expected": ["fetch"],
            "actual": "fetsh",
            "detail": "the agent has no tool 'fetsh' (did you mean 'fetch'?); the model was told: "
            "Unknown tool name: 'fetsh'. Available tools: 'fetch'",
            "skipped_reason": None,
        }
    ]


def test_only_scripted_calls_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(_SELF_CONTAINED.format(name="typo", expect=""), encoding="utf-8")
    (loaded,) = load_scenario_file(path)
    history = [
        Message(kind="request", parts=(TextPart(content="get it"),)),
        Message(kind="response", parts=(ToolCallPart(tool_call_id="t1", tool_name="fetsh", args={}),)),
        Message(
            kind="request",
            parts=(
                RetryPromptPart(
                    content="Unknown tool name: 'fetsh'. Available tools: 'fetch'", tool_name="fetsh", tool_call_id="t1"
                ),
            ),
        ),
    ]
    assert [check.passed for check in unknown_tool_checks(loaded.scenario, history, scripted=True)] == [False]
    # a real model that invents a tool name is behaviour under test, not a typo in a script
    assert unknown_tool_checks(loaded.scenario, history, scripted=False) == []


_DELEGATING_AGENTS = """\
from pydantic_ai import Agent, RunContext

researcher = Agent()


@researcher.tool_plain
def fetch(url: str) -> str:
    return "page"


agent = Agent()


@agent.tool
async def research(ctx: RunContext[None], topic: str) -> str:
    result = await researcher.run(topic, usage=ctx.usage)
    return result.output
"""

_DELEGATING_SCENARIO = """\
name: {name}
agent: delegating_agents:agent
agents:
  delegating_agents:researcher:
    model:
      - tool_calls: [{{id: s1, name: {sub_tool}, args: {{url: x}}}}]
      - text: found it
turns:
  - user: look it up
    model:
      - tool_calls: [{{id: t1, name: research, args: {{topic: x}}}}]
      - text: done
"""


@pytest.mark.parametrize(("sub_tool", "exit_code"), [("fetsh", 1), ("fetch", 0)])
def test_a_misspelled_tool_in_a_sub_agents_script_fails_the_scenario(
    tmp_path: Path, sub_tool: str, exit_code: int
) -> None:
    (tmp_path / "delegating_agents.py").write_text(_DELEGATING_AGENTS, encoding="utf-8")
    path = tmp_path / "sub.yaml"
    path.write_text(_DELEGATING_SCENARIO.format(name="sub", sub_tool=sub_tool), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == exit_code, result.output
    failed = [check for check in read_json_file(out / "report.json")["scenarios"][0]["checks"] if not check["passed"]]
    if exit_code == 0:
        assert failed == []
        return
    assert failed == [
        {
            "name": "agent delegating_agents:researcher: tool call s1 names a tool the agent has",
            "passed": False,
            "expected": ["fetch"],
            "actual": "fetsh",
            "detail": "the agent has no tool 'fetsh' (did you mean 'fetch'?); the model was told: "
            "Unknown tool name: 'fetsh'. Available tools: 'fetch'",
            "skipped_reason": None,
        }
    ]


def test_the_scenarios_tool_call_expectations_cannot_make_a_sub_agents_typo_intended(tmp_path: Path) -> None:
    path = tmp_path / "sub.yaml"
    text = _DELEGATING_SCENARIO.format(name="sub", sub_tool="fetsh") + "expect:\n  tool_calls: {status: {s1: failed}}\n"
    path.write_text(text, encoding="utf-8")
    (loaded,) = load_scenario_file(path)
    retry = RetryPromptPart(
        content="Unknown tool name: 'fetsh'. Available tools: 'fetch'", tool_name="fetsh", tool_call_id="s1"
    )

    class Run:
        spec = "delegating_agents:researcher"
        messages = (Message(kind="request", parts=(retry,)),)

    checks = unknown_tool_checks(loaded.scenario, [], scripted=True, subagent_runs=[Run()])
    assert [(check.name, check.passed) for check in checks] == [
        ("agent delegating_agents:researcher: tool call s1 names a tool the agent has", False)
    ]
