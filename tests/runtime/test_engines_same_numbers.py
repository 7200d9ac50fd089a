"""Both engines, one script: the same canonical history, usage (`tool_calls` included), tool statuses and
event log for every scenario in `scenarios/` that tinyagent runs, and for the limits `scenarios/` does not cover.

The orchestrator is one piece of code for both engines (the removal contract's loop), so what it records may
differ only where a framework reports differently; this suite pins that it does not. The one tolerated
difference is the pointer to pydantic-ai's docs that newer pydantic-ai versions append to a usage-limit or
retry-budget error (". Consider raising the limit, or see the docs ..."): the message is compared without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.engine.tinyagent_engine.execution import execute_scenario_tinyagent
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.history.wire import loads_history
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.suite.runner import RunOptions, run_suite

REPO = Path(__file__).resolve().parents[2]
NOT_RUN = {
    "output-retry",
    "own-agent",
    "cancel-during-call",
    "cancel-mid-response",
    "history-policy-model-input",
    "history-processor-persisted",
    "steering-from-tool",
    "steering-pending-after-cancel",
    "structured-output-native",
    "structured-output-prompted",
    "structured-output-tool",
    "user-documents",
    "history-cleanup-public",
    "harness-tool-output-limits",
    "ui-agui-frontend-tool",
    "ui-agui-refusals",
    "ui-agui-tool-results",
    "ui-vercel-tool-round-trip",
    "incomplete-response",
}
"""Scenarios naming a user's own pydantic-ai agent, or using pydantic-ai's steering, cancel points, capabilities,
extras, UI adapters or its own history cleanup, structured output, attachments other than images or a `cut` step:
tinyagent does not run them (docs/removal.md)."""


def _run(out: Path, execute: Any) -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        run_suite(RunOptions(paths=(Path("scenarios"),), out_dir=out), execute=execute)
    report = jsonio.loads((out / "report.json").read_bytes())
    return {scenario["name"]: scenario for scenario in report["scenarios"]}


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], Path, dict[str, Any]]:
    pydantic_ai_out = tmp_path_factory.mktemp("pydantic-ai")
    tinyagent_out = tmp_path_factory.mktemp("tinyagent")
    return (
        pydantic_ai_out,
        _run(pydantic_ai_out, None),
        tinyagent_out,
        _run(tinyagent_out, execute_scenario_tinyagent),
    )


def _comparable_error(error: dict[str, Any] | None) -> Any:
    if error is None:
        return None
    return {**error, "message": str(error["message"]).split(". Consider raising")[0]}


def _turn(turn: dict[str, Any]) -> dict[str, Any]:
    keys = ("usage", "output", "interrupted", "tool_statuses", "compaction", "instructions", "output_type", "prompt")
    return {**{key: turn.get(key) for key in keys}, "error": _comparable_error(turn.get("error"))}


def _events(path: Path) -> list[dict[str, Any]]:
    events = [jsonio.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    for event in events:
        event.pop("t", None)  # when it happened: differs from run to run
        if event["type"] == "agent_end":
            event["error"] = _comparable_error(event["error"])
    return events


def test_every_scenario_but_the_pydantic_ai_agents_ran_on_both(
    both: tuple[Path, dict[str, Any], Path, dict[str, Any]],
) -> None:
    _, pydantic_ai, _, tinyagent = both
    assert set(pydantic_ai) == set(tinyagent)
    ran = {name for name, scenario in tinyagent.items() if scenario["status"] != "error"}
    assert ran == set(tinyagent) - NOT_RUN
    assert all(scenario["status"] == "passed" for scenario in pydantic_ai.values())


def test_same_usage_history_statuses_and_events(both: tuple[Path, dict[str, Any], Path, dict[str, Any]]) -> None:
    pydantic_ai_out, pydantic_ai, tinyagent_out, tinyagent = both
    compared = 0
    for name, expected in sorted(pydantic_ai.items()):
        if name in NOT_RUN:
            continue
        actual = tinyagent[name]
        assert actual["usage"] == expected["usage"], name
        assert [_turn(t) for t in actual["turns"]] == [_turn(t) for t in expected["turns"]], name
        folder = Path("scenarios") / name
        # history.json without the ids pydantic-ai draws per run (a conversation id tinyagent has none of);
        # session.json: timestamps and ids differ by nature.
        histories = [
            loads_history((out / folder / "history.json").read_bytes()) for out in (tinyagent_out, pydantic_ai_out)
        ]
        assert without_per_run_values(histories[0]) == without_per_run_values(histories[1]), name
        usage = "usage.json"
        assert (tinyagent_out / folder / usage).read_bytes() == (pydantic_ai_out / folder / usage).read_bytes(), name
        assert _events(tinyagent_out / folder / "events.jsonl") == _events(pydantic_ai_out / folder / "events.jsonl"), (
            name
        )
        compared += 1
    assert compared == len(pydantic_ai) - len(NOT_RUN)


def test_tool_calls_count_a_retried_call_once(both: tuple[Path, dict[str, Any], Path, dict[str, Any]]) -> None:
    # tool-retry: the first call is answered with a retry, the second returns: pydantic-ai counts one tool call.
    _, pydantic_ai, _, tinyagent = both
    assert tinyagent["tool-retry"]["usage"]["tool_calls"] == pydantic_ai["tool-retry"]["usage"]["tool_calls"] == 1


LIMIT_SCENARIO = """name: limit
system_prompt: You are terse.
settings: {{{limit}}}
tools:
  fetch:
    description: Fetch.
    parameters: {{type: object, properties: {{url: {{type: string}}}}, required: [url]}}
    results: [{{return: page}}]
turns:
  - user: Fetch it.
    model:
      - tool_calls: [{{id: tc_1, name: fetch, args: {{url: a}}}}]
        usage: {{input_tokens: 40, output_tokens: 10}}
      - tool_calls: [{{id: tc_2, name: fetch, args: {{url: b}}}}]
        usage: {{input_tokens: 60, output_tokens: 10}}
      - text: Done.
        usage: {{input_tokens: 80, output_tokens: 2}}
    expect:
      error: {{kind: usage_limit}}
"""


@pytest.mark.parametrize(
    "limit",
    ["request_limit: 1", "output_tokens_limit: 15", "input_tokens_limit: 50", "total_tokens_limit: 60"],
)
def test_usage_limits_stop_both_engines_at_the_same_point(tmp_path: Path, limit: str) -> None:
    # scenarios/ has only the tool-calls limit; the request and token limits are checked at other points of
    # the loop (before a request; inside it, after the response: pydantic-ai marks that response interrupted).
    (tmp_path / "limit.yaml").write_text(LIMIT_SCENARIO.format(limit=limit), encoding="utf-8")
    runs: dict[str, Path] = {}
    for name, execute in (("pydantic-ai", None), ("tinyagent", execute_scenario_tinyagent)):
        out = tmp_path / name
        run_suite(RunOptions(paths=(tmp_path / "limit.yaml",), out_dir=out), execute=execute)
        (scenario,) = jsonio.loads((out / "report.json").read_bytes())["scenarios"]
        assert scenario["status"] == "passed", (name, scenario["checks"])
        runs[name] = out / "scenarios" / "limit"
    assert _compared_history(runs["tinyagent"]) == _compared_history(runs["pydantic-ai"])
    assert (runs["tinyagent"] / "usage.json").read_bytes() == (runs["pydantic-ai"] / "usage.json").read_bytes()
    assert _events(runs["tinyagent"] / "events.jsonl") == _events(runs["pydantic-ai"] / "events.jsonl")


RETRIES_SCENARIO = """name: retries
system_prompt: You are terse.
settings: {{tool_retries: {budget}}}
tools:
  fetch:
    description: Fetch.
    parameters: {{type: object, properties: {{url: {{type: string}}}}, required: [url]}}
    results: [{{call: 1, retry: try again}}, {{call: 2, retry: again}}, {{return: page}}]
turns:
  - user: Fetch it.
    model:
      - tool_calls: [{{id: tc_1, name: fetch, args: {{url: a}}}}]
      - tool_calls: [{{id: tc_2, name: fetch, args: {{url: a}}}}]
      - tool_calls: [{{id: tc_3, name: fetch, args: {{url: a}}}}]
      - text: Done.
"""


@pytest.mark.parametrize("budget", [1, 2])
def test_a_tools_retry_budget_is_the_same_on_both_engines(tmp_path: Path, budget: int) -> None:
    # Two retries in a row: over a budget of 1 the run ends (unexpected_model_behavior), within 2 it goes on.
    (tmp_path / "retries.yaml").write_text(RETRIES_SCENARIO.format(budget=budget), encoding="utf-8")
    runs: dict[str, Path] = {}
    reports: dict[str, Any] = {}
    for name, execute in (("pydantic-ai", None), ("tinyagent", execute_scenario_tinyagent)):
        out = tmp_path / name
        run_suite(RunOptions(paths=(tmp_path / "retries.yaml",), out_dir=out), execute=execute)
        (reports[name],) = jsonio.loads((out / "report.json").read_bytes())["scenarios"]
        runs[name] = out / "scenarios" / "retries"
    errors = [_comparable_error(reports[name]["turns"][0]["error"]) for name in runs]
    assert errors[0] == errors[1]
    assert (errors[0] or {}).get("kind") == ("unexpected_model_behavior" if budget == 1 else None)
    assert _compared_history(runs["tinyagent"]) == _compared_history(runs["pydantic-ai"])
    assert (runs["tinyagent"] / "usage.json").read_bytes() == (runs["pydantic-ai"] / "usage.json").read_bytes()
    assert _events(runs["tinyagent"] / "events.jsonl") == _events(runs["pydantic-ai"] / "events.jsonl")


def _compared_history(folder: Path) -> list[Any]:
    """A scenario's history.json as goldens compare it: without the ids pydantic-ai draws per run."""
    return without_per_run_values(loads_history((folder / "history.json").read_bytes()))
