"""Expectations -> Checks, on hand-made TurnRecords (no pydantic-ai run needed)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.checks.expectations import check_scenario, check_turn
from agentrig.runtime.checks.history_checks import ALL_INVARIANTS, canonical_golden_bytes, check_golden, strip_run_ids
from agentrig.runtime.history.canonical import Message, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.run_records import Check, CompactionOutcome, RunError, ToolCallStatusRecord, TurnRecord
from agentrig.runtime.history.usage import Usage
from agentrig.scenarios.model import Scenario, TurnExpectations


def make_turn(
    *,
    index: int = 0,
    output: str | None = "Two files.",
    calls: Sequence[ToolCallPart] = (),
    statuses: Sequence[ToolCallStatusRecord] = (),
    usage: Usage | None = None,
    error: RunError | None = None,
    interrupted: bool = False,
    compaction: CompactionOutcome | None = None,
    model_input_checks: Sequence[Check] = (),
) -> TurnRecord:
    return TurnRecord(
        index=index,
        request_id="abcd1234",
        prompt="List the files.",
        output=output,
        new_messages=(),
        tool_calls=tuple(calls),
        tool_statuses=tuple(statuses),
        usage=usage or Usage(requests=2, input_tokens=280, output_tokens=19),
        error=error,
        interrupted=interrupted,
        compaction=compaction,
        model_input_checks=tuple(model_input_checks),
    )


def expect(data: dict[str, Any]) -> TurnExpectations:
    return TurnExpectations.model_validate(data)


def failed(checks: list[Check]) -> list[str]:
    return [c.name for c in checks if not c.passed]


BASH_LS = ToolCallPart(tool_call_id="tc_1", tool_name="bash", args={"command": "ls", "flags": "-l"})
BASH_PWD = ToolCallPart(tool_call_id="tc_2", tool_name="bash", args={"command": "pwd"})
READ = ToolCallPart(tool_call_id="tc_3", tool_name="read", args='{"path": "a.txt"}')


# --- output ---------------------------------------------------------------------------------


def test_output_checks_pass_and_fail() -> None:
    checks = check_turn(
        expect(
            {
                "output": {
                    "equals": "Two files.",
                    "contains": ["Two", "files"],
                    "not_contains": "three",
                    "regex": r"^T\w+",
                }
            }
        ),
        make_turn(),
        label="turn 1",
    )
    assert len(checks) == 5
    assert failed(checks) == []

    checks = check_turn(expect({"output": {"equals": "Three files.", "contains": "four"}}), make_turn(), label="turn 1")
    assert failed(checks) == ["turn 1: output.equals", "turn 1: output.contains"]
    equals = checks[0]
    assert equals.expected == "Three files."
    assert equals.actual == "Two files."
    assert "-Three files." in equals.detail
    assert "+Two files." in equals.detail


def test_output_missing_fails() -> None:
    checks = check_turn(expect({"output": {"contains": "x"}}), make_turn(output=None), label="turn 1")
    assert failed(checks) == ["turn 1: output"]


def test_output_json_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    ok = check_turn(expect({"output": {"json_schema": schema}}), make_turn(output='{"n": 2}'), label="t")
    assert failed(ok) == []
    bad = check_turn(expect({"output": {"json_schema": schema}}), make_turn(output='{"n": "two"}'), label="t")
    assert failed(bad) == ["t: output.json_schema"]
    assert "at n:" in bad[0].detail
    not_json = check_turn(expect({"output": {"json_schema": schema}}), make_turn(output="nope"), label="t")
    assert "not JSON" in not_json[0].detail


def test_invalid_regex_is_a_failed_check_not_a_crash() -> None:
    checks = check_turn(expect({"output": {"regex": "("}}), make_turn(), label="t")
    assert failed(checks) == ["t: output.regex"]
    assert "invalid regular expression" in checks[0].detail


# --- tool calls -----------------------------------------------------------------------------


def test_used_not_used_counts() -> None:
    turn = make_turn(calls=[BASH_LS, BASH_PWD, READ])
    checks = check_turn(
        expect({"tool_calls": {"used": ["bash", "read"], "not_used": ["write"], "counts": {"bash": 2, "read": 1}}}),
        turn,
        label="t",
    )
    assert failed(checks) == []
    checks = check_turn(
        expect({"tool_calls": {"used": ["write"], "not_used": ["bash"], "counts": {"bash": 1}}}), turn, label="t"
    )
    assert failed(checks) == ["t: tool_calls.used", "t: tool_calls.not_used", "t: tool_calls.counts[bash]"]


@pytest.mark.parametrize(
    ("sequence", "order", "passes"),
    [
        ([{"name": "bash"}, {"name": "bash"}, {"name": "read"}], "exact", True),
        ([{"name": "bash", "args": {"command": "ls"}}, {"name": "bash"}, {"name": "read"}], "exact", True),
        (
            [{"name": "bash", "args": {"command": "ls"}, "args_match": "exact"}, {"name": "bash"}, {"name": "read"}],
            "exact",
            False,
        ),
        ([{"name": "bash"}, {"name": "read"}], "exact", False),
        ([{"name": "bash", "id": "tc_2"}, {"name": "bash"}, {"name": "read"}], "exact", False),
        ([{"name": "read", "args": {"path": "a.txt"}, "args_match": "exact"}, {"name": "bash"}], "any_order", True),
        ([{"name": "bash", "args": {"command": "ls"}}, {"name": "read"}], "in_order", True),
        ([{"name": "read"}, {"name": "bash"}], "in_order", False),
        ([{"name": "bash"}, {"name": "bash"}, {"name": "bash"}], "any_order", False),
        # a greedy matcher would give tc_1 to the first matcher and fail; bipartite matching must not
        ([{"name": "bash"}, {"name": "bash", "args": {"flags": "-l"}}], "any_order", True),
    ],
)
def test_sequence_orders(sequence: list[dict[str, Any]], order: str, passes: bool) -> None:
    turn = make_turn(calls=[BASH_LS, BASH_PWD, READ])
    checks = check_turn(expect({"tool_calls": {"sequence": sequence, "order": order}}), turn, label="t")
    assert [c.passed for c in checks] == [passes]
    if not passes:
        assert checks[0].detail


def test_raw_string_args_that_are_not_json_never_match_args() -> None:
    malformed = ToolCallPart(tool_call_id="tc_9", tool_name="read", args='{"path": ')
    turn = make_turn(calls=[malformed])
    assert failed(check_turn(expect({"tool_calls": {"sequence": [{"name": "read"}]}}), turn, label="t")) == []
    checks = check_turn(
        expect({"tool_calls": {"sequence": [{"name": "read", "args": {"path": "x"}}]}}), turn, label="t"
    )
    assert failed(checks) == ["t: tool_calls.sequence"]


def test_registry_status() -> None:
    statuses = [
        ToolCallStatusRecord(tool_call_id="tc_1", tool_name="bash", status="completed"),
        ToolCallStatusRecord(tool_call_id="tc_2", tool_name="bash", status="failed"),
    ]
    turn = make_turn(calls=[BASH_LS, BASH_PWD], statuses=statuses)
    checks = check_turn(
        expect({"tool_calls": {"status": {"tc_1": "completed", "tc_2": "completed", "tc_7": "cancelled"}}}),
        turn,
        label="t",
    )
    assert failed(checks) == ["t: tool_calls.status[tc_2]", "t: tool_calls.status[tc_7]"]
    assert checks[1].actual == "failed"
    assert 'no tool call "tc_7" in the registry: ["tc_1","tc_2"]' in checks[2].detail  # JSON, not a Python repr


# --- usage, error, interrupted, compaction ---------------------------------------------------


def test_usage_exact_and_bounds() -> None:
    turn = make_turn(usage=Usage(requests=2, input_tokens=280, output_tokens=19))
    checks = check_turn(
        expect({"usage": {"requests": 2, "input_tokens": {"min": 100, "max": 300}, "total_tokens": 299}}),
        turn,
        label="t",
    )
    assert failed(checks) == []
    checks = check_turn(
        expect({"usage": {"requests": 3, "output_tokens": {"max": 10}, "tool_calls": {"min": 1}}}), turn, label="t"
    )
    assert failed(checks) == ["t: usage.requests", "t: usage.tool_calls", "t: usage.output_tokens"]
    assert checks[0].expected == 3
    assert checks[0].actual == 2


def test_unexpected_error_fails_and_expected_error_passes() -> None:
    error = RunError(kind="context_length", message="prompt is too long: 210000 tokens")
    turn = make_turn(output=None, error=error)
    assert failed(check_turn(TurnExpectations(), turn, label="t")) == ["t: error"]
    ok = check_turn(expect({"error": {"kind": "context_length", "contains": "too long"}}), turn, label="t")
    assert failed(ok) == []
    wrong = check_turn(expect({"error": {"kind": "rate_limit"}}), turn, label="t")
    assert failed(wrong) == ["t: error"]
    missing = check_turn(expect({"error": {"kind": "rate_limit"}}), make_turn(), label="t")
    assert "without an error" in missing[0].detail


def test_interrupted_and_compaction() -> None:
    turn = make_turn(
        interrupted=True,
        compaction=CompactionOutcome(status="compacted", reason="threshold_exceeded", compacted_messages=4),
    )
    checks = check_turn(
        expect({"interrupted": True, "compaction": {"status": "compacted", "compacted_messages": 4}}), turn, label="t"
    )
    assert failed(checks) == []
    checks = check_turn(expect({"interrupted": True, "compaction": {"status": "skipped"}}), make_turn(), label="t")
    assert failed(checks) == ["t: interrupted", "t: compaction"]


def test_model_input_checks_are_included_with_the_label() -> None:
    inner = Check(name="step 1: expect_input.no_dangling_tool_calls", passed=False, detail="tc_1 has no return")
    checks = check_turn(TurnExpectations(), make_turn(model_input_checks=[inner]), label="turn 2")
    assert failed(checks) == ["turn 2: step 1: expect_input.no_dangling_tool_calls"]


def test_real_model_skips_script_only_expectations() -> None:
    error = RunError(kind="rate_limit", message="429")
    inner = Check(name="step 1: expect_input.message_count", passed=False)
    turn = make_turn(
        output="Two files.", calls=[BASH_LS], usage=Usage(requests=5, input_tokens=50), model_input_checks=[inner]
    )
    checks = check_turn(
        expect(
            {
                "output": {"contains": "Two"},
                "usage": {"requests": 2, "input_tokens": {"max": 10}},
                "tool_calls": {"sequence": [{"name": "read"}], "status": {"tc_1": "completed"}, "used": ["bash"]},
            }
        ),
        turn,
        label="t",
        scripted=False,
    )
    by_name = {c.name: c for c in checks}
    assert by_name["t: usage.requests"].skipped_reason
    assert by_name["t: usage.requests"].passed
    assert by_name["t: tool_calls.sequence"].skipped_reason
    assert by_name["t: tool_calls.status[tc_1]"].skipped_reason
    assert by_name["t: step 1: expect_input.message_count"].skipped_reason
    # bounds and plain output/tool checks still apply
    assert not by_name["t: usage.input_tokens"].passed
    assert by_name["t: output.contains"].skipped_reason is None
    assert by_name["t: tool_calls.used"].skipped_reason is None
    skipped_error = check_turn(
        expect({"error": {"kind": "rate_limit"}}), make_turn(error=error), label="t", scripted=False
    )
    assert skipped_error[0].skipped_reason


# --- scenario level -------------------------------------------------------------------------


@dataclass
class FakeLoaded:
    scenario: Scenario
    base_dir: Path

    def resolve(self, relative: str) -> Path:
        return self.base_dir / relative


HISTORY = (
    Message.request(TextPart(content="List the files."), run_id="run-1"),
    Message.response(ToolCallPart(tool_call_id="tc_1", tool_name="bash", args={"command": "ls"}), run_id="run-1"),
    Message.request(ToolReturnPart(tool_call_id="tc_1", tool_name="bash", content="a\nb"), run_id="run-1"),
    Message.response(TextPart(content="Two files."), run_id="run-1"),
)


@dataclass(frozen=True)
class FakeViolation:
    code: str
    message: str
    message_index: int
    part_index: int | None = None


def scenario(data: dict[str, Any]) -> Scenario:
    base: dict[str, Any] = {"name": "s", "turns": [{"user": "hi", "model": [{"text": "Two files."}]}]}
    return Scenario.model_validate(base | data)


def no_violations(history: Sequence[Message], registry: Any, only: Sequence[str] | None) -> list[FakeViolation]:
    return []


def test_scenario_level_expectations_use_totals_and_last_turn(tmp_path: Path) -> None:
    loaded = FakeLoaded(
        scenario(
            {
                "turns": [{"user": "a", "model": [{"text": "x"}]}, {"user": "b", "model": [{"text": "y"}]}],
                "expect": {
                    "invariants": "none",
                    "output": {"equals": "second"},
                    "usage": {"requests": 3, "input_tokens": 30},
                    "tool_calls": {"sequence": [{"name": "bash", "id": "tc_1"}, {"name": "read", "id": "tc_3"}]},
                },
            }
        ),
        tmp_path,
    )
    turns = [
        make_turn(index=0, output="first", calls=[BASH_LS], usage=Usage(requests=2, input_tokens=20)),
        make_turn(index=1, output="second", calls=[READ], usage=Usage(requests=1, input_tokens=10)),
    ]
    checks = check_scenario(loaded, turns, HISTORY, invariant_checker=no_violations)
    assert failed(checks) == []
    assert {c.name for c in checks} == {
        "scenario: output.equals",
        "scenario: usage.requests",
        "scenario: usage.input_tokens",
        "scenario: tool_calls.sequence",
    }


def test_scenario_error_expectation_covers_the_last_turn(tmp_path: Path) -> None:
    loaded = FakeLoaded(scenario({"expect": {"invariants": "none", "error": {"kind": "max_iterations"}}}), tmp_path)
    turns = [make_turn(output=None, error=RunError(kind="max_iterations", message="20 requests"))]
    assert failed(check_scenario(loaded, turns, HISTORY)) == []


def test_turns_that_never_ran_fail(tmp_path: Path) -> None:
    loaded = FakeLoaded(
        scenario({"turns": [{"user": "a", "model": [{"text": "x"}]}, {"user": "b", "model": [{"text": "y"}]}],
                  "expect": {"invariants": "none"}}),
        tmp_path,
    )  # fmt: skip
    assert failed(check_scenario(loaded, [make_turn()], HISTORY)) == ["scenario: turns"]


def test_invariants_one_check_per_name(tmp_path: Path) -> None:
    seen: list[Any] = []

    def checker(history: Sequence[Message], registry: Any, only: Sequence[str] | None) -> list[FakeViolation]:
        seen.append((len(history), registry, only))
        return [FakeViolation(code="no_consecutive_requests", message="requests 1 and 2 are adjacent", message_index=2)]

    loaded = FakeLoaded(scenario({}), tmp_path)
    checks = check_scenario(loaded, [make_turn()], HISTORY, invariant_checker=checker)
    assert [c.name for c in checks] == [f"scenario: invariant {name}" for name in ALL_INVARIANTS]
    assert failed(checks) == ["scenario: invariant no_consecutive_requests"]
    broken = next(c for c in checks if not c.passed)
    assert "message 2" in broken.detail
    # Where it is, as data a report can point at (an index into history.json's messages), not only as text.
    assert isinstance(broken.actual, list)
    assert broken.actual[0] == {
        "code": "no_consecutive_requests",
        "message": 2,
        "part": None,
        "says": "requests 1 and 2 are adjacent",
    }
    history_codes = [name for name in ALL_INVARIANTS if name != "registry_matches_parts"]
    assert seen[0] == (4, None, history_codes)
    assert seen[1][2] == ["registry_matches_parts"]  # per turn, with the turn's rebuilt registry
    assert seen[1][1] is not None

    loaded = FakeLoaded(scenario({"expect": {"invariants": ["no_dangling_tool_calls"]}}), tmp_path)
    checks = check_scenario(loaded, [make_turn()], HISTORY, invariant_checker=checker)
    # a violation of an invariant that was not asked for still shows (the checker returned it)
    assert [c.name for c in checks] == ["scenario: invariant no_dangling_tool_calls", "scenario: invariant (other)"]


def test_a_turns_registry_violation_points_into_the_final_history(tmp_path: Path) -> None:
    # The registry of a turn is checked against the messages the turn added; its indexes are the turn's own, so
    # they are moved to where those messages sit in the final history (the second turn's start at 2).
    def checker(history: Sequence[Message], registry: Any, only: Sequence[str] | None) -> list[FakeViolation]:
        if registry is None:
            return []
        return [
            FakeViolation(
                code="registry_matches_parts", message="tc_1 is not registered", message_index=1, part_index=0
            )
        ]

    first = dataclasses.replace(make_turn(), new_messages=HISTORY[:2])
    second = dataclasses.replace(make_turn(index=1), new_messages=HISTORY[2:])
    loaded = FakeLoaded(scenario({"expect": {"invariants": ["registry_matches_parts"]}}), tmp_path)
    check = check_scenario(loaded, [first, second], HISTORY, invariant_checker=checker)[0]
    assert [(where["message"], where["part"]) for where in check.actual] == [(1, 0), (3, 0)]  # pyright: ignore
    assert "turn 2: registry_matches_parts at message 3, part 0" in check.detail


def test_strip_run_ids() -> None:
    assert all(m.run_id is None for m in strip_run_ids(HISTORY))
    assert [m.parts for m in strip_run_ids(HISTORY)] == [m.parts for m in HISTORY]


def test_golden_compare_update_and_diff(tmp_path: Path) -> None:
    golden = tmp_path / "golden" / "s.json"
    missing = check_golden(golden, HISTORY, update=False)
    assert not missing.passed
    assert "--update-golden" in missing.detail

    written = check_golden(golden, HISTORY, update=True)
    assert written.passed
    assert "written" in written.detail
    assert golden.read_bytes() == canonical_golden_bytes(HISTORY)
    assert b"run-1" not in golden.read_bytes()

    assert check_golden(golden, HISTORY, update=False).passed
    assert check_golden(golden, HISTORY, update=True).detail == "golden unchanged"

    changed = (*HISTORY[:-1], Message.response(TextPart(content="Three files.")))
    mismatch = check_golden(golden, changed, update=False)
    assert not mismatch.passed
    minus = [line for line in mismatch.detail.splitlines() if line.startswith("-") and not line.startswith("---")]
    plus = [line for line in mismatch.detail.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert [line.split(":")[1].strip() for line in minus] == ['"Two files."']
    assert [line.split(":")[1].strip() for line in plus] == ['"Three files."']
    assert golden.read_bytes() == canonical_golden_bytes(HISTORY)  # never rewritten without --update-golden


def test_golden_skipped_for_real_models(tmp_path: Path) -> None:
    loaded = FakeLoaded(scenario({"expect": {"invariants": "none", "golden": "golden/s.json"}}), tmp_path)
    checks = check_scenario(loaded, [make_turn()], HISTORY, scripted=False)
    assert [(c.name, c.passed, bool(c.skipped_reason)) for c in checks] == [("scenario: golden", True, True)]
    assert not (tmp_path / "golden").exists()


def test_real_invariants_and_rebuilt_registry(tmp_path: Path) -> None:
    """With the real checker: a clean history passes; a registry status that disagrees with the parts fails."""
    loaded = FakeLoaded(scenario({}), tmp_path)
    call = HISTORY[1].parts[0]
    assert isinstance(call, ToolCallPart)
    good = make_turn(
        calls=[call],
        statuses=[ToolCallStatusRecord(tool_call_id="tc_1", tool_name="bash", status="completed")],
    )
    good = dataclasses.replace(good, new_messages=HISTORY)
    assert failed(check_scenario(loaded, [good], HISTORY)) == []
    wrong = dataclasses.replace(
        good, tool_statuses=(ToolCallStatusRecord(tool_call_id="tc_1", tool_name="bash", status="cancelled"),)
    )
    checks = check_scenario(loaded, [wrong], HISTORY)
    assert failed(checks) == ["scenario: invariant registry_matches_parts"]
    assert "turn 1: registry_matches_parts" in next(c for c in checks if not c.passed).detail
    dangling = (*HISTORY[:2], Message.request(TextPart(content="next")))
    checks = check_scenario(loaded, [make_turn()], dangling)
    assert failed(checks) == ["scenario: invariant no_dangling_tool_calls"]


def test_scenario_wide_registry_is_used_when_given(tmp_path: Path) -> None:
    from agentrig.runtime.history.tool_registry import ToolCallRegistry

    loaded = FakeLoaded(scenario({}), tmp_path)
    registry = ToolCallRegistry()
    registry.register("tc_1", "bash", {"command": "ls"})
    assert failed(check_scenario(loaded, [make_turn()], HISTORY, registry=registry)) == [
        "scenario: invariant registry_matches_parts"
    ]
    registry.start("tc_1")
    registry.complete("tc_1")
    assert failed(check_scenario(loaded, [make_turn()], HISTORY, registry=registry)) == []
