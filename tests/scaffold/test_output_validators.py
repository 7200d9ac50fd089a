"""Issue 42 item 1, value-level output expectations: with `--agent`, an output validator may change the output (the
SQL agent of pydantic-ai-examples strips the backslashes of `WHERE name = 'O\\'Brien'`), so what the output tool's
arguments say is not what the run returned. The scaffolded scenario must not expect it: its replay passes, and the
golden history still checks the arguments byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite
from tests.cli.cli_helpers import run_main
from tests.scaffold.replay import failures, run_scenario, scaffold_to

_AGENT = "tests.scaffold.retry_agents:cleaning_agent"

SUITE = rf"""
- name: cleaned
  agent: {_AGENT}
  turns:
    - user: Find O'Brien
      model:
        - tool_calls:
            - {{id: q1, name: final_result, args: '{{"sql_query": "SELECT * FROM t WHERE name = ''O\\''Brien''"}}'}}
      expect:
        output: {{json_equals: {{sql_query: "SELECT * FROM t WHERE name = 'O'Brien'"}}}}
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("validators")
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (result,) = run_suite(RunOptions(paths=(root / "suite.yaml",), out_dir=root / "out")).results
    assert result.status == "passed", failures(result)
    return root / "out" / "scenarios"


@pytest.mark.parametrize("form", ["session.json", "pydantic_ai_dump.json"])
def test_an_output_a_validator_changed_is_not_expected_from_the_arguments(
    runs: Path, form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = scaffold_to(runs / "cleaned" / form, tmp_path / "suite", name="cleaned", agent=_AGENT).scenario_path
    result = run_scenario(scenario, out=tmp_path / "replay")
    assert result.status == "passed", failures(result)
    code, out, _ = run_main(
        capsys, "diff", str(runs / "cleaned" / form), str(tmp_path / "replay/scenarios/cleaned" / form)
    )
    assert code == 0, out
