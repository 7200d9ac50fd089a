"""A capability part (pydantic-ai 2.78+, enqueued by a tool) in a recorded run: a scenario steers it from the call
(`steer: [{capability: ..., from_call: ...}]`), passes against its golden on every run (the part's record id is
new each time and goldens leave it out), and `agentrig scaffold` writes that scenario from the run's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.models import pydantic_ai_compat
from agentrig.testing import run_scenario
from tests.cli.cli_helpers import run_main

SCENARIO = """\
name: capability-steer
system_prompt: You are terse.
tools:
  lookup:
    description: Look it up.
    parameters: {type: object, properties: {q: {type: string}}, required: [q]}
    results:
      - return: found
turns:
  - user: Weather in Oslo?
    steer:
      - capability:
          kind: agentrig_tests.weather
          content: sunny
          city: Oslo
          source: {source_kind: user}
          rendering: {voice: data, tag: weather, note: null, attributes: [city]}
        from_call: c1
    model:
      - tool_calls: [{id: c1, name: lookup, args: {q: oslo}}]
        usage: {input_tokens: 10, output_tokens: 5}
      - text: It is sunny.
        expect_input: {contains_text: [sunny]}
        usage: {input_tokens: 20, output_tokens: 4}
    expect:
      steering: [{text: capability agentrig_tests.weather, request: 2}]
expect:
  golden: golden/capability-steer.json
"""

needs_2_78 = pytest.mark.skipif(
    pydantic_ai_compat.PYDANTIC_AI_VERSION < (2, 78, 0), reason="pydantic-ai 2.78 added capability parts"
)


def failures(result: object) -> list[str]:
    return [f"{check.name}: {check.detail}" for check in getattr(result, "checks", ()) if not check.passed]


@needs_2_78
@pytest.mark.filterwarnings("ignore:Unknown capability part kind:UserWarning")  # pydantic-ai: no class for the kind
def test_a_capability_part_scenario_passes_against_its_golden_on_every_run(tmp_path: Path) -> None:
    scenario = tmp_path / "capability.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    first = run_scenario(scenario, update_golden=True)
    assert first.status == "passed", failures(first)
    golden = (tmp_path / "golden" / "capability-steer.json").read_text(encoding="utf-8")
    assert '"kind": "agentrig_tests.weather"' in golden
    assert "record_id" not in golden  # drawn afresh by every run
    for stream in (False, True):
        again = run_scenario(scenario, stream=stream)
        assert again.status == "passed", failures(again)


@needs_2_78
@pytest.mark.filterwarnings("ignore:Unknown capability part kind:UserWarning")
@pytest.mark.parametrize("source", ["pydantic_ai_dump.json", "history.json", "session.json"])
def test_scaffold_turns_a_recorded_capability_part_into_a_steered_one_that_replays_exactly(
    source: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "capability.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    out = tmp_path / "run"
    code, _, err = run_main(capsys, "run", str(scenario), "--update-golden", "--out", str(out), "-q")
    assert code == 0, err
    recorded = out / "scenarios" / "capability-steer" / source
    written = tmp_path / "scaffolded" / "case.yaml"
    code, _, err = run_main(capsys, "scaffold", str(recorded), "-o", str(written))
    assert code == 0, err
    text = written.read_text(encoding="utf-8")
    assert "steer:" in text
    assert "from_call: c1" in text
    replayed = tmp_path / "replayed"
    code, _, err = run_main(capsys, "run", str(written), "--out", str(replayed), "-q")
    assert code == 0, err
    (history,) = replayed.glob("scenarios/*/history.json")
    code, _, err = run_main(capsys, "diff", "-q", str(recorded.parent / "history.json"), str(history))
    assert code == 0, err


@pytest.mark.skipif(pydantic_ai_compat.PYDANTIC_AI_VERSION >= (2, 78, 0), reason="an older release's message")
def test_before_2_78_a_capability_part_is_an_error_naming_the_release_it_needs(tmp_path: Path) -> None:
    scenario = tmp_path / "capability.yaml"
    scenario.write_text(SCENARIO.replace("  golden: golden/capability-steer.json\n", "  invariants: all\n"), "utf-8")
    result = run_scenario(scenario)
    assert result.status != "passed"
    assert result.error is not None
    assert "a capability part needs pydantic-ai 2.78 or later" in result.error.message
