"""Failures under pytest read as the user's: no frame of agentrig's above the message, the plugin's option names,
what the model read when an input check fails, and the right kind for a missing recording."""

from __future__ import annotations

import pytest

from agentrig.runtime.runfolder import jsonio
from tests.pytest_plugin.project import accept_goldens, scenario, write

pytest_plugins = ["pytester"]

USERS_TESTS = """\
import asyncio
from dataclasses import dataclass

from pydantic_ai import Agent, RunContext
from pydantic_ai.models.test import TestModel

from agentrig.testing import assert_tool_called, run_scenario


@dataclass
class Bank:
    balance: float


bank_agent = Agent(None, deps_type=Bank)


@bank_agent.tool
def balance(ctx: RunContext[Bank]) -> str:
    return f"${ctx.deps.balance:.2f}"


def test_called():
    result = asyncio.run(bank_agent.run("hi", deps=Bank(1.0), model=TestModel(call_tools=[])))
    assert_tool_called(result, "balance")


def test_scenario():
    run = run_scenario(
        {
            "name": "balance",
            "turns": [
                {
                    "user": "What is my balance?",
                    "model": [
                        {"tool_calls": [{"id": "c1", "name": "balance"}]},
                        {"expect_input": {"contains_text": ["$12.50"]}, "text": "You have $12.50."},
                    ],
                }
            ],
        },
        agent=bank_agent,
        deps=Bank(99.0),
    )
    run.assert_passed()
"""


def test_a_failing_assertion_shows_the_users_line_and_no_frame_of_agentrigs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bank=USERS_TESTS)

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")

    result.assert_outcomes(failed=2)
    output = result.stdout.str()
    assert "agentrig/testing" not in output  # neither assertions.py nor scenarios.py: the test's own line
    result.stdout.fnmatch_lines(['>       assert_tool_called(result, "balance")', "E       AssertionError: expected *"])
    # The input check says what the model read, not `false`.
    result.stdout.fnmatch_lines(
        [
            "E         turn 1, step 2: input.contains_text",
            "E           expected: $12.50",
            'E           actual:   ["What is my balance?","$99.00"]',
        ]
    )


def test_golden_failures_name_the_plugins_option(pytester: pytest.Pytester) -> None:
    write(pytester, {"scenarios/a.yaml": scenario("answers", golden=True)})
    (pytester.path / "scenarios" / "golden").mkdir()

    missing = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    accept_goldens(pytester)
    write(pytester, {"scenarios/a.yaml": scenario("answers", golden=True).replace("One file.", "Two files.")})
    changed = pytester.runpytest_inprocess("-p", "no:cacheprovider")

    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(["*golden file * is missing; run with --agentrig-update-golden"])
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(["*(run with --agentrig-update-golden to accept)*"])
    assert " --update-golden" not in missing.stdout.str() + changed.stdout.str()


def test_a_scenario_with_no_recording_fails_as_a_replay_mismatch(pytester: pytest.Pytester) -> None:
    write(pytester, {"scenarios/a.yaml": scenario("never-recorded")})
    (pytester.path / "rec").mkdir()

    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--agentrig-record-mode", "none", "--agentrig-recordings", "rec", "--agentrig-out=out"
    )

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAIL never-recorded (scenarios/a.yaml)", "  cause replay_mismatch: no recording *"])
    report = jsonio.loads((pytester.path / "out" / "report.json").read_bytes())
    assert isinstance(report, dict)
    (entry,) = report["scenarios"]
    assert (entry["status"], entry["error"]["kind"]) == ("failed", "replay_mismatch")
    assert "rec/never-recorded.json does not exist" in entry["error"]["message"]
