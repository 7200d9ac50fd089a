"""The scenario language of issue 29 at run time: what `expect_input.attachments`, the output spec and its validator
rules decide, what a run refuses with one line, and what the tinyagent engine refuses and why."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentrig.errors import ScenarioError
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import execute_scenario
from agentrig.runtime.engine.tinyagent_engine.agents import EngineUnsupported
from agentrig.runtime.engine.tinyagent_engine.execution import execute_scenario_tinyagent, unsupported_features
from agentrig.runtime.engine.tool_rules import json_contains, matching_output_rule
from agentrig.runtime.history.canonical import RetryPromptPart
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.scenarios.model import OutputValidatorRule
from tests.runtime.engine_helpers import execute, load_yaml


def _attachment_checks(tmp_path: Path, expected: str) -> list[tuple[bool, object]]:
    (tmp_path / "cat.png").write_bytes(b"cat")
    (tmp_path / "dog.png").write_bytes(b"dog")
    loaded = load_yaml(
        tmp_path,
        f"""\
        name: seen
        turns:
          - user: ["look", {{file: cat.png}}, {{image_url: "https://x.example/a.png"}}]
            model:
              - text: ok
                expect_input: {{attachments: {expected}}}
                usage: {{input_tokens: 1, output_tokens: 1}}
        """,
    )
    (turn,) = execute(loaded).turns
    return [(check.passed, check.actual) for check in turn.model_input_checks if check.name.endswith("attachments")]


def test_the_attachments_the_model_received_are_checked_exactly_in_order(tmp_path: Path) -> None:
    ((passed, actual),) = _attachment_checks(tmp_path, '[{file: cat.png}, {image_url: "https://x.example/a.png"}]')
    assert passed
    assert actual == ["<image/png, 3 bytes, sha256:77af778b51ab>", "<image-url https://x.example/a.png>"]


@pytest.mark.parametrize(
    "expected",
    [
        "[{file: dog.png}, {image_url: 'https://x.example/a.png'}]",  # other content
        "[{image_url: 'https://x.example/a.png'}, {file: cat.png}]",  # other order
        "[{file: cat.png}]",  # one missing
        "[{file: cat.png, media_type: image/jpeg}, {image_url: 'https://x.example/a.png'}]",  # other media type
        "[{file: cat.png, identifier: mine}, {image_url: 'https://x.example/a.png'}]",  # other identifier
    ],
)
def test_other_attachments_fail_the_check(tmp_path: Path, expected: str) -> None:
    ((passed, _),) = _attachment_checks(tmp_path, expected)
    assert not passed


def test_an_output_type_that_does_not_import_is_an_error_at_its_line(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """\
        name: typed
        output:
          type: no_such_module:Model
        turns: [{user: hi, model: [{text: x}]}]
        """,
    )
    with pytest.raises(ScenarioError) as raised:
        execute(loaded)
    assert str(raised.value).startswith(f"{loaded.path}:3: output.type: module 'no_such_module' not found")


def test_several_output_tools_are_a_union_whose_members_keep_the_names_given(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(
        "from pydantic import BaseModel\n\nclass Point(BaseModel):\n    x: int\n    y: int\n", encoding="utf-8"
    )
    loaded = load_yaml(
        tmp_path,
        """\
        name: union
        output:
          tools:
            - {name: final_result_Point, type: shapes:Point}
            - {name: count, schema: {type: integer}}
        turns:
          - user: where
            model:
              - tool_calls: [{id: p1, name: final_result_Point, args: {x: one, y: 2}}]
              - tool_calls: [{id: p2, name: final_result_Point, args: {x: 1, y: 2}}]
          - user: how many
            model: [{tool_calls: [{id: c1, name: count, args: {response: 3}}]}]
        """,
    )
    execution = execute(loaded)
    assert [(turn.output_type, turn.output) for turn in execution.turns] == [
        ("shapes.Point", '{"x":1,"y":2}'),
        ("int", "3"),
    ]
    retries = [
        part.tool_name
        for message in execution.session.messages
        for part in message.parts
        if isinstance(part, RetryPromptPart)
    ]
    assert retries == ["final_result_Point"]  # the member called judged its own arguments


def test_an_output_tool_type_that_does_not_import_is_an_error_at_its_line(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """\
        name: typed
        output:
          tools:
            - {name: a, schema: {type: integer}}
            - {name: b, type: no_such_module:Model}
        turns: [{user: hi, model: [{text: x}]}]
        """,
    )
    with pytest.raises(ScenarioError) as raised:
        execute(loaded)
    assert str(raised.value).startswith(f"{loaded.path}:5: output.tools[1].type: module 'no_such_module' not found")


def test_two_agents_that_differ_only_in_their_output_are_never_one_cached_agent(tmp_path: Path) -> None:
    cache = AgentCache()
    outputs = {}
    for schema in ("{type: integer}", "{type: string}"):
        loaded = load_yaml(
            tmp_path,
            f"""\
            name: cached
            output: {{schema: {schema}, mode: native}}
            turns:
              - user: hi
                model: [{{text: '{{"response": "7"}}', usage: {{input_tokens: 1, output_tokens: 1}}}}]
            """,
        )
        (turn,) = asyncio.run(execute_scenario(loaded, cache=cache)).turns
        outputs[schema] = (turn.output, turn.output_type)
    assert outputs == {"{type: integer}": ("7", "int"), "{type: string}": ("7", "str")}
    assert len(cache) == 2


@pytest.mark.parametrize(
    ("expected", "actual", "contained"),
    [
        ({"a": 1}, {"a": 1, "b": 2}, True),
        ({"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [1, {"c": 2, "d": 3}]}, "e": 0}, True),
        ({"a": [1]}, {"a": [1, 2]}, False),  # lists keep their length
        ({"a": True}, {"a": 1}, False),  # JSON's true is not 1
        ({"a": 1}, {"a": 1.0}, True),
        ("Yes.", "Yes.", True),
        ("Yes", "Yes.", False),
    ],
)
def test_an_output_rule_matches_json_as_it_reads(expected: object, actual: object, contained: bool) -> None:
    assert json_contains(expected, actual) is contained


def test_output_rules_try_when_contains_and_call_in_order() -> None:
    rules = (
        OutputValidatorRule(call=2, retry="second"),
        OutputValidatorRule(when={"status": "unknown"}, retry="look it up"),
        OutputValidatorRule(contains="TODO", retry="finish it"),
    )
    assert matching_output_rule(rules, {"status": "unknown"}, '{"status":"unknown"}', 1) is rules[1]
    assert matching_output_rule(rules, {"status": "unknown"}, '{"status":"unknown"}', 2) is rules[0]
    assert matching_output_rule(rules, "TODO later", "TODO later", 3) is rules[2]
    assert matching_output_rule(rules, {"status": "ok"}, '{"status":"ok"}', 3) is None


def test_the_tinyagent_engine_names_what_it_cannot_run(tmp_path: Path) -> None:
    (tmp_path / "a.pdf").write_bytes(b"%PDF")
    (tmp_path / "a.png").write_bytes(b"png")
    loaded = load_yaml(
        tmp_path,
        """\
        name: refused
        output: {schema: {type: object}}
        turns:
          - user: ["x", {file: a.png}, {file: a.pdf}, {document_url: "https://x/c.pdf"}, {image_url: "https://x/b.png"}]
            model: [{text: x}]
        """,
    )
    assert unsupported_features(loaded.scenario) == [
        "a structured output (`output.schema` / `output.type`: tinyagent's loop ends on text, with no output tool)",
        "turn 1: attachments other than images (application/pdf, document-url; tinyagent's user messages hold text"
        " and images)",
    ]


def test_the_tinyagent_engine_refuses_several_output_tools_in_one_line(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """\
        name: union
        output: {tools: [{name: a, schema: {type: object}}, {name: b, schema: {type: integer}}]}
        turns: [{user: hi, model: [{tool_calls: [{id: a1, name: a, args: {}}]}]}]
        """,
    )
    with pytest.raises(EngineUnsupported) as raised:
        asyncio.run(execute_scenario_tinyagent(loaded))
    assert str(raised.value) == (
        "the tinyagent engine does not run several output tools (`output.tools`: a union of output types;"
        " tinyagent's loop ends on text, with no output tool)"
    )


def test_output_validator_rules_run_on_tinyagent_with_pydantic_ai_s_budget(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """\
        name: validated
        output: {validators: [{contains: draft, retry: Finish it.}]}
        settings: {output_retries: 1}
        turns:
          - user: Write it.
            model:
              - {text: a draft, usage: {input_tokens: 1, output_tokens: 1}}
              - {text: another draft, usage: {input_tokens: 1, output_tokens: 1}}
        """,
    )
    assert unsupported_features(loaded.scenario) == []
    pydantic_ai = execute(loaded)
    tinyagent = asyncio.run(execute_scenario_tinyagent(loaded))
    for run in (pydantic_ai, tinyagent):
        (turn,) = run.turns
        assert turn.error is not None
        assert (turn.error.kind, turn.error.message) == (
            "unexpected_model_behavior",
            "Exceeded maximum output retries (1)",
        )
    assert without_per_run_values(tinyagent.session.messages) == without_per_run_values(pydantic_ai.session.messages)
