"""Judged checks with a scripted judge (issue 43 item 1), through `agentrig run` in-process: a verdict that passes,
one whose score is under the threshold, one whose `pass` is false, and a turn with no output to judge; the verdict's
score and reason beside the check in report.json, junit.xml's failure message and summary.md; the same verdict
through `agentrig.testing`. (tests/providers/test_judge_provider.py asks a real judge through pydantic-ai's OpenAI
client.)"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.runfolder import jsonio
from agentrig.testing import run_scenario
from tests.cli.cli_helpers import run_main
from tests.reports.runs import decompressed

_SCENARIO = """\
name: refund
system_prompt: You are a support agent.
turns:
  - user: When do I get my money back?
    model:
      - text: Your refund arrives within 5 business days.
    expect:
      judge:
        rubric: States the refund delay and stays polite.
        reference: Refunds take 5 business days.
        threshold: 0.7
        script: {verdict}
"""


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], verdict: str) -> tuple[int, Path, str]:
    scenario = tmp_path / "refund.yaml"
    scenario.write_text(_SCENARIO.format(verdict=verdict), encoding="utf-8")
    out = tmp_path / "out"
    code, output, err = run_main(capsys, "run", str(scenario), "--out", str(out))
    assert code in (0, 1), err
    return code, out, output


def _judge_check(out: Path) -> dict[str, Any]:
    (entry,) = jsonio.read_json_file(out / "report.json")["scenarios"]
    (check,) = [check for check in entry["checks"] if "judge" in check["name"]]
    return check


def test_a_passing_verdict_passes_with_its_score_and_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(tmp_path, capsys, "{pass: true, score: 0.9, reason: States the 5-day delay politely.}")

    assert code == 0
    assert _judge_check(out) == {
        "name": "turn 1: judge",
        "passed": True,
        "expected": {
            "rubric": "States the refund delay and stays polite.",
            "of": "output",
            "threshold": 0.7,
            "reference": "Refunds take 5 business days.",
        },
        "actual": {
            "pass": True,
            "score": 0.9,
            "reason": "States the 5-day delay politely.",
            "model": "script",
            "cost_usd": None,
        },
        "detail": "score 0.9 >= 0.7, pass: States the 5-day delay politely.",
        "skipped_reason": None,
    }


@pytest.mark.parametrize(
    ("verdict", "detail"),
    [
        ("{pass: true, score: 0.4, reason: Never says when.}", "score 0.4 < threshold 0.7: Never says when."),
        ("{pass: false, score: 0.95, reason: Rude reply.}", "the judge's verdict is fail (score 0.95): Rude reply."),
    ],
    ids=["score-below-threshold", "pass-false"],
)
def test_a_failing_verdict_shows_its_reason_in_every_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], verdict: str, detail: str
) -> None:
    code, out, output = _run(tmp_path, capsys, verdict)

    assert code == 1
    check = _judge_check(out)
    assert (check["passed"], check["detail"]) == (False, detail)
    (failure,) = ElementTree.parse(out / "junit.xml").getroot().iter("failure")
    assert failure.get("message") == "1 check(s) failed: turn 1: judge"
    assert detail in (failure.text or "")
    assert detail in (out / "summary.md").read_text(encoding="utf-8")
    assert detail in output
    page = decompressed((out / "report.html").read_text(encoding="utf-8"))
    assert check["actual"]["reason"] in page  # drawn beside the check


def test_a_turn_without_output_fails_its_judged_check_unasked() -> None:
    run = run_scenario(
        {
            "name": "no-output",
            "turns": [
                {
                    "user": "hi",
                    "model": [{"error": {"kind": "server_error"}}],
                    "expect": {
                        "error": {"kind": "server_error"},
                        "judge": {"rubric": "Polite.", "script": {"pass": True, "score": 1.0}},
                    },
                }
            ],
        }
    )

    (check,) = [check for check in run.checks if check.name == "turn 1: judge"]
    assert (check.passed, check.detail) == (False, "the turn produced no output: nothing to judge")


def test_agentrig_testing_gives_the_verdict_run_gives() -> None:
    scenario: dict[str, Any] = {
        "name": "judged",
        "turns": [{"user": "hi", "model": [{"text": "Hello! How can I help?"}]}],
        "expect": {
            "judge": [
                {"rubric": "Greets the user.", "of": "conversation", "script": {"pass": True, "score": 0.8}},
                {
                    "rubric": "Offers help.",
                    "threshold": 0.9,
                    "script": {"pass": True, "score": 0.6, "reason": "Vague."},
                },
            ]
        },
    }

    run = run_scenario(scenario)

    assert [(check.name, check.passed) for check in run.checks if "judge" in check.name] == [
        ("scenario: judge[0]", True),
        ("scenario: judge[1]", False),
    ]
    with pytest.raises(AssertionError, match=r"score 0\.6 < threshold 0\.9: Vague"):
        run.assert_passed()


@pytest.mark.parametrize(
    ("judge", "message"),
    [
        ("{rubric: Polite.}", "give the judge a model or a script, one of the two"),
        ("{rubric: Polite., model: openai:gpt-4o, script: {pass: true, score: 1}}", "one of the two"),
        ("{rubric: Polite., script: {pass: true, score: 1.5}}", "less than or equal to 1"),
        ("{rubric: Polite., on: output, script: {pass: true, score: 1}}", "`on:` is read by YAML as true: write `of:"),
    ],
    ids=["neither", "both", "score-over-1", "on-key"],
)
def test_a_bad_judge_is_one_located_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], judge: str, message: str
) -> None:
    scenario = tmp_path / "bad.yaml"
    scenario.write_text(f"name: bad\nturns:\n  - user: hi\n    expect:\n      judge: {judge}\n", encoding="utf-8")

    code, _, err = run_main(capsys, "run", str(scenario), "--out", str(tmp_path / "out"))

    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"agentrig: error: {scenario}:5:"), line
    assert message in line


def test_the_worked_example_of_evaluation_md_says_what_it_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = (Path(__file__).parents[2] / "docs" / "evaluation.md").read_text(encoding="utf-8")
    example = doc.split("`refund.yaml`:\n\n```yaml\n", 1)[1].split("```", 1)[0]
    shown = doc.split("```console\n$ agentrig run refund.yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "refund.yaml").write_text(example, encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    code, output, _ = run_main(capsys, "run", "refund.yaml")

    assert code == 1
    assert output == shown
    entry = jsonio.read_json_file(tmp_path / "agentrig-out" / "report.json")["scenarios"][0]
    verdicts = {
        check["name"]: (check["passed"], check["detail"]) for check in entry["checks"] if "judge" in check["name"]
    }
    assert verdicts["turn 1: judge[0]"] == (
        True,
        "score 0.9 >= 0.7, pass: Gives the 5-business-day delay from the arrival date.",
    )
    assert verdicts["turn 1: judge[1]"][0] is True
    assert [check["passed"] for check in entry["checks"] if check["name"].startswith("scenario: max_")] == [True, True]
