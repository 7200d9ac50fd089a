"""The scenario vocabulary for the host's actions: steering, cancel points, per-version expectations,
capabilities and extras. Bad input is one located error."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from agentrig.errors import ScenarioError
from agentrig.scenarios.loader import load_scenario_file
from agentrig.scenarios.version_spec import parse_version_spec, version_matches

BASE = """\
name: controls
tools:
  notify: {results: [{return: ok}]}
turns:
  - user: go
    model:
      - tool_calls: [{id: n1, name: notify}]
        usage: {input_tokens: 1, output_tokens: 1}
      - text: done
        usage: {input_tokens: 1, output_tokens: 1}
"""


def load(tmp_path: Path, turn_extra: str = "", top_extra: str = "") -> ScenarioError | None:
    text = BASE + textwrap.indent(textwrap.dedent(turn_extra), "    ") + textwrap.dedent(top_extra)
    path = tmp_path / "controls.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_scenario_file(path)
    except ScenarioError as error:
        return error
    return None


def test_valid_controls_load(tmp_path: Path) -> None:
    error = load(
        tmp_path,
        """\
        steer:
          - {text: a, from_call: n1}
          - {text: b, after_call: n1}
          - {text: c, after_request: 0}
        cancel: {during_response: 2, after_chunks: 1}
        expect:
          steering:
            - {text: a, request: 2, stored: [{when_pydantic_ai: ">=2.40,<2.59", placement: own_request}]}
          cancelled: {partial_text: "do", unresolved_calls: []}
          pending_calls: []
        """,
        'capabilities: ["pkg.mod:factory"]\nhistory_processors: ["pkg.mod:keep"]\nrequires: [ag-ui, harness]\n',
    )
    assert error is None


@pytest.mark.parametrize(
    ("turn_extra", "field", "message"),
    [
        ("steer: [{text: a, from_call: nope}]", "turns[0]", "no scripted step of this turn makes the call 'nope'"),
        ("steer: [{text: a, after_request: 2}]", "turns[0]", "after_request 2 needs a request after it"),
        ("steer: [{text: a}]", "turns[0].steer[0]", "exactly one of from_call, after_call, after_request"),
        ("steer: [{text: a, from_call: n1, after_request: 1}]", "turns[0].steer[0]", "got from_call, after_request"),
        ("cancel: {during_call: nope}", "turns[0]", "makes the call 'nope'"),
        ("cancel: {before_request: 4}", "turns[0]", "before_request 4 is never reached"),
        ("cancel: {during_response: 3}", "turns[0]", "answers 2 request(s), not 3"),
        ("cancel: {before_request: 1, after_chunks: 2}", "turns[0].cancel", "after_chunks belongs to during_response"),
        (
            "expect: {steering: [{text: a, stored: [{when_pydantic_ai: 'about 2.6', placement: own_request}]}]}",
            "turns[0].expect.steering[0].stored",
            "'about 2.6' is not a version comparison",
        ),
        ("expect: {steering: [{text: a, stored: elsewhere}]}", "turns[0].expect.steering[0].stored", ""),
    ],
)
def test_bad_controls_are_one_located_error(tmp_path: Path, turn_extra: str, field: str, message: str) -> None:
    error = load(tmp_path, turn_extra)
    assert error is not None
    assert str(error).startswith(f"{tmp_path / 'controls.yaml'}:"), str(error)
    assert error.line is not None
    assert error.line >= 5
    assert (error.field or "").startswith(field), error.field
    assert message in str(error)
    assert "\n" not in str(error)


@pytest.mark.parametrize(
    ("top_extra", "field"),
    [
        ('capabilities: ["not a spec"]\n', "capabilities[0]"),
        ('history_processors: ["module_without_attribute"]\n', "history_processors[0]"),
        ("requires: [tensorflow]\n", "requires[0]"),
    ],
)
def test_bad_composition_is_one_located_error(tmp_path: Path, top_extra: str, field: str) -> None:
    error = load(tmp_path, "", top_extra)
    assert error is not None
    assert error.field == field
    assert error.line == BASE.count("\n") + 1


@pytest.mark.parametrize(
    ("spec", "version", "matches"),
    [
        ("<2.59", (2, 58, 0), True),
        ("<2.59", (2, 59, 0), False),
        (">=2.59", (2, 68, 0), True),
        (">=2.40,<2.59", (2, 38, 0), False),
        (">=2.40,<2.59", (2, 40, 0), True),
        ("==2.38.0", (2, 38, 0), True),
        ("!=2.38", (2, 38, 0), False),
        ("> 2.60.1", (2, 60, 1), False),
    ],
)
def test_version_specs(spec: str, version: tuple[int, int, int], matches: bool) -> None:
    assert version_matches(spec, version) is matches


@pytest.mark.parametrize("spec", ["", "2.59", "~=2.59", "<2.x", ">=2.40;<2.59"])
def test_bad_version_specs(spec: str) -> None:
    with pytest.raises(ValueError, match="is not a version comparison"):
        parse_version_spec(spec)
