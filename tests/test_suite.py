"""The scenario suite (scenarios/) runs in-process on the installed pydantic-ai and every scenario passes,
with its golden history. The same goldens must pass on every pinned version (the matrix runs this test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.reports import describe_check, scenario_json
from agentrig.runtime.runner import RunOptions, SuiteResult, run_suite
from agentrig.scenarios.loader import load_paths

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "scenarios"
EXAMPLES = REPO / "examples"


def failures(suite: SuiteResult) -> str:
    lines: list[str] = []
    for result in suite.results:
        if result.status == "passed":
            continue
        lines.append(f"{result.name}: {result.status} {result.error or ''}")
        lines += [describe_check(check) for check in scenario_json(result)["checks"] if not check["passed"]]
    return "\n".join(lines)


def test_the_suite_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Run from the repository root, as CI does: `agent: examples.myapp.agents:...` imports from the CWD.
    monkeypatch.chdir(REPO)
    suite = run_suite(RunOptions(paths=(Path("scenarios"),), out_dir=tmp_path / "out"))
    assert suite.exit_code == 0, failures(suite)
    assert len(suite.results) >= 20
    assert all(result.status == "passed" for result in suite.results)


def test_every_scenario_has_a_golden_and_explicit_usage() -> None:
    loaded = load_paths([SUITE])
    for item in loaded:
        golden = item.golden_path()
        assert golden is not None, f"{item.id}: no expect.golden"
        assert golden.is_file(), f"{item.id}: {golden} missing (agentrig run --update-golden)"
        for turn_index, turn in enumerate(item.scenario.turns):
            for step_index, step in enumerate(turn.model):
                answers = step.text is not None or step.thought is not None or bool(step.tool_calls) or step.empty
                if answers:
                    where = f"{item.id} turn {turn_index + 1} step {step_index + 1}"
                    assert step.usage is not None, f"{where}: scripted steps need explicit usage"
    goldens = {path.name for path in (SUITE / "golden").glob("*.json")}
    used = {path.name for path in (item.golden_path() for item in loaded) if path is not None}
    assert goldens == used, f"golden files no scenario uses: {sorted(goldens - used)}"


def test_the_tutorial_example_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The tutorial runs from examples/, where `myapp` is importable from the CWD.
    monkeypatch.chdir(EXAMPLES)
    suite = run_suite(RunOptions(paths=(Path("scenarios"),), out_dir=tmp_path / "out"))
    assert suite.exit_code == 0, failures(suite)
    assert len(suite.results) >= 2
