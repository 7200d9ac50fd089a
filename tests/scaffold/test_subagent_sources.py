"""Issue 42 item 1, a sub-agent seen only in a dump or a session: a tool that delegates to another agent
(`usage=ctx.usage`) leaves only the calling agent's messages in the run's files. Beside its run folder's
`subagents/`, scaffold `--agent` scripts the sub-agent from its recorded runs; a copy with no `subagents/` beside it
is refused with `--agent` (the real tool would run the sub-agent with nothing to answer it), naming the tool, the
sub-agent and what to do; without `--agent` the YAML tool returns what the tool returned, and the replay is exact."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentrig.runtime.scaffold import Unreplayable
from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite
from tests.cli.cli_helpers import run_main
from tests.scaffold.replay import failures, run_scenario, scaffold_to

_MODULE = "tests.scaffold.faithful_agents"
_AGENT = f"{_MODULE}:search_agent"

SUITE = f"""
- name: delegates
  agent: {_AGENT}
  agents:
    {_MODULE}:extraction_agent:
      model:
        - tool_calls: [{{id: x1, name: final_result, args: {{response: [{{number: AK1, destination: ANC}}]}}}}]
  turns:
    - user: Find me a flight to ANC
      model:
        - tool_calls: [{{id: e1, name: extract, args: {{}}}}]
        - tool_calls: [{{id: f1, name: final_result, args: {{number: AK1, destination: ANC}}}}]
"""
FORMS = ("session.json", "pydantic_ai_dump.json")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("subagents")
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (result,) = run_suite(RunOptions(paths=(root / "suite.yaml",), out_dir=root / "out")).results
    assert result.status == "passed", failures(result)
    assert (root / "out/scenarios/delegates/subagents").is_dir()
    return root / "out" / "scenarios" / "delegates"


def _alone(run: Path, form: str, tmp_path: Path) -> Path:
    """The file copied away from its run folder: no subagents/ beside it. A run's session.json names its
    history.json for its messages (docs/sessions.md), so that one goes with it."""
    (tmp_path / "copied").mkdir()
    if form == "session.json":
        shutil.copy(run / "history.json", tmp_path / "copied" / "history.json")
    return Path(shutil.copy(run / form, tmp_path / "copied" / form))


@pytest.mark.parametrize("form", FORMS)
def test_without_the_subagents_runs_scaffold_with_the_agent_refuses_naming_them(
    runs: Path, form: str, tmp_path: Path
) -> None:
    source = _alone(runs, form, tmp_path)
    with pytest.raises(Unreplayable) as refused:
        scaffold_to(source, tmp_path / "suite", name="delegates", agent=_AGENT)
    message = refused.value.message
    assert f"call 'e1' (extract) runs a tool whose code calls the agent {_MODULE}:extraction_agent" in message
    assert refused.value.hint.startswith("scaffold the run's scenario folder, whose subagents/"), message
    assert not (tmp_path / "suite").exists()


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("where", ["run-folder-with-agent", "alone-without-agent"])
def test_the_delegation_replays_exactly_from_its_run_folder_or_without_the_agent(
    runs: Path, form: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with_agent = where == "run-folder-with-agent"
    source = runs / form if with_agent else _alone(runs, form, tmp_path)
    agent = _AGENT if with_agent else None
    scenario = scaffold_to(source, tmp_path / "suite", name="delegates", agent=agent).scenario_path
    result = run_scenario(scenario, out=tmp_path / "replay")
    assert result.status == "passed", failures(result)
    replayed = tmp_path / "replay" / "scenarios" / "delegates" / "history.json"
    code, out, _ = run_main(capsys, "diff", str(runs / "history.json"), str(replayed))
    assert code == 0, out
