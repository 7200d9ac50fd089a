"""Simulated users with a scripted user model (issue 43 item 3), through `agentrig run` in-process: the user model's
messages run as ordinary turns until the stop condition, the user's done or max_turns; report.json marks them; the
turn's expect holds after the last; the run's session.json scaffolds to a scenario whose replay is the same history
(`agentrig diff -q`); bad `simulate:` input is one located line. (tests/providers/test_simulated_user_provider.py
asks a real user model on the loopback server.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.runfolder import jsonio
from agentrig.testing import run_scenario
from tests.cli.cli_helpers import run_main
from tests.reports.runs import decompressed

_SCENARIO = """\
name: refund-chat
system_prompt: You are the support agent of a shop.
turns:
  - user: Hi, I returned order A-1001.
    simulate:
      persona: An impatient customer who returned order A-1001.
      goal: Learn when the refund arrives.
      max_turns: {max_turns}
      {stop}
      script: ["When do I get my money?", "Thanks, bye."]
    model:
{steps}
    expect:
      output: {{contains: "{expected}"}}
"""

_STEPS = [
    "Thanks, I see the return of order A-1001.",
    "Within 5 business days of the return arriving.",
    "You are welcome.",
]


def _write(tmp_path: Path, *, max_turns: int, stop: str = "", answers: int = 3, expected: str = "") -> Path:
    steps = "\n".join(f"      - text: {text}" for text in _STEPS[:answers])
    text = _SCENARIO.format(max_turns=max_turns, stop=stop, steps=steps, expected=expected or _STEPS[answers - 1])
    scenario = tmp_path / "refund.yaml"
    scenario.write_text(text, encoding="utf-8")
    return scenario


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: Path) -> tuple[int, dict[str, Any], Path]:
    out = tmp_path / "out"
    code, _, err = run_main(capsys, "run", str(scenario), "--out", str(out))
    assert code in (0, 1), err
    (entry,) = jsonio.read_json_file(out / "report.json")["scenarios"]
    return code, entry, out


def test_the_scripted_users_messages_are_ordinary_turns_until_the_stop_condition(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = _write(tmp_path, max_turns=5, stop="stop: {contains: business days}", answers=2)
    code, entry, out = _run(tmp_path, capsys, scenario)

    assert code == 0
    turns = entry["turns"]
    assert [(turn["index"], turn["prompt"], turn["output"]) for turn in turns] == [
        (0, "Hi, I returned order A-1001.", _STEPS[0]),
        (1, "When do I get my money?", _STEPS[1]),
    ]
    assert [turn["simulated"] for turn in turns] == [
        {"scenario_turn": 0, "exchange": 1, "user": "scenario", "ended": None},
        {"scenario_turn": 0, "exchange": 2, "user": "script", "ended": "stop"},
    ]
    # The turn's expect holds after the conversation's last turn, named as the run's turn.
    (check,) = [check for check in entry["checks"] if check["name"].endswith("output.contains")]
    assert (check["name"], check["passed"]) == ("turn 2: output.contains", True)
    history = jsonio.read_json_file(out / "scenarios" / "refund-chat" / "history.json")
    prompts = [
        part["content"]
        for message in history["messages"]
        for part in message["parts"]
        if message["kind"] == "request" and part["part_kind"] == "text"
    ]
    assert prompts == ["Hi, I returned order A-1001.", "When do I get my money?"]
    page = decompressed((out / "report.html").read_text(encoding="utf-8"))
    assert "When do I get my money?" in page  # drawn as the turn's prompt, as any turn's
    assert entry["usage"]["requests"] == 2  # the agent's: a scripted user sends no request


@pytest.mark.parametrize(
    ("max_turns", "ended", "prompts"),
    [(5, "done", 3), (2, "max_turns", 2)],
    ids=["the-user-is-done", "max-turns"],
)
def test_the_user_being_done_or_max_turns_ends_the_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], max_turns: int, ended: str, prompts: int
) -> None:
    scenario = _write(tmp_path, max_turns=max_turns, answers=prompts)
    code, entry, _ = _run(tmp_path, capsys, scenario)

    assert code == 0
    assert [turn["simulated"]["exchange"] for turn in entry["turns"]] == list(range(1, prompts + 1))
    assert entry["turns"][-1]["simulated"]["ended"] == ended


def test_agent_steps_the_conversation_does_not_reach_fail_the_scripted_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = _write(tmp_path, max_turns=5, stop="stop: {contains: business days}", answers=3, expected="5")
    code, entry, _ = _run(tmp_path, capsys, scenario)

    assert code == 1
    error = entry["turns"][-1]["error"]
    assert error["kind"] == "script_mismatch"
    assert "turn 1: 1 scripted step(s) left unused, from step 3" in error["message"]


def test_a_simulated_run_scaffolds_to_a_scenario_that_replays_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = _write(tmp_path, max_turns=5, answers=3)
    code, _, out = _run(tmp_path, capsys, scenario)
    assert code == 0
    source = out / "scenarios" / "refund-chat" / "session.json"
    scaffolded = tmp_path / "scaffolded" / "replay.yaml"

    code, _, err = run_main(capsys, "scaffold", str(source), "-o", str(scaffolded))
    assert code == 0, err
    assert "simulate" not in scaffolded.read_text(encoding="utf-8")  # ordinary turns, scripted
    replay = tmp_path / "replay"
    code, _, err = run_main(capsys, "run", str(scaffolded), "--out", str(replay))
    assert code == 0, err
    (entry,) = jsonio.read_json_file(replay / "report.json")["scenarios"]
    assert len(entry["turns"]) == 3
    code, _, err = run_main(
        capsys, "diff", "-q", str(out / "scenarios" / "refund-chat" / "history.json"),
        str(replay / "scenarios" / entry["name"] / "history.json"),
    )  # fmt: skip
    assert code == 0, err


def test_a_judge_of_the_conversation_sees_every_simulated_turn() -> None:
    run = run_scenario(
        {
            "name": "judged-chat",
            "turns": [
                {
                    "simulate": {"persona": "A customer.", "goal": "A refund date.", "script": ["When?", "Ok."]},
                    "model": [{"text": "Hello."}, {"text": "In 5 days."}],
                    "expect": {
                        "judge": {
                            "rubric": "Gives a date.",
                            "of": "conversation",
                            "script": {"pass": True, "score": 1.0},
                        }
                    },
                }
            ],
        }
    )

    assert [turn.output for turn in run.turns] == ["Hello.", "In 5 days."]
    (check,) = [check for check in run.checks if check.name.endswith("judge")]
    assert (check.name, check.passed) == ("turn 2: judge", True)


@pytest.mark.parametrize(
    ("simulate", "located"),
    [
        ("{goal: g, script: [Hi]}", "4:15: turns[0].simulate: missing required field 'persona'"),
        ("{persona: p, goal: g, max_turns: 0, script: [Hi]}", "turns[0].simulate.max_turns: Input should be greater"),
        (
            "{persona: p, goal: g, script: [Hi], model: openai:gpt-4o}",
            "4:15: turns[0].simulate: give the simulated user a model or a script, one of the two",
        ),
        ("{persona: p, goal: g, script: [Hi], stop: {}}", "turns[0].simulate.stop: a stop condition needs contains"),
        ("{persona: p, goal: g, script: [Hi], stop: {regex: '('}}", "turns[0].simulate.stop.regex: "),
    ],
    ids=["no-persona", "max-turns-0", "model-and-script", "empty-stop", "bad-regex"],
)
def test_bad_simulate_input_is_one_located_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], simulate: str, located: str
) -> None:
    scenario = tmp_path / "bad.yaml"
    scenario.write_text(f"name: bad\nturns:\n  - user: Hi\n    simulate: {simulate}\n", encoding="utf-8")

    code, _, err = run_main(capsys, "run", str(scenario), "--out", str(tmp_path / "out"))

    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"agentrig: error: {scenario}:")
    assert located in line


def test_a_simulated_turn_takes_no_ui_steering_or_cancel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "bad.yaml"
    scenario.write_text(
        "name: bad\nturns:\n  - simulate: {persona: p, goal: g, script: []}\n"
        "  - user: Hi\n    steer: [{text: more, after_request: 1}]\n    simulate: {persona: p, goal: g, script: [a]}\n",
        encoding="utf-8",
    )

    code, output, _ = run_main(capsys, "validate", str(scenario))

    assert code == 2
    assert "3:5: turns[0]: simulate: the script is empty and the turn has no user message: nothing is sent" in output
    assert "4:5: turns[1]: a simulated turn is the user's messages and the agent's answers: no steer" in output


def test_the_example_of_evaluation_md_runs_as_it_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = (Path(__file__).parents[2] / "docs" / "evaluation.md").read_text(encoding="utf-8")
    example = doc.split("`refund_chat.yaml`:\n\n```yaml\n", 1)[1].split("```", 1)[0]
    scenario = tmp_path / "refund_chat.yaml"
    scenario.write_text(example, encoding="utf-8")

    code, entry, _ = _run(tmp_path, capsys, scenario)

    assert code == 0
    assert [turn["prompt"] for turn in entry["turns"]] == ["Hi, I sent back order A-1001.", "When do I get my money?"]
    assert entry["turns"][1]["simulated"] == {"scenario_turn": 0, "exchange": 2, "user": "script", "ended": "stop"}
    assert {"turn 2: output.contains", "turn 2: judge"} <= {check["name"] for check in entry["checks"]}
