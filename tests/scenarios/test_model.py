"""The scenario models: field docs, JSON Schema, and agreement with the runtime's error kinds."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from pydantic import BaseModel, ValidationError

from agentrig.runtime.history.events import EVENT_TYPES
from agentrig.runtime.history.run_records import RunErrorKind
from agentrig.scenarios import model
from agentrig.scenarios.event_model import EventTypeName
from agentrig.scenarios.field_docs import field_docstrings

MODELS: list[type[BaseModel]] = [
    value
    for value in vars(model).values()
    if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == model.__name__
    and not value.__name__.startswith("_")
]  # fmt: skip


@pytest.mark.parametrize("model_class", MODELS, ids=lambda m: m.__name__)
def test_every_field_has_a_description(model_class: type[BaseModel]) -> None:
    docstrings = field_docstrings(model_class)
    undocumented = [name for name in model_class.model_fields if not docstrings.get(name)]
    assert undocumented == [], f"{model_class.__name__}: add a docstring under {undocumented}"


def test_error_kinds_match_the_runtime() -> None:
    assert set(get_args(model.RunErrorKind)) == set(get_args(RunErrorKind))


def test_event_type_names_match_the_event_log() -> None:
    # The scenario format cannot import the runtime (layering), so the two lists are kept equal here.
    assert get_args(EventTypeName) == EVENT_TYPES


def test_json_schema_uses_the_return_alias() -> None:
    schema: dict[str, Any] = model.Scenario.model_json_schema()
    properties = schema["$defs"]["ToolResult"]["properties"]
    assert "return" in properties
    assert "return_" not in properties
    assert properties["return"]["description"] == "The value the tool returns."


def test_return_alias_validates_and_counts_as_an_outcome() -> None:
    result = model.ToolResult.model_validate({"return": None})
    assert result.return_ is None
    with pytest.raises(ValidationError, match="exactly one of return, retry, fail, defer"):
        model.ToolResult.model_validate({"when": {"a": 1}})


def test_step_cannot_be_both_response_and_error() -> None:
    with pytest.raises(ValidationError, match="not both"):
        model.ModelStep.model_validate({"text": "hi", "error": {"kind": "auth"}})


@pytest.mark.parametrize("model_class", MODELS, ids=lambda m: m.__name__)
def test_json_schema_descriptions_are_the_field_docstrings(model_class: type[BaseModel]) -> None:
    schema: dict[str, Any] = model_class.model_json_schema()
    properties = schema["properties"]
    docstrings = field_docstrings(model_class)
    for name, info in model_class.model_fields.items():
        assert properties[info.alias or name]["description"] == docstrings[name]


def test_inherited_fields_keep_their_docstrings() -> None:
    docstrings = field_docstrings(model.ScenarioExpectations)
    assert docstrings["output"] == "Checks on the output text."
    assert docstrings["golden"].startswith("Path (relative to the scenario file)")
