"""Issue 42 item 1, retry prompts: every retry the source's run sent the model (a list of validation errors, a
`ModelRetry`'s text, pydantic-ai's own request for output) is sent again, word for word, by the replay of its
scaffold without `--agent`, so each request after it is the same. Checked as a user would: `agentrig run --out`,
scaffold `session.json` and `pydantic_ai_dump.json`, replay, `agentrig diff` the replay's file with the source."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite
from tests.cli.cli_helpers import run_main
from tests.scaffold.replay import failures, run_scenario, scaffold_to

_MODULE = "tests.scaffold.retry_agents"

SUITE = f"""
- name: text-rejected
  agent: {_MODULE}:bare_output_agent
  settings: {{output_retries: 3}}
  turns:
    - user: A point
      model:
        - text: here is a point
        - text: '{{"x": "one", "y": 20}}'
        - text: '{{"x": 1, "y": 2}}'
    - user: Another
      model:
        - tool_calls: [{{id: p1, name: final_result, args: {{x: 3, y: 11}}}}]
        - tool_calls: [{{id: p2, name: final_result, args: {{x: 3, y: 4}}}}]
- name: tool-retries
  agent: {_MODULE}:tools_agent
  turns:
    - user: Add and look up
      model:
        - tool_calls: [{{id: a1, name: add, args: {{a: x, b: 2}}}}, {{id: l1, name: lookup, args: {{key: bad}}}}]
        - tool_calls: [{{id: a2, name: add, args: {{a: 1, b: 2}}}}, {{id: l2, name: lookup, args: {{key: good}}}}]
        - text: Not a tool call.
        - tool_calls: [{{id: f1, name: final_result, args: {{x: -1, y: 2}}}}]
        - tool_calls: [{{id: f2, name: final_result, args: {{x: 1, y: 2}}}}]
"""

SCENARIOS = ("text-rejected", "tool-retries")
FORMS = ("session.json", "pydantic_ai_dump.json")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("retries")
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    results = run_suite(RunOptions(paths=(root / "suite.yaml",), out_dir=root / "out")).results
    assert [r.status for r in results] == ["passed"] * len(SCENARIOS), [failures(r) for r in results]
    return root / "out" / "scenarios"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", SCENARIOS)
def test_each_retry_is_replayed_word_for_word(
    runs: Path, name: str, form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = scaffold_to(runs / name / form, tmp_path / "suite", name=name).scenario_path
    result = run_scenario(scenario, out=tmp_path / "replay")
    assert result.status == "passed", failures(result)
    replayed = tmp_path / "replay" / "scenarios" / name / form
    code, out, _ = run_main(capsys, "diff", str(runs / name / form), str(replayed))
    assert code == 0, out
