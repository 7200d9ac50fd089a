"""With `--agent`, a run folder's `session.json` and `pydantic_ai_dump.json` replay exactly: the bench's path
(bench/scaffold_fidelity/) on a small representative set of agents (tests/scaffold/faithful_agents.py): deps,
dynamic instructions, a multi-turn structured output, bool and list outputs, a sub-agent, an output validator
that needed two retries, approvals, a system prompt. And what the replay checks: a changed prompt fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite
from tests.cli.cli_helpers import run_main
from tests.scaffold import faithful_agents
from tests.scaffold.replay import failures, run_scenario, scaffold_to

_MODULE = "tests.scaffold.faithful_agents"

SUITE = f"""
- name: support
  agent: {_MODULE}:support_agent
  deps: {_MODULE}:customer
  turns:
    - user: What is my balance?
      model:
        - tool_calls: [{{id: b1, name: balance}}]
          usage: {{input_tokens: 100, output_tokens: 10}}
        - tool_calls: [{{id: o1, name: final_result, args: {{advice: "John, you have $123.45.", block_card: false}}}}]
          usage: {{input_tokens: 130, output_tokens: 20}}
    - user: I lost my card!
      model:
        - tool_calls: [{{id: o2, name: final_result, args: {{advice: Blocked., block_card: true, risk: 8}}}}]
          usage: {{input_tokens: 170, output_tokens: 15}}
- name: terse
  agent: {_MODULE}:terse_agent
  turns:
    - user: Hi
      model: [{{text: Hello., usage: {{input_tokens: 5, output_tokens: 2}}}}]
    - user: Bye
      model: [{{text: Goodbye., usage: {{input_tokens: 9, output_tokens: 2}}}}]
- name: roulette
  agent: {_MODULE}:roulette_agent
  turns:
    - user: Eighteen
      model:
        - tool_calls: [{{id: s1, name: spin, args: {{square: 18}}}}]
        - tool_calls: [{{id: s2, name: final_result, args: {{response: true}}}}]
- name: numbers
  agent: {_MODULE}:numbers_agent
  turns:
    - user: Three numbers
      model:
        - tool_calls: [{{id: n1, name: final_result, args: {{response: [1, 2, 3]}}}}]
- name: search
  agent: {_MODULE}:search_agent
  settings: {{output_retries: 3}}
  agents:
    {_MODULE}:extraction_agent:
      model:
        - tool_calls:
            - id: x1
              name: final_result
              args: {{response: [{{number: AK1, destination: ANC}}, {{number: AK2, destination: FAI}}]}}
  turns:
    - user: A flight to ANC
      model:
        - tool_calls: [{{id: e1, name: extract}}]
        - tool_calls: [{{id: f1, name: final_result, args: {{number: AK2, destination: FAI}}}}]
        - tool_calls: [{{id: f2, name: final_result, args: {{number: AK2, destination: FAI}}}}]
        - tool_calls: [{{id: f3, name: final_result, args: {{number: AK1, destination: ANC}}}}]
- name: approval
  agent: {_MODULE}:approval_agent
  turns:
    - user: Delete /tmp/a and /home/thesis
      model:
        - tool_calls:
            - {{id: a1, name: delete_file, args: {{path: /tmp/a}}}}
            - {{id: a2, name: delete_file, args: {{path: /home/thesis}}}}
    - approvals: {{a1: true, a2: {{deny: Keep the thesis.}}}}
      model:
        - text: Deleted /tmp/a; kept the thesis.
"""

SCENARIOS = ("support", "terse", "roulette", "numbers", "search", "approval")
FORMS = ("session.json", "pydantic_ai_dump.json")
AGENTS = {name: f"{_MODULE}:{name}_agent" for name in SCENARIOS}
DEPS = {"support": f"{_MODULE}:customer"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`agentrig run --out`: one run folder per scenario."""
    root = tmp_path_factory.mktemp("faithful")
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    out = root / "out"
    results = run_suite(RunOptions(paths=(root / "suite.yaml",), out_dir=out)).results
    assert [r.status for r in results] == ["passed"] * len(SCENARIOS), [failures(r) for r in results]
    return out / "scenarios"


def _scaffold(runs: Path, name: str, form: str, directory: Path) -> Path:
    written = scaffold_to(runs / name / form, directory, name=name, agent=AGENTS[name], deps=DEPS.get(name))
    return written.scenario_path


def _load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return document


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", SCENARIOS)
def test_a_run_folder_replays_exactly_with_the_agent(
    runs: Path, name: str, form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = _scaffold(runs, name, form, tmp_path / "suite")
    result = run_scenario(scenario, out=tmp_path / "replay")
    assert result.status == "passed", failures(result)
    replayed = tmp_path / "replay" / "scenarios" / name / form
    code, out, _ = run_main(capsys, "diff", str(runs / name / form), str(replayed))
    assert code == 0, out


def test_expectations_fit_each_output_type(runs: Path, tmp_path: Path) -> None:
    outputs = {
        name: [
            turn["expect"].get("output") for turn in _load(_scaffold(runs, name, FORMS[1], tmp_path / name))["turns"]
        ]
        for name in ("support", "roulette", "numbers", "terse")
    }
    assert outputs["roulette"] == [{"json_equals": True}]  # not {"response": true}: what the run records
    assert outputs["numbers"] == [{"json_equals": [1, 2, 3]}]
    # the model's default (risk 0) is in the output the run records, so in the expectation
    assert outputs["support"][0] == {
        "json_equals": {"advice": "John, you have $123.45.", "block_card": False, "risk": 0}
    }
    assert outputs["terse"] == [{"equals": "Hello."}, {"equals": "Goodbye."}]


def test_the_scenario_carries_what_the_run_needed(runs: Path, tmp_path: Path) -> None:
    support = _load(_scaffold(runs, "support", "session.json", tmp_path / "support"))
    assert support["deps"] == f"{_MODULE}:customer"
    assert [turn["user"] for turn in support["turns"]] == ["What is my balance?", "I lost my card!"]

    search = _load(_scaffold(runs, "search", "pydantic_ai_dump.json", tmp_path / "search"))
    assert search["settings"] == {"output_retries": 2}  # the validator rejected twice
    (script,) = search["agents"].values()
    assert script["model"][0]["tool_calls"][0]["id"] == "x1"
    assert list(search["agents"]) == [f"{_MODULE}:extraction_agent"]

    approval = _load(_scaffold(runs, "approval", "session.json", tmp_path / "approval"))
    assert "user" not in approval["turns"][1]
    assert approval["turns"][1]["approvals"] == {"a1": True, "a2": {"deny": "Keep the thesis."}}


@pytest.mark.parametrize(
    ("name", "variable", "check"),
    [("support", "INSTRUCTIONS", "input.instructions"), ("terse", "SYSTEM_PROMPT", "input.system_prompt")],
)
def test_a_changed_prompt_fails_the_replay(
    runs: Path, name: str, variable: str, check: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = _scaffold(runs, name, "pydantic_ai_dump.json", tmp_path)
    assert run_scenario(scenario).status == "passed"
    monkeypatch.setattr(faithful_agents, variable, getattr(faithful_agents, variable) + " Be nice.")
    result = run_scenario(scenario)
    assert result.status == "failed"
    failed = [c.name for c in result.checks if not c.passed]
    assert failed, failures(result)
    assert all(name.endswith(f"step 1: {check}") for name in failed), failed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "nosuch.mod:agent"], "--agent nosuch.mod:agent: module 'nosuch.mod' not found"),
        (["--agent", f"{_MODULE}:nope"], f"--agent {_MODULE}:nope: module '{_MODULE}' has no attribute 'nope'"),
        (["--agent", f"{_MODULE}:NOT_CALLABLE"], "not a pydantic-ai Agent or a factory returning one"),
        (["--agent", f"{_MODULE}:support_agent", "--deps", f"{_MODULE}:NOT_CALLABLE"], "not a callable"),
        (["--deps", f"{_MODULE}:customer"], "--deps needs --agent"),
    ],
)
def test_a_wrong_agent_or_deps_is_refused_before_anything_is_read_or_written(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "suite" / "replay.yaml"
    # the source does not even exist: the agent is checked first
    code, out, err = run_main(capsys, "scaffold", str(tmp_path / "missing.json"), "-o", str(target), *args)
    assert (code, out) == (2, "")
    assert message in err, err
    assert err.count("\n") == 1
    assert not (tmp_path / "suite").exists()


def test_last_turns_resumes_after_a_turn_an_output_tool_ended(runs: Path, tmp_path: Path) -> None:
    # The session stores the output tool's result and the next user message in one request: the result stays
    # with the resumed history, the user message opens the scripted turn.
    written = scaffold_to(
        runs / "support" / "session.json", tmp_path, agent=AGENTS["support"], deps=DEPS["support"], last_turns=1
    )
    assert [turn["user"] for turn in _load(written.scenario_path)["turns"]] == ["I lost my card!"]
    result = run_scenario(written.scenario_path)
    assert result.status == "passed", failures(result)
