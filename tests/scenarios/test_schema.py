"""The JSON Schema of scenario files agrees with the loader."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
import yaml

from agentrig.scenarios.schema import SCHEMA_DIALECT, scenario_json_schema


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = scenario_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_schema_header() -> None:
    schema = scenario_json_schema()
    assert schema["$schema"] == SCHEMA_DIALECT
    assert schema["$id"].startswith("urn:agentrig:")
    assert schema["title"] == "agentrig scenario file"
    assert set(schema["$defs"]) >= {"Scenario", "ToolResult", "ModelStep", "Settings"}


def test_descriptions_come_from_field_docstrings() -> None:
    step = scenario_json_schema()["$defs"]["ModelStep"]["properties"]
    assert (
        step["empty"]["description"]
        == "The model answers with no parts at all (exercises empty-response intervention)."
    )


def test_docs_examples_satisfy_the_schema(
    validator: jsonschema.Draft202012Validator, docs_generator: ModuleType
) -> None:
    for example in docs_generator.EXAMPLES:
        document: Any = yaml.safe_load(example.yaml)
        errors = [error.message for error in validator.iter_errors(document)]
        assert errors == [], example.file_name


@pytest.mark.parametrize(
    "document",
    [
        {"name": "x", "turns": [{"user": "hi"}], "typo": 1},
        {"name": "x"},
        {"name": "bad name", "turns": [{"user": "hi"}]},
        {"name": "x", "turns": [{"user": "hi", "model": [{"usage": {"input_tokens": -1}, "text": "a"}]}]},
        [],
    ],
    ids=["unknown-key", "missing-turns", "bad-name", "negative-tokens", "empty-list"],
)
def test_schema_rejects_what_the_loader_rejects(validator: jsonschema.Draft202012Validator, document: Any) -> None:
    assert not validator.is_valid(document)


def test_list_form_is_accepted(validator: jsonschema.Draft202012Validator) -> None:
    ok = {"name": "x", "turns": [{"user": "hi", "model": [{"text": "a"}]}], "tools": {}}
    assert validator.is_valid([ok, {**ok, "name": "y"}])


def test_schema_is_plain_json(tmp_path: Path) -> None:
    from agentrig.runtime.runfolder.jsonio import dumps, loads

    assert loads(dumps(scenario_json_schema())) == scenario_json_schema()


def test_every_valid_scenario_of_the_suite_satisfies_the_schema(validator: jsonschema.Draft202012Validator) -> None:
    """What the loader accepts, editors must not flag: checked on the project's own suite."""
    from agentrig.scenarios.loader import validation_report
    from tests.scenarios.conftest import REPO_ROOT

    suite = REPO_ROOT / "scenarios"
    if not suite.is_dir():
        pytest.skip("no scenarios/ directory in this checkout")
    report = validation_report([suite])
    valid_files = [file.path for file in report.files if file.ok]
    for path in valid_files:
        document: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert [error.message for error in validator.iter_errors(document)] == [], path
