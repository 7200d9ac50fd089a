"""What counts as a tool call, one definition per field (docs/scenarios.md):

- `tool_calls` expectations and `expect_input.tools`: every tool the model can call, output tools included;
- `usage.tool_calls`: function tool calls that ran and returned (pydantic-ai's own count), on a failed turn too.
"""

from __future__ import annotations

from pathlib import Path

from tests.runtime.engine_helpers import execute, load_yaml

STRUCTURED = """
name: structured
agent: tests.runtime.fixtures_agents:build_structured_agent
turns:
  - user: Where is A-1?
    model:
      - expect_input: {tools: [final_result, order_status]}
        tool_calls: [{id: o1, name: order_status, args: {order_id: A-1}}]
      - tool_calls: [{id: f1, name: final_result, args: {status: shipped}}]
    expect:
      tool_calls: {sequence: [{name: order_status}, {name: final_result}]}
"""


def test_expect_input_tools_lists_output_tools_as_tool_calls_counts_them(tmp_path: Path) -> None:
    execution = execute(load_yaml(tmp_path, STRUCTURED))

    turn = execution.turns[0]
    assert turn.error is None, turn.error
    assert [(c.name, c.passed, c.actual) for c in turn.model_input_checks] == [
        ("turn 1, step 1: input.tools", True, ["final_result", "order_status"])
    ]
    assert [c.tool_name for c in turn.tool_calls] == ["order_status", "final_result"]
    assert turn.usage.tool_calls == 1  # the output tool is called, but it is not a function tool that ran


RETRIED_THEN_FAILED = """
name: counted
tools:
  fetch:
    results:
      - call: 1
        retry: try again
      - return: fetched
turns:
  - user: Fetch twice.
    model:
      - tool_calls: [{id: a1, name: fetch}]
      - tool_calls: [{id: a2, name: fetch}]
      - text: Done.
  - user: Once more, then the provider fails.
    model:
      - tool_calls: [{id: b1, name: fetch}]
      - error: {kind: server_error}
"""


def test_usage_tool_calls_counts_calls_that_returned_on_completed_and_failed_turns(tmp_path: Path) -> None:
    execution = execute(load_yaml(tmp_path, RETRIED_THEN_FAILED))

    completed, failed = execution.turns
    assert completed.error is None
    assert completed.usage.tool_calls == 1  # a1 was answered with a retry: it did not return
    assert failed.error is not None
    assert failed.error.kind == "server_error"
    assert failed.usage.tool_calls == 1  # b1 returned before the provider failed
    assert execution.session.session_total_usage.tool_calls == 2
