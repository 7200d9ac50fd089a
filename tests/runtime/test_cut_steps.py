"""A scripted `cut` step: a response the provider ends early, offline. The turn fails with `incomplete_response` as a
real cut stream does (tests/providers/test_incomplete_responses.py), streamed or not, with the same history; a
scenario that expects it passes, one that does not errors (exit 3); the tinyagent engine refuses it."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import ScenarioExecution, execute_scenario
from agentrig.runtime.engine.tinyagent_engine.execution import unsupported_features
from agentrig.runtime.history.invariants import check_invariants
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.scenarios.loader import LoadedScenario, load_scenario_file
from tests.cli.cli_helpers import run_main

SCENARIO = """\
name: cut-step
turns:
  - user: Tell me a story.
    model:
      - thought: A short one.
        text: Once upon a ti
        chunks: ["Once ", "upon ", "a ti"]
        cut: true
        usage: {input_tokens: 30, output_tokens: 4}
{expect}  - user: Go on.
    model:
      - text: The end.
        expect_input:
          contains_text: ["[INTERRUPTED] Once upon a ti"]
        usage: {input_tokens: 50, output_tokens: 2}
"""
EXPECTED = """\
    expect:
      error: {kind: incomplete_response, contains: "turn 1, step 1 ended early"}
      interrupted: true
      usage: {requests: 1, input_tokens: 30, output_tokens: 4}
"""


def _load(tmp_path: Path, *, expect: str = EXPECTED) -> LoadedScenario:
    path = tmp_path / "cut_step.yaml"
    path.write_text(SCENARIO.replace("{expect}", expect))
    (loaded,) = load_scenario_file(path)
    return loaded


def _execute(loaded: LoadedScenario, *, stream: bool) -> ScenarioExecution:
    scenario = loaded.scenario.model_copy(update={"stream": stream})
    return asyncio.run(execute_scenario(replace(loaded, scenario=scenario), cache=AgentCache()))


def test_a_cut_step_fails_its_turn_and_keeps_the_text_that_arrived_streamed_or_not(tmp_path: Path) -> None:
    loaded = _load(tmp_path)
    plain, streamed = _execute(loaded, stream=False), _execute(loaded, stream=True)
    for execution in (plain, streamed):
        first, second = execution.turns
        assert first.error is not None
        assert first.error.kind == "incomplete_response"
        assert first.error.message == (
            "agentrig-script: the response to turn 1, step 1 ended early: the stream stopped before the provider"
            " finished it (no stop reason), after 14 characters of text; the answer is incomplete"
        )
        assert first.interrupted
        assert first.output is None
        assert (first.usage.requests, first.usage.input_tokens, first.usage.output_tokens) == (1, 30, 4)
        assert second.error is None
        assert second.output == "The end."
        history = list(execution.session.messages)
        assert [m.text for m in history if m.kind == "response"] == ["[INTERRUPTED] Once upon a ti", "The end."]
        assert check_invariants(history, registry=execution.registry) == []
    # Another run draws another conversation id.
    assert without_per_run_values(streamed.session.messages) == without_per_run_values(plain.session.messages)
    assert [turn.usage for turn in streamed.turns] == [turn.usage for turn in plain.turns]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_a_scenario_that_expects_the_cut_passes_and_one_that_does_not_errors(
    stream: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for folder in ("expecting", "surprised"):
        (tmp_path / folder).mkdir()
    expecting, surprised = _load(tmp_path / "expecting").path, _load(tmp_path / "surprised", expect="").path
    flags = ["--stream"] if stream else []
    code, out, _ = run_main(capsys, "run", str(expecting), "--out", str(tmp_path / "out1"), *flags)
    assert code == 0, out
    code, out, _ = run_main(capsys, "run", str(surprised), "--out", str(tmp_path / "out2"), *flags)
    assert code == 3, out
    assert "ERROR cut-step" in out
    assert "error incomplete_response (provider error): agentrig-script: the response to turn 1, step 1" in out


def test_a_cut_step_needs_the_text_that_arrived(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad_cut.yaml"
    path.write_text("name: bad-cut\nturns:\n  - user: Hi.\n    model:\n      - thought: Hm.\n        cut: true\n")
    code, out, err = run_main(capsys, "validate", str(path))
    assert code == 2, out + err
    assert f"{path}:5:9: turns[0].model[0]: a cut step needs text" in out + err


def test_the_tinyagent_engine_refuses_a_cut_step(tmp_path: Path) -> None:
    (reason,) = unsupported_features(_load(tmp_path).scenario)
    assert reason.startswith("a `cut` step")
