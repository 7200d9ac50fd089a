"""The host's actions during a turn, run for real on the installed pydantic-ai (CI runs this file on every pinned
version): the shipped compatibility scenarios plain and streamed, and what their checks catch when the runtime
misbehaves (steering delivered twice, steering lost after a cancellation, a host chain resumed too early, a
missing extra, a point that never occurs); a turn cut mid-response counts the same usage plain or streamed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.checks.control_checks import steering_delivery_checks
from agentrig.runtime.engine.host_queue import HostQueue
from agentrig.runtime.engine.pydantic_ai_engine import composition
from agentrig.runtime.engine.pydantic_ai_engine.turn_control import TurnControl
from agentrig.runtime.history.run_records import ScenarioResult, TurnRecord
from agentrig.runtime.history.turn_controls import SteeringDelivery
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.reports.report_files import describe_error
from agentrig.runtime.suite.runner import RunOptions, run_suite
from tests.runtime.engine_helpers import execute, load_yaml

REPO = Path(__file__).resolve().parents[2]
COMPAT = REPO / "scenarios" / "compatibility"


def run(path: Path, *, stream: bool = False) -> ScenarioResult:
    (result,) = run_suite(RunOptions(paths=(path,), out_dir=None, stream=stream)).results
    return result


def failing(result: ScenarioResult) -> dict[str, str]:
    return {check.name: check.detail for check in result.checks if not check.passed}


@pytest.fixture(autouse=True)
def from_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("path", sorted(COMPAT.glob("*.yaml")), ids=lambda p: p.stem)
def test_compatibility_scenarios_pass_with_one_golden(path: Path, stream: bool) -> None:
    result = run(path.relative_to(REPO), stream=stream)
    assert result.status == "passed", (result.error, failing(result))


def test_steering_delivered_twice_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    original = TurnControl._wrap_tool_execute  # pyright: ignore[reportPrivateUsage]

    async def enqueue_twice(self: TurnControl, ctx: Any, **kwargs: Any) -> Any:
        if kwargs["call"].tool_call_id == "notify_1":
            ctx.enqueue("STEER: also check the logs", priority="asap")
        return await original(self, ctx, **kwargs)

    monkeypatch.setattr(TurnControl, "_wrap_tool_execute", enqueue_twice)
    result = run(Path("scenarios/compatibility/steering_from_tool.yaml"))
    problems = failing(result)
    assert result.status == "failed"
    assert "more than once" in problems["turn 1: steering[0].delivered_once"]


def test_steering_lost_after_a_cancellation_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def nothing_carried(self: HostQueue) -> tuple[()]:
        return ()

    monkeypatch.setattr(HostQueue, "carried_steering", nothing_carried)
    result = run(Path("scenarios/compatibility/steering_pending_after_cancel.yaml"))
    problems = failing(result)
    assert "turn 2: steering[0]" in problems
    assert "turn 2, step 1: input.contains_text" in problems


def test_host_chain_resumed_before_the_last_result_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def resume_at_once(self: HostQueue, results: dict[str, Any]) -> dict[str, Any]:
        return dict(results)

    monkeypatch.setattr(HostQueue, "accept", resume_at_once)
    result = run(Path("scenarios/compatibility/host_action_chain.yaml"))
    assert result.status != "passed"
    assert "turn 2: pending_calls" in failing(result)


def test_a_missing_extra_skips_the_scenario_naming_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(composition.EXTRAS, "harness", (("agentrig_no_such_module",), "pip install it"))
    monkeypatch.setitem(composition.EXTRAS, "vercel-ai", (("agentrig_no_such_module",), "pip install ui"))
    path = tmp_path / "needs.yaml"
    path.write_text(
        "name: needs-harness\nrequires: [harness, ag-ui]\nturns:\n  - user: hi\n    model:\n      - text: hi\n"
        "        usage: {input_tokens: 1, output_tokens: 1}\n  - ui: {protocol: vercel-ai, body: '{}'}\n",
        encoding="utf-8",
    )
    suite = run_suite(RunOptions(paths=(path,), out_dir=None))
    (result,) = suite.results
    assert (result.status, suite.exit_code, result.error, result.turns) == ("skipped", 0, None, ())
    (check,) = result.checks
    assert (check.name, check.passed) == ("scenario: requires", True)
    # Every extra it lacks, each once (ag-ui is installed here): a listed one, and a UI turn's that is not listed.
    assert check.skipped_reason == "requires harness: pip install it; requires vercel-ai: pip install ui"


def test_a_missing_extra_refuses_the_scenario_with_one_located_line_under_require_extras(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(composition.EXTRAS, "harness", (("agentrig_no_such_module",), "pip install it"))
    path = tmp_path / "needs.yaml"
    path.write_text(
        "name: needs-harness\nrequires: [harness]\nturns:\n  - user: hi\n    model:\n      - text: hi\n"
        "        usage: {input_tokens: 1, output_tokens: 1}\n",
        encoding="utf-8",
    )
    suite = run_suite(RunOptions(paths=(path,), out_dir=None, require_extras=True))
    (result,) = suite.results
    assert (result.status, suite.exit_code) == ("error", 3)
    assert result.error is not None
    assert result.error.message == (
        f"{path}:2: requires[0]: the harness extra is not installed (agentrig_no_such_module missing): pip install it"
    )
    assert result.error.kind == "unsupported"  # not the agent's error: nothing of the user's raised
    entry = {"status": "error", "error": {"kind": "unsupported", "message": "m"}}
    assert describe_error(entry) == (
        "error unsupported (this engine or environment cannot run the scenario; nothing of yours raised): m"
    )


def test_a_steering_point_that_never_occurs_fails() -> None:
    never = SteeringDelivery(text="late", request=None, input_counts=(0, 0), stored_count=0, stored_as=None)
    turn = TurnRecord(index=0, request_id="abcd1234", prompt="go", output="done", new_messages=(), tool_calls=(),
                      tool_statuses=(), usage=Usage(), steering=(never,))  # fmt: skip
    (check,) = steering_delivery_checks(turn, "turn 1")
    assert not check.passed
    assert "never reached the model" in check.detail
    # A cancelled turn may leave it pending: the next turn delivers it.
    (pending,) = steering_delivery_checks(replace(turn, interrupted=True), "turn 1")
    assert pending.passed


def test_per_version_placement_without_a_matching_version_fails(tmp_path: Path) -> None:
    text = (COMPAT / "steering_from_tool.yaml").read_text(encoding="utf-8")
    text = text.replace('when_pydantic_ai: "<2.59"', 'when_pydantic_ai: "<2.0"').replace(
        'when_pydantic_ai: ">=2.59"', 'when_pydantic_ai: ">=3.0"'
    )
    text = text.replace(
        "golden: golden/steering-from-tool.json", f"golden: {COMPAT / 'golden/steering-from-tool.json'}"
    )
    path = tmp_path / "steering.yaml"
    path.write_text(text, encoding="utf-8")
    result = run(path)
    assert "no when_pydantic_ai matches pydantic-ai" in failing(result)["turn 1: steering[0].stored"]


CUT = """
name: cut
tools:
  bash:
    parameters: {{type: object, properties: {{command: {{type: string}}}}}}
    results:
      - return: a.txt
turns:
  - user: List and explain.
    cancel: {{during_response: {request}, after_chunks: {chunks}}}
    model:
      - tool_calls: [{{id: tc_1, name: bash, args: {{command: ls}}}}]
        usage: {{input_tokens: 30, output_tokens: 5}}
      - text: "One two three four."
        chunks: ["One ", "two ", "three ", "four."]
        usage: {{input_tokens: 50, output_tokens: 8, cache_read_tokens: 4}}
    expect:
      interrupted: true
"""


@pytest.mark.parametrize(
    ("request_number", "chunks", "expected"),
    [
        (2, 2, (2, 1, 80, 13, 4)),  # the cut response counts: one request and its usage
        (2, 4, (2, 1, 80, 13, 4)),  # every chunk arrived, the response never ended
        (1, 1, (1, 0, 30, 5, 0)),  # a response of tool calls cut after its first chunk
        (2, 0, (1, 1, 30, 5, 0)),  # nothing of the second response arrived: the model was never asked
        (1, 0, (0, 0, 0, 0, 0)),
    ],
)
def test_a_cut_turns_usage_is_the_same_plain_or_streamed(
    tmp_path: Path, request_number: int, chunks: int, expected: tuple[int, ...]
) -> None:
    loaded = load_yaml(tmp_path, CUT.format(request=request_number, chunks=chunks))
    for stream in (False, True):
        execution = execute(replace(loaded, scenario=loaded.scenario.model_copy(update={"stream": stream})))
        turn = execution.turns[0]
        usage = turn.usage
        got = (usage.requests, usage.tool_calls, usage.input_tokens, usage.output_tokens, usage.cache_read_tokens)
        assert got == expected, f"stream={stream}"
        snapshot = turn.cancellation
        assert snapshot is not None
        assert (snapshot.requests, snapshot.input_tokens, snapshot.output_tokens) == (
            expected[0],
            expected[2],
            expected[3],
        ), f"stream={stream}"
