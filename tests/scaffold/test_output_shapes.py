"""Issue 42 item 1: output shapes and host decisions scaffold replays exactly, checked as a user would (`agentrig run
--out`, scaffold `session.json` and `pydantic_ai_dump.json`, replay, `agentrig diff` the replay's file with the
source's): an output tool with a custom name (with and without `--agent`), a union of output types (three output
tools, one wrapping a non-object as `{response: ...}`; without `--agent` a YAML `output.tools` list), a prompted
output with `--agent` (the model reads the output's template among the instructions, which the dump does not
record), and calls the host approved and denied in a resumed run (without `--agent`, the dump's run boundary: a
YAML tool asks for approval)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite
from tests.cli.cli_helpers import run_main
from tests.scaffold.replay import failures, run_scenario, scaffold_to

_MODULE = "tests.scaffold.output_agents"

SUITE = f"""
- name: named-output
  agent: {_MODULE}:named_output_agent
  turns:
    - user: A point
      model:
        - tool_calls: [{{id: p1, name: answer, args: {{x: 1, y: 2}}}}]
    - user: Another
      model:
        - tool_calls: [{{id: p2, name: answer, args: {{x: 3, y: 4}}}}]
- name: approved-and-denied
  agent: {_MODULE}:approving_agent
  turns:
    - user: Clean up
      model:
        - tool_calls:
            - {{id: l1, name: list_files, args: {{}}}}
            - {{id: d1, name: delete_file, args: {{path: /tmp/a}}}}
            - {{id: d2, name: delete_file, args: {{path: /tmp/b}}}}
    - approvals: {{d1: true, d2: {{deny: Keep b.}}}}
      model:
        - text: Deleted a, kept b.
    - user: And delete b now
      model:
        - tool_calls: [{{id: d3, name: delete_file, args: {{path: /tmp/b}}}}]
    - approvals: {{d3: {{deny: Still no.}}}}
      model:
        - text: Not allowed.
- name: union-output
  agent: {_MODULE}:union_output_agent
  turns:
    - user: A point
      model:
        - tool_calls: [{{id: u1, name: final_result_Point, args: {{x: a, y: 2}}}}]
        - tool_calls: [{{id: u2, name: final_result_Point, args: {{x: 1, y: 2}}}}]
    - user: Refuse
      model:
        - tool_calls: [{{id: u3, name: final_result_Refusal, args: {{reason: Not allowed}}}}]
    - user: Count
      model:
        - tool_calls: [{{id: u4, name: count, args: {{response: 3}}}}]
- name: prompted-output
  agent: {_MODULE}:prompted_output_agent
  turns:
    - user: A point
      model:
        - text: '{{"x": 1, "y": 2}}'
"""

AGENTS = {
    "named-output": "named_output_agent",
    "prompted-output": "prompted_output_agent",
    "approved-and-denied": "approving_agent",
    "union-output": "union_output_agent",
}
FORMS = ("session.json", "pydantic_ai_dump.json")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shapes")
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    results = run_suite(RunOptions(paths=(root / "suite.yaml",), out_dir=root / "out")).results
    assert [r.status for r in results] == ["passed"] * len(results), [failures(r) for r in results]
    return root / "out" / "scenarios"


def _replays_exactly(
    runs: Path, name: str, form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str | None
) -> None:
    scenario = scaffold_to(runs / name / form, tmp_path / "suite", name=name, agent=agent).scenario_path
    result = run_scenario(scenario, out=tmp_path / "replay")
    assert result.status == "passed", failures(result)
    replayed = tmp_path / "replay" / "scenarios" / name / form
    code, out, _ = run_main(capsys, "diff", str(runs / name / form), str(replayed))
    assert code == 0, out


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("with_agent", [False, True], ids=["yaml-agent", "own-agent"])
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_an_output_shape_replays_exactly(
    runs: Path, name: str, with_agent: bool, form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = f"{_MODULE}:{AGENTS[name]}" if with_agent else None
    _replays_exactly(runs, name, form, tmp_path, capsys, agent)


ASK_APPROVAL = """
name: ask-approval
tools:
  delete_file:
    results:
      - {call: 1, ask_approval: true, return: deleted a}
      - {call: 2, return: deleted b}
turns:
  - user: Delete a and b
    model:
      - tool_calls: [{id: d1, name: delete_file, args: {path: a}}]
  - approvals: {d1: true}
    model:
      - tool_calls: [{id: d2, name: delete_file, args: {path: b}}]
        expect_input: {contains_text: [deleted a]}
      - text: Both deleted.
        expect_input: {contains_text: [deleted b]}
"""


def test_a_yaml_tool_that_asks_for_approval_runs_its_rule_once_approved_keeping_its_call_number(
    tmp_path: Path,
) -> None:
    (tmp_path / "ask.yaml").write_text(ASK_APPROVAL, encoding="utf-8")
    result = run_scenario(tmp_path / "ask.yaml")
    assert result.status == "passed", failures(result)
