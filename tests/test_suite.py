"""The scenario suite (scenarios/) runs in-process on the installed pydantic-ai and every scenario passes,
with its golden history. The same goldens must pass on every pinned version (the matrix runs this test)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentrig.runtime.reports.report_files import describe_check
from agentrig.runtime.suite.outputs.reports import scenario_json
from agentrig.runtime.suite.runner import RunOptions, SuiteResult, run_suite
from agentrig.scenarios.loader import LoadedScenario, load_paths

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
    # loop contract step 1: every request gets an 8-hex-char request_id
    request_ids = [turn.request_id for result in suite.results for turn in result.turns]
    assert all(re.fullmatch(r"[0-9a-f]{8}", request_id) for request_id in request_ids), request_ids
    assert len(set(request_ids)) == len(request_ids)


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
    goldens = {path.resolve() for path in SUITE.rglob("golden/*.json")}
    used = {path.resolve() for path in (item.golden_path() for item in loaded) if path is not None}
    used |= {
        item.resolve(golden.golden).resolve()
        for item in ui_scenarios(loaded)
        if (golden := item.scenario.expect.ui_events) is not None
    }
    assert goldens == used, f"golden files no scenario uses: {sorted(goldens - used)}"


def ui_scenarios(loaded: list[LoadedScenario]) -> list[LoadedScenario]:
    """The scenarios with UI turns, each with its golden of the adapter's events (`expect.ui_events`)."""
    with_ui = [item for item in loaded if any(turn.ui is not None for turn in item.scenario.turns)]
    for item in with_ui:
        golden = item.scenario.expect.ui_events
        assert golden is not None, f"{item.id}: UI turns and no expect.ui_events golden"
        assert item.resolve(golden.golden).is_file(), f"{item.id}: {golden.golden} missing"
    return with_ui


def test_the_tutorial_example_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The tutorial runs from examples/, where `myapp` is importable from the CWD.
    monkeypatch.chdir(EXAMPLES)
    suite = run_suite(RunOptions(paths=(Path("scenarios"),), out_dir=tmp_path / "out"))
    assert suite.exit_code == 0, failures(suite)
    assert len(suite.results) >= 2


def test_stored_history_survives_a_run_unchanged() -> None:
    """Verification checklist: a history survives load -> run -> export with identical parts and tool_call_ids."""
    from agentrig.runtime.runfolder.jsonio import read_json_file

    stored = read_json_file(SUITE / "fixtures" / "canonical-all-part-kinds.json")["messages"]
    golden = read_json_file(SUITE / "golden" / "history-roundtrip.json")["messages"]
    assert golden[: len(stored)] == stored
    assert len(golden) == len(stored) + 2  # the new request and its answer


def test_a_real_model_skips_script_only_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--model`: the script is ignored; exact usage and the golden are skipped with a reason, not failed."""
    monkeypatch.chdir(REPO)
    # pydantic-ai's TestModel stands in for a provider: it answers "success (no tool calls)".
    suite = run_suite(RunOptions(paths=(Path("scenarios/text_answer.yaml"),), model="test", out_dir=None))
    (result,) = suite.results
    by_name = {check.name: check for check in result.checks}
    for name in ("turn 1: usage.requests", "turn 1: usage.input_tokens", "scenario: golden"):
        assert by_name[name].passed, name
        assert by_name[name].skipped_reason, name
    assert not by_name["turn 1: output.equals"].passed  # output checks still apply
    assert by_name["scenario: invariant no_dangling_tool_calls"].passed
    assert result.status == "failed"
    assert suite.exit_code == 1
