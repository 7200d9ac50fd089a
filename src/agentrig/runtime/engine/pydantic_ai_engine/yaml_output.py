"""A self-contained agent's output (`output:`), in pydantic-ai's terms: the output type and its validator.

- `schema`: a JSON Schema becomes a type pydantic-ai treats as it treats a real one: the model sees the schema as
  written (an object schema is "model-like", pydantic-ai's `StructuredDict` convention; any other is wrapped as
  `{response: ...}` by the output tool, as an `int` output is), and the output is validated by the schema's pydantic
  validator (`scenarios.json_schema_validation`), so a bad output gets the retry prompt a real model would.
- `type`: the `module:attribute` the scenario names, imported from the scenario's folder or the working directory.
- `tools`: a union of output types, each member a `ToolOutput` with the tool's name as the scenario gives it, so
  the model calls exactly the names the source's agent had (pydantic-ai's `final_result_<Type>` included).
- `mode`: `ToolOutput`, `NativeOutput` or `PromptedOutput` around it, or none (`auto`: pydantic-ai's default for
  a bare type, whose output tool is `final_result` and which reads a text answer as the output's JSON);
  `allow_text` adds `str`, and a tool that may defer adds `DeferredToolRequests` (the run may then end waiting
  for the host).
- `validators`: one `@agent.output_validator` trying the rules in order; a matching rule raises `ModelRetry`. The
  Nth validation (`call`) is counted in the run's `ToolCallCounts`, over the whole scenario; a partial output
  (streaming) is never judged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_ai import DeferredToolRequests, ModelRetry, NativeOutput, PromptedOutput, RunContext, ToolOutput
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.output import StructuredDict
from pydantic_core import CoreSchema, to_jsonable_python

from agentrig.errors import ScenarioError
from agentrig.runtime.engine.module_loading import resolve_attribute
from agentrig.runtime.engine.pydantic_ai_engine.deps import offline_import
from agentrig.runtime.engine.tool_rules import ToolCallCounts, matching_output_rule
from agentrig.runtime.runfolder.jsonio import dumps
from agentrig.scenarios.json_schema_validation import core_schema_for
from agentrig.scenarios.output_model import OutputSpec

__all__ = ["add_output_validator", "output_type"]


def output_type(
    spec: OutputSpec | None,
    *,
    may_defer: bool,
    search_paths: Sequence[Path] = (),
    scenario_path: Path | None = None,
    line: int | None = None,
    line_of: Callable[[int], int | None] | None = None,
    offline: bool = False,
) -> Any:
    """The `output_type` of the self-contained agent (`offline`: import `type` with placeholder provider keys;
    `line`: the line of `output.type`, `line_of(i)`: of `output.tools[i].type`)."""
    members: list[Any] = []
    if spec is None or not spec.structured:
        members.append(str)
    elif spec.tools:
        for index, tool in enumerate(spec.tools):
            value_type = _value_type(
                tool.schema_,
                tool.type,
                search_paths,
                scenario_path,
                line_of(index) if line_of is not None else None,
                field=f"output.tools[{index}].type",
                offline=offline,
            )
            members.append(ToolOutput(value_type, name=tool.name, description=tool.description))
        if spec.allow_text:
            members.append(str)
    else:
        value_type = _value_type(spec.schema_, spec.type, search_paths, scenario_path, line, offline=offline)
        if spec.mode == "auto":
            members.append(value_type)
        else:
            wrapper = {"tool": ToolOutput, "native": NativeOutput, "prompted": PromptedOutput}[spec.mode]
            members.append(wrapper(value_type, name=spec.name, description=spec.description))
        if spec.allow_text:
            members.append(str)
    if may_defer:
        members.append(DeferredToolRequests)
    return members[0] if len(members) == 1 else members


def _value_type(
    schema: Mapping[str, Any] | None,
    spec: str | None,
    search_paths: Sequence[Path],
    scenario_path: Path | None,
    line: int | None,
    *,
    field: str = "output.type",
    offline: bool,
) -> Any:
    if schema is not None:
        return schema_type(schema)

    def fail(message: str) -> ScenarioError:
        return ScenarioError(message, path=scenario_path, line=line, field=field)

    with offline_import(offline):
        return resolve_attribute(spec or "", search_paths=search_paths, fail=fail)


def schema_type(schema: Mapping[str, Any]) -> type[Any]:
    """A type whose JSON Schema is `schema` and whose values are validated by it."""
    validation = core_schema_for(schema)

    def core(_cls: type[Any], _source: Any, _handler: GetCoreSchemaHandler) -> CoreSchema:
        return validation

    if schema.get("type") == "object":
        # StructuredDict keeps pydantic-ai's own handling of the schema ($defs inlined, a title as the name);
        # only the validation (a plain dict there) is replaced.
        base: Any = StructuredDict(dict(schema))
        return type("JsonSchemaOutput", (base,), {"__get_pydantic_core_schema__": classmethod(core)})

    def json_schema(_cls: type[Any], _core: CoreSchema, _handler: GetJsonSchemaHandler) -> dict[str, Any]:
        return dict(schema)

    namespace = {
        "__get_pydantic_core_schema__": classmethod(core),
        "__get_pydantic_json_schema__": classmethod(json_schema),
    }
    return type("JsonSchemaValue", (), namespace)


def add_output_validator(agent: AbstractAgent[Any, Any], spec: OutputSpec | None) -> None:
    """Register the spec's validator rules on `agent` (nothing without rules)."""
    if spec is None or not spec.validators:
        return
    rules = spec.validators

    def validate(ctx: RunContext[Any], output: Any) -> Any:
        if getattr(ctx, "partial_output", False) or isinstance(output, DeferredToolRequests):
            return output
        counts = ctx.deps if isinstance(ctx.deps, ToolCallCounts) else ToolCallCounts()
        value = output if isinstance(output, str) else to_jsonable_python(output, fallback=str)
        text = value if isinstance(value, str) else dumps(value).decode()
        rule = matching_output_rule(rules, value, text, counts.next_output_validation())
        if rule is not None:
            raise ModelRetry(rule.retry)
        return output

    agent.output_validator(validate)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
