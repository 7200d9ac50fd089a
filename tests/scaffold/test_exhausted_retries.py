"""Issue 42: a run that ran out of output retries (pydantic-ai's `Exceeded maximum output retries (N)`) scaffolds to
a scenario that replays it exactly and passes, from `session.json` and `pydantic_ai_dump.json`, with and without
`--agent`: the turn expects the error ending, and the retry limit that stopped the run is the replay's (`settings`
retries), so the replay gives up at the same call. A first turn's accepted output lets a scenario without
`--agent` infer the output's schema from `session.json` (which records none), to reject the same arguments. The
percentage agent's last rejected value is out of a range the inferred schema does not see (`-5` after `140` taught
only the maximum): the replay without `--agent` must still reject it; and where no earlier output marked the tool an
output tool (`never-accepted`, a dump of 2.38-2.68), the golden's closing return has no `tool_kind`, as the loop's."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite
from tests.cli.cli_helpers import run_main
from tests.scaffold.replay import failures, run_scenario, scaffold_to

_AGENT = "tests.scaffold.exhausted_agents:one_retry_agent"
_PERCENT = "tests.scaffold.exhausted_agents:percent_agent"

SUITE = f"""
- name: out-of-retries
  agent: {_AGENT}
  turns:
    - user: A first point
      model:
        - tool_calls: [{{id: p0, name: final_result, args: {{x: 1, y: 2}}}}]
    - user: A point
      model:
        - text: Thinking.
          tool_calls: [{{id: p1, name: final_result, args: {{x: a, y: 2}}}}]
        - tool_calls: [{{id: p2, name: final_result, args: {{x: b, y: 2}}}}]
      expect:
        error: {{kind: unexpected_model_behavior, contains: Exceeded maximum}}
- name: out-of-range
  agent: {_PERCENT}
  turns:
    - user: A first percentage
      model:
        - tool_calls: [{{id: r0, name: final_result, args: {{value: 40}}}}]
    - user: A percentage
      model:
        - tool_calls: [{{id: r1, name: final_result, args: {{value: 140}}}}]
        - tool_calls: [{{id: r2, name: final_result, args: {{value: -5}}}}]
      expect:
        error: {{kind: unexpected_model_behavior, contains: Exceeded maximum}}
- name: never-accepted
  agent: {_PERCENT}
  turns:
    - user: A percentage
      model:
        - tool_calls: [{{id: s1, name: final_result, args: {{value: 140}}}}]
        - tool_calls: [{{id: s2, name: final_result, args: {{value: -5}}}}]
      expect:
        error: {{kind: unexpected_model_behavior, contains: Exceeded maximum}}
- name: yaml-out-of-retries
  settings: {{output_retries: 2}}
  output:
    schema: {{type: object, properties: {{x: {{type: integer}}}}, required: [x]}}
  turns:
    - user: A first number
      model:
        - tool_calls: [{{id: q0, name: final_result, args: {{x: 1}}}}]
    - user: A number
      model:
        - tool_calls: [{{id: q1, name: final_result, args: {{x: a}}}}]
        - tool_calls: [{{id: q2, name: final_result, args: {{x: b}}}}]
        - tool_calls: [{{id: q3, name: final_result, args: {{x: c}}}}]
      expect:
        error: {{kind: unexpected_model_behavior}}
"""

FORMS = ("session.json", "pydantic_ai_dump.json")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("exhausted")
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    results = run_suite(RunOptions(paths=(root / "suite.yaml",), out_dir=root / "out")).results
    assert [r.status for r in results] == ["passed"] * len(results), [failures(r) for r in results]
    return root / "out" / "scenarios"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("with_agent", [False, True], ids=["yaml-agent", "own-agent"])
@pytest.mark.parametrize("name", ["out-of-retries", "out-of-range", "never-accepted", "yaml-out-of-retries"])
def test_a_run_out_of_output_retries_replays_exactly(
    runs: Path, name: str, with_agent: bool, form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if with_agent and name.startswith("yaml"):
        pytest.skip("a YAML agent has no agent to give")
    agent = (_AGENT if name == "out-of-retries" else _PERCENT) if with_agent else None
    scenario = scaffold_to(runs / name / form, tmp_path / "suite", name=name, agent=agent).scenario_path
    result = run_scenario(scenario, out=tmp_path / "replay")
    replayed = tmp_path / "replay" / "scenarios" / name / form
    code, out, _ = run_main(capsys, "diff", "-q", str(runs / name / form), str(replayed))
    assert code == 0, out
    assert result.status == "passed", (failures(result), scenario.read_text(encoding="utf-8"))
