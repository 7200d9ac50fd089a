"""A run's output as a turn records it: the text, and for a structured output its JSON and type name.

A str output is recorded as it is. Any other output (a pydantic model, a dataclass, a list, a member of a
union) is recorded as its JSON (pydantic's `to_jsonable_python`, so dates and nested models serialize as
pydantic would) plus the name of its type, so a scenario can check the value exactly or in part, validate
it against a JSON schema, and tell which member of a union came back. The text of a structured output is
its compact JSON, so text checks (`contains`, `regex`) see the same values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_core import to_jsonable_python

from agentrig.runtime.history.canonical import JsonValue
from agentrig.runtime.history.jsonio import dumps

__all__ = ["RecordedOutput", "recorded_output"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedOutput:
    """How a turn records its output."""

    text: str | None = None
    """The output text (a structured output's JSON); None when there is no output."""
    json: JsonValue = None
    """A structured output's JSON value; None for a str output."""
    type_name: str | None = None
    """`str`, or the qualified name of a structured output's type (`module.Class`)."""


def type_name(value: Any) -> str:
    kind = type(value)
    if kind.__module__ in ("builtins", "__main__"):
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def recorded_output(output: Any, *, pending_deferred: bool) -> RecordedOutput:
    """The record of `output` (nothing for a run that ended with calls deferred to the host)."""
    if output is None or pending_deferred:
        return RecordedOutput()
    if isinstance(output, str):
        return RecordedOutput(text=output, type_name="str")
    value: JsonValue = to_jsonable_python(output, fallback=str)
    text = dumps(value).decode()
    return RecordedOutput(text=text, json=value, type_name=type_name(output))
