"""The scenario vocabulary for UI turns (`ui:`, `expect.ui`, `expect.ui_events`) and `settings.prepare_history`:
what loads, and bad input as one error naming file, line and field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from agentrig.errors import ScenarioError
from agentrig.scenarios.loader import load_scenario_file, validate_paths
from agentrig.scenarios.ui_model import frontend_tool_names

UI_TURN = """\
name: ui
requires: [ag-ui]
turns:
  - ui:
      protocol: ag-ui
      input:
        threadId: t
        runId: r
        messages: [{id: u1, role: user, content: hi}]
        tools: [{name: confirm, description: Ask., parameters: {type: object}}]
    model:
      - tool_calls: [{id: tc_1, name: confirm}]
        usage: {input_tokens: 1, output_tokens: 1}
"""


def load(tmp_path: Path, text: str) -> ScenarioError | None:
    path = tmp_path / "ui.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    try:
        load_scenario_file(path)
    except ScenarioError as error:
        return error
    return None


def test_a_ui_turn_and_its_expectations_load(tmp_path: Path) -> None:
    text = UI_TURN + textwrap.indent(
        textwrap.dedent("""\
        expect:
          pending_calls: [tc_1]
          ui:
            status: [{when_pydantic_ai: ">=2.44", status: 200}, {when_pydantic_ai: "<2.44", status: 200}]
            events: [{type: TOOL_CALL_START, toolCallName: confirm}, {type: RUN_FINISHED}]
            not_events: [{type: RUN_ERROR}]
        """),
        "    ",
    )
    text += textwrap.dedent("""\
        settings: {prepare_history: false}
        expect:
          ui_events:
            golden: golden/ui.events.json
            versions:
              - when_pydantic_ai: ">=2.63"
                when_ag_ui_protocol: ">=1.0"
                fields: {RUN_STARTED: {protocolVersion: "1.0"}}
              - {when_ag_ui_protocol: "<1.0", fields: {}}
        """)
    assert load(tmp_path, text) is None


def test_a_frontend_tool_is_the_agents_in_its_turn_only(tmp_path: Path) -> None:
    # `confirm` is declared by the turn-1 request: a call to it there is valid, in a plain turn it is a typo.
    path = tmp_path / "frontend.yaml"
    path.write_text(UI_TURN, encoding="utf-8")
    assert validate_paths([path])[1] == []
    plain_turn = "  - user: again\n    model:\n      - tool_calls: [{id: tc_2, name: confirm}]\n"
    path.write_text(UI_TURN + plain_turn + "        usage: {input_tokens: 1, output_tokens: 1}\n", encoding="utf-8")
    (error,) = validate_paths([path])[1]
    assert "turns[1].model[0].tool_calls[0].name: the agent has no tool 'confirm'" in error.message


@pytest.mark.parametrize(
    ("turn", "field", "message"),
    [
        ("  - user: hi\n    ui: {protocol: ag-ui, body: x}\n", "turns[0]",
         "a ui turn takes its conversation from the request: no user"),
        ("  - ui: {protocol: ag-ui, body: x, input: {a: 1}}\n", "turns[0].ui",
         "ui needs exactly one of input, input_file, body (got input, body)"),
        ("  - ui: {protocol: ag-ui}\n", "turns[0].ui", "ui needs exactly one of input, input_file, body (got none)"),
        ("  - ui: {protocol: grpc, body: x}\n", "turns[0].ui.protocol", "'ag-ui' or 'vercel-ai'"),
        ("  - ui: {protocol: ag-ui, body: x}\n    expect: {ui: {events: [{delta: hi}]}}\n", "turns[0].expect.ui.events",
         "event 0 needs a `type`"),
        ("  - ui: {protocol: ag-ui, body: x}\n    expect: {ui: {status: 99}}\n", "turns[0].expect.ui.status",
         "99 is not an HTTP status"),
        ("  - ui: {protocol: ag-ui, body: x}\n    expect: {ui: {status: [{when_pydantic_ai: soon, status: 200}]}}\n",
         "turns[0].expect.ui.status[0].when_pydantic_ai", "'soon' is not a version comparison"),
    ],
)  # fmt: skip
def test_bad_ui_turns_are_located(tmp_path: Path, turn: str, field: str, message: str) -> None:
    error = load(tmp_path, "name: bad\nturns:\n" + turn)
    assert error is not None
    assert ":3:" in error.message or ":4:" in error.message, error.message  # the line of the turn's field
    assert f": {field}: " in error.message, error.message
    assert message in error.message, error.message


def test_a_ui_events_variant_needs_a_condition_and_a_valid_spec(tmp_path: Path) -> None:
    top = "expect:\n  ui_events:\n    golden: g.json\n    versions:\n      - {fields: {}}\n"
    error = load(tmp_path, "name: bad\nturns:\n  - ui: {protocol: ag-ui, body: x}\n" + top)
    assert error is not None
    assert "expect.ui_events: " in error.message
    assert "versions[0] needs when_pydantic_ai or when_ag_ui_protocol" in error.message
    top = "expect:\n  ui_events:\n    golden: g.json\n    versions:\n      - {when_ag_ui_protocol: one, fields: {}}\n"
    error = load(tmp_path, "name: bad\nturns:\n  - ui: {protocol: ag-ui, body: x}\n" + top)
    assert error is not None
    assert "expect.ui_events.versions[0].when_ag_ui_protocol" in error.message


def test_a_missing_input_file_is_a_located_file_error(tmp_path: Path) -> None:
    error = load(tmp_path, "name: bad\nturns:\n  - ui: {protocol: vercel-ai, input_file: requests/missing.json}\n")
    assert error is not None
    assert error.message == f"{tmp_path / 'ui.yaml'}:3:43: turns[0].ui.input_file: file not found: " + str(
        tmp_path / "requests/missing.json"
    )


def test_prepare_history_is_a_boolean(tmp_path: Path) -> None:
    error = load(tmp_path, "name: bad\nsettings: {prepare_history: sometimes}\nturns:\n  - user: hi\n")
    assert error is not None
    assert ": settings.prepare_history: " in error.message


def test_frontend_tool_names_come_from_the_request_or_are_unknown(tmp_path: Path) -> None:
    (tmp_path / "request.json").write_text('{"tools": [{"name": "pick"}, {"nope": 1}]}', encoding="utf-8")
    (loaded,) = load_scenario_file(_write(tmp_path, "  - ui: {protocol: ag-ui, input_file: request.json}\n"))
    request = loaded.scenario.turns[0].ui
    assert request is not None
    assert frontend_tool_names(request, tmp_path) == frozenset({"pick"})
    (raw,) = load_scenario_file(_write(tmp_path, "  - ui: {protocol: ag-ui, body: '{}'}\n"))
    assert raw.scenario.turns[0].ui is not None
    assert frontend_tool_names(raw.scenario.turns[0].ui, tmp_path) is None  # a raw body is not read before the run


def _write(tmp_path: Path, turn: str) -> Path:
    path = tmp_path / "frontend.yaml"
    path.write_text("name: frontend\nturns:\n" + turn, encoding="utf-8")
    return path
