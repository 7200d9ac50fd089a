"""The scenario format's structured output for a self-contained agent: what the agent's output is (a JSON Schema or
a Python type), how the model delivers it (an output tool, the provider's native structured output, or JSON text
the instructions ask for), or several output tools (a union of output types), and validators that ask the model
to try again.

pydantic-ai validates the output against the schema itself, so an output that does not fit gets the retry prompt a
real agent's output type would produce; a validator rule raises `ModelRetry` with its message, as an
`@agent.output_validator` would.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from agentrig.scenarios._strict import AGENT_SPEC_PATTERN, JsonValue
from agentrig.scenarios._strict import Strict as _Strict
from agentrig.scenarios.json_schema_validation import check_json_schema

__all__ = ["OutputMode", "OutputSpec", "OutputTool", "OutputValidatorRule"]

OutputMode = Literal["tool", "native", "prompted", "auto"]
"""pydantic-ai's `ToolOutput`, `NativeOutput` and `PromptedOutput`, and `auto`: the bare type, pydantic-ai's default."""


class OutputValidatorRule(_Strict):
    """A rule of the agent's output validator: when it matches an output, the model is asked to try again with
    `retry` (pydantic-ai's `ModelRetry`). Rules are tried in order; an output no rule matches is accepted."""

    when: JsonValue = None
    """Match outputs whose JSON contains this value (a mapping: every key with a matching value, recursively;
    anything else: equal). A text output is matched as its string. Omitted: any output."""
    contains: str | None = None
    """Match outputs whose text (a structured output's JSON) contains this string."""
    call: int | None = Field(default=None, ge=1)
    """Match only the Nth output the validator sees in the scenario (1-based, every turn counted)."""
    retry: str
    """The message the model is sent (pydantic-ai's `ModelRetry`)."""


class OutputTool(_Strict):
    """One output tool of a union of output types (pydantic-ai's `output_type=[A, ToolOutput(B, name=...)]`): the
    model ends the run by calling any of them, and the output is that tool's value."""

    name: str
    """The tool's name, as the model calls it (pydantic-ai names a bare member `final_result_<Type>`)."""
    schema_: dict[str, JsonValue] | None = Field(default=None, alias="schema")
    """The member's JSON Schema, inline, as `output.schema` (a non-object is wrapped as `{response: ...}`)."""
    type: str | None = Field(default=None, pattern=AGENT_SPEC_PATTERN)
    """The member's type as `module:attribute`, as `output.type`."""
    description: str | None = None
    """The tool's description, as the model sees it."""

    @model_validator(mode="after")
    def _coherent(self) -> OutputTool:
        if (self.schema_ is None) == (self.type is None):
            raise ValueError("an output tool gives its schema or its type (one of them)")
        if self.schema_ is not None:
            check_json_schema(self.schema_, field="schema")
        return self


class OutputSpec(_Strict):
    """The output of a self-contained agent. Without `schema`, `type` or `tools` the output is text (and `validators`
    check the text); with one, it is structured, delivered as `mode` says. A turn ended by an output tool then replays
    without the application's code."""

    schema_: dict[str, JsonValue] | None = Field(default=None, alias="schema")
    """The output's JSON Schema, inline (an object schema is a dict output; any other, e.g. `{type: integer}`, is
    that value, which pydantic-ai's output tool wraps as `{response: ...}`). The output is validated against it as
    pydantic-ai validates a model: a bad output gets pydantic's error details as its retry prompt."""
    type: str | None = Field(default=None, pattern=AGENT_SPEC_PATTERN)
    """The output type as `module:attribute` (a pydantic model, a dataclass, a TypedDict), imported from the
    scenario's folder or the working directory."""
    mode: OutputMode = "tool"
    """How the model delivers it: `tool` (it calls an output tool, `final_result`), `native` (the provider's
    structured output: the answer is JSON text), `prompted` (the instructions ask for JSON text), `auto` (the
    bare type, as `output_type=Model` without a wrapper: the output tool `final_result`, and a text answer is read
    as the output's JSON too, so a text that is not gets its validation errors as the retry)."""
    name: str | None = None
    """The output tool's name (`tool` mode; default `final_result`), or the output's name in the other modes."""
    description: str | None = None
    """The output's description, as the model sees it."""
    tools: tuple[OutputTool, ...] = ()
    """Several output tools (a union of output types, two or more), each with its name and schema or type, instead
    of one `schema`/`type`; `mode` is then `tool`."""
    allow_text: bool = False
    """A plain text answer ends the run too (pydantic-ai's `output_type=[..., str]`)."""
    validators: tuple[OutputValidatorRule, ...] = ()
    """Rules that ask the model to try again (an `@agent.output_validator`), tried in order; see each rule."""

    @model_validator(mode="after")
    def _coherent(self) -> OutputSpec:
        if self.schema_ is not None and self.type is not None:
            raise ValueError("give the output's schema or its type, not both")
        if "tools" in self.model_fields_set:
            self._check_tools()
        structured = self.structured
        if not structured and ({"mode", "name", "description", "allow_text"} & self.model_fields_set):
            raise ValueError("mode, name, description and allow_text describe a structured output: give schema or type")
        if self.mode == "auto" and ({"name", "description"} & self.model_fields_set):
            raise ValueError("mode auto is the bare type, which has no name or description: use mode tool")
        if self.schema_ is not None:
            check_json_schema(self.schema_, field="schema")
        return self

    def _check_tools(self) -> None:
        if {"schema_", "type", "name", "description"} & self.model_fields_set:
            raise ValueError(
                "tools lists the output tools, each with its name and schema or type: give no schema,"
                " type, name or description beside it"
            )
        if self.mode != "tool":
            raise ValueError(f"several output tools are mode tool, not {self.mode}")
        if len(self.tools) < 2:
            raise ValueError("tools lists two output tools or more; one is output.schema (or type) with its name")
        names = [tool.name for tool in self.tools]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"two output tools are named {repeated[0]!r}")

    @property
    def structured(self) -> bool:
        """The output is a schema or a type, or several output tools (not text)."""
        return self.schema_ is not None or self.type is not None or bool(self.tools)

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The output tools the model calls (`tool` and `auto` modes): `tools`' names, else `name`, else
        pydantic-ai's `final_result`."""
        if self.tools:
            return tuple(tool.name for tool in self.tools)
        return ((self.name or "final_result"),) if self.structured and self.mode in ("tool", "auto") else ()
