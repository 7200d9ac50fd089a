"""A run's output as a turn records it: the text, and for a structured output its JSON and type name.

A str output is recorded as it is. Any other output (a pydantic model, a dataclass, a list, a member of a
union) is recorded as its JSON (pydantic's `to_jsonable_python`, so dates and nested models serialize as
pydantic would) plus the name of its type, so a scenario can check the value exactly or in part, validate
it against a JSON schema, and tell which member of a union came back. The text of a structured output is
its compact JSON, so text checks (`contains`, `regex`) see the same values. A None output is an output too
(`null`, type `NoneType`), and so is the `DeferredToolRequests` of a turn that paused for the host.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_jsonable_python

from agentrig.runtime.history.canonical import JsonValue
from agentrig.runtime.runfolder.jsonio import dumps

__all__ = ["DEFERRED_TYPE_NAME", "RecordedOutput", "recorded_output"]


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


DEFERRED_TYPE_NAME = "pydantic_ai.DeferredToolRequests"
"""The type name of a turn that paused with calls deferred to the host (its public import path, the same in
every version; the class lives in a private module)."""


def recorded_output(output: Any, *, pending_deferred: bool, ended_normally: bool = True) -> RecordedOutput:
    """The record of `output`: nothing when the run ended without one (an error, an interruption).

    A run that ended normally with None (an `X | None` output type) has an output: `null`, of type
    `NoneType`. A run that paused with calls deferred to the host returned pydantic-ai's
    `DeferredToolRequests`, recorded as the calls it holds (`_deferred_document`).
    """
    if pending_deferred:
        value = _deferred_document(output)
        return RecordedOutput(text=dumps(value).decode(), json=value, type_name=DEFERRED_TYPE_NAME)
    if output is None and not ended_normally:
        return RecordedOutput()
    if isinstance(output, str):
        return RecordedOutput(text=output, type_name="str")
    value: JsonValue = to_jsonable_python(output, fallback=str)
    return RecordedOutput(text=dumps(value).decode(), json=value, type_name=type_name(output))


def _deferred_document(output: Any) -> JsonValue:
    """`{"calls": [...], "approvals": [...]}`, each call `{tool_call_id, tool_name, args}`, plus `metadata` when
    a tool set any. Read field by field (not pydantic's dump of the dataclass): the tool-call parts and the
    dataclass gain fields between pydantic-ai versions, and the document must not change with them."""
    document: dict[str, JsonValue] = {
        kind: [_deferred_call(call) for call in getattr(output, kind, ())] for kind in ("calls", "approvals")
    }
    metadata = getattr(output, "metadata", None)
    if metadata:
        document["metadata"] = to_jsonable_python(metadata, fallback=str)
    return document


def _deferred_call(call: Any) -> JsonValue:
    args: Any = call.args
    if isinstance(args, str):
        with contextlib.suppress(ValueError):  # arguments that are not JSON are recorded as the model sent them
            args = json.loads(args) if args.strip() else {}
    return {
        "tool_call_id": call.tool_call_id,
        "tool_name": call.tool_name,
        "args": to_jsonable_python(args if args is not None else {}, fallback=str),
    }
