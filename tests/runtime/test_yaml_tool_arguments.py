"""A YAML tool validates the model's arguments against its JSON Schema exactly as pydantic-ai validates a real
function's: the same error details, hence the same retry prompt in the history, on every pinned version."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import date, datetime, time
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import ValidationError
from pydantic_ai import Agent, Tool, capture_run_messages
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentrig.runtime.history.canonical import RetryPromptPart
from agentrig.runtime.models.conversion import to_canonical
from agentrig.runtime.runfolder.jsonio import dumps
from agentrig.scenarios.json_schema_validation import schema_validator
from tests.runtime.engine_helpers import execute, load_yaml


def search(
    query: str,
    limit: int = 10,
    sort: Literal["relevance", "price"] | None = None,
    tags: list[str] = [],  # noqa: B006 - a default pydantic copies, as a real tool would declare it
    page: int | str | None = None,
) -> str:
    """Search the catalogue."""
    return "found"


TOOL = Tool(search)
SCHEMA: dict[str, Any] = TOOL.function_schema.json_schema

BAD_ARGUMENTS: list[dict[str, Any]] = [
    {},
    {"query": 1, "limit": "x", "sort": "cheap", "tags": "a", "colour": "red", "page": [1]},
    {"query": "lamp", "limit": 3.5, "tags": [1, "b"]},
    {"query": None},
]


def _errors(validator: Any, arguments: Mapping[str, Any]) -> Any:
    try:
        return validator.validate_python(dict(arguments))
    except ValidationError as error:
        return error.errors(include_url=False, include_context=False)


@pytest.mark.parametrize("arguments", BAD_ARGUMENTS)
def test_the_schema_s_validator_reports_what_the_function_s_reports(arguments: dict[str, Any]) -> None:
    assert _errors(schema_validator(SCHEMA), arguments) == _errors(TOOL.function_schema.validator, arguments)


def test_valid_arguments_get_the_function_s_defaults() -> None:
    assert schema_validator(SCHEMA).validate_python(
        {"query": "lamp"}
    ) == TOOL.function_schema.validator.validate_python({"query": "lamp"})


def _real_tool_retry(arguments: dict[str, Any]) -> RetryPromptPart:
    """The retry prompt a real pydantic-ai agent writes when the model calls `search` with `arguments`."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("search", arguments, tool_call_id="tc_1")])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), tools=[TOOL])
    with capture_run_messages() as messages:
        asyncio.run(agent.run("go"))  # not run_sync: 2.38's leaves its event loop open
    retry = to_canonical(messages)[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    return retry


@pytest.mark.parametrize("arguments", BAD_ARGUMENTS[1:])
def test_a_scripted_bad_call_gets_the_retry_prompt_a_real_tool_gets(tmp_path: Path, arguments: dict[str, Any]) -> None:
    loaded = load_yaml(
        tmp_path,
        f"""\
        name: yaml-search
        tools:
          search:
            parameters: {dumps(SCHEMA).decode()}
            results: [{{return: found}}]
        turns:
          - user: go
            model:
              - tool_calls: [{{id: tc_1, name: search, args: {dumps(arguments).decode()}}}]
                usage: {{input_tokens: 1, output_tokens: 1}}
              - text: done
                usage: {{input_tokens: 1, output_tokens: 1}}
        """,
    )
    history = execute(loaded).session.messages
    assert history[2].parts == (_real_tool_retry(arguments),)


def test_validate_args_false_lets_every_call_reach_the_rules(tmp_path: Path) -> None:
    loaded = load_yaml(
        tmp_path,
        """\
        name: raw
        tools:
          search:
            validate_args: false
            parameters: {type: object, properties: {query: {type: string}}, required: [query]}
            results: [{when: {colour: red}, return: found red}]
        turns:
          - user: go
            model:
              - tool_calls: [{id: tc_1, name: search, args: {colour: red}}]
                usage: {input_tokens: 1, output_tokens: 1}
              - text: done
                usage: {input_tokens: 1, output_tokens: 1}
        """,
    )
    history = execute(loaded).session.messages
    assert history[2].parts[0].content == "found red"  # pyright: ignore[reportAttributeAccessIssue]


def book(when: datetime, day: date, at: time) -> str:
    """Book a slot."""
    return "booked"


BOOK = Tool(book)


@pytest.mark.parametrize(
    "arguments",
    [
        {"when": "9am", "day": "2024-13-01", "at": "25:00"},
        {"when": "2024-11-22T09:00:00-08:00", "day": "tomorrow", "at": "09:00"},
        {"when": [], "day": "2024-11-22", "at": None},
    ],
)
def test_date_and_time_formats_are_checked_as_pydantic_checks_the_fields(arguments: dict[str, Any]) -> None:
    schema = BOOK.function_schema.json_schema
    assert _errors(schema_validator(schema), arguments) == _errors(BOOK.function_schema.validator, arguments)


def test_a_valid_date_or_time_is_kept_as_the_model_wrote_it() -> None:
    arguments = {"when": "2024-11-22T09:00:00-08:00", "day": "2024-11-22", "at": "09:30"}
    assert schema_validator(BOOK.function_schema.json_schema).validate_python(arguments) == arguments
