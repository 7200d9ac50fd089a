"""A JSON Schema for a tool's arguments or an output, inferred from what the source shows, when the source did not
record the schema (a recording records it; a pydantic-ai dump or a session file does not).

The evidence: the values the real schema accepted (the calls that reached the tool, the outputs the run took) and
the values it rejected, each with the validation errors pydantic gave the model (a retry prompt whose content is a
list of errors). Each property is typed by the values it was seen with; each error says one more thing of the
schema (`missing`: the property is required; `int_parsing`: it is an integer; `less_than_equal`: its maximum, read
from the message; `extra_forbidden`: no other keys; ...). The schema is then checked against all of the evidence
with the validator a YAML tool or output uses (`scenarios.json_schema_validation`): every accepted value must pass
unchanged, every rejected one must fail with exactly its recorded errors (type, location and message, in order).
A schema that does not reproduce the source exactly is not offered: the caller refuses the source instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from pydantic_core import ValidationError

from agentrig.scenarios.json_schema_validation import schema_validator

__all__ = ["Rejection", "infer_schema", "json_type", "seen_types_schema"]


@dataclass(frozen=True, slots=True)
class Rejection:
    """A value the real schema rejected, and the errors the model was sent."""

    value: Mapping[str, Any]
    errors: Sequence[Any]


_TYPE_ERRORS = {
    "int_parsing": "integer",
    "int_type": "integer",
    "int_from_float": "integer",
    "float_parsing": "number",
    "float_type": "number",
    "string_type": "string",
    "bool_parsing": "boolean",
    "bool_type": "boolean",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
}
_FORMAT_ERRORS = {
    "datetime": "date-time",
    "datetime_from_date_parsing": "date-time",
    "datetime_parsing": "date-time",
    "datetime_type": "date-time",
    "date_parsing": "date",
    "date_from_datetime_parsing": "date",
    "date_type": "date",
    "time_parsing": "time",
    "time_type": "time",
}
_BOUND_ERRORS = {
    "less_than_equal": ("maximum", r"less than or equal to (-?[\d.eE+-]+)$"),
    "greater_than_equal": ("minimum", r"greater than or equal to (-?[\d.eE+-]+)$"),
    "less_than": ("exclusiveMaximum", r"less than (-?[\d.eE+-]+)$"),
    "greater_than": ("exclusiveMinimum", r"greater than (-?[\d.eE+-]+)$"),
    "string_too_short": ("minLength", r"at least (\d+) characters?$"),
    "string_too_long": ("maxLength", r"at most (\d+) characters?$"),
}


def json_type(value: Any) -> str:
    """The JSON Schema type of a JSON value (a bool is a boolean, not an integer)."""
    if value is None:
        return "null"
    for cls, label in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array")):
        if isinstance(value, cls):
            return label
    return "object"


def seen_types_schema(values: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """An object schema whose properties are typed by the values seen (an integer seen beside a number is a
    number), nothing required: it accepts every one of `values` unchanged."""
    types: dict[str, list[str]] = {}
    for value in values:
        for key, item in value.items():
            kinds = types.setdefault(key, [])
            if json_type(item) not in kinds:
                kinds.append(json_type(item))
    properties: dict[str, Any] = {}
    for key, kinds in types.items():
        if "integer" in kinds and "number" in kinds:
            kinds.remove("integer")
        properties[key] = {"type": kinds[0]} if len(kinds) == 1 else {"type": kinds}
    return {"type": "object", "properties": properties}


def infer_schema(accepted: Sequence[Mapping[str, Any]], rejected: Sequence[Rejection]) -> dict[str, Any] | None:
    """An object schema that accepts each of `accepted` unchanged and rejects each of `rejected` with exactly its
    errors; None when the errors say something this inference cannot express, or the result does not hold."""
    schema = seen_types_schema(accepted)
    properties: dict[str, Any] = schema["properties"]
    required: list[str] = []
    for rejection in rejected:
        for key in rejection.value:
            properties.setdefault(key, {})
        for error in rejection.errors:
            if not _learn(error, properties, required, schema):
                return None
            _type_bounded(error, rejection.value, properties)
    if required:
        schema["required"] = required
    return schema if _holds(schema, accepted, rejected) else None


def _learn(error: Any, properties: dict[str, Any], required: list[str], schema: dict[str, Any]) -> bool:
    """Add what one validation error says of the schema; False when it says something else."""
    if not isinstance(error, dict):
        return False
    detail = cast(dict[str, Any], error)
    kind, loc, message = detail.get("type"), detail.get("loc"), detail.get("msg")
    if not isinstance(kind, str) or not isinstance(loc, list) or len(cast(list[Any], loc)) != 1:
        return False
    name = cast(list[Any], loc)[0]
    if not isinstance(name, str):
        return False
    if kind == "missing":
        if name not in required:
            required.append(name)
        properties.setdefault(name, {})
        return True
    if kind == "extra_forbidden":  # the key is none of the schema's properties
        schema["additionalProperties"] = False
        properties.pop(name, None)
        return True
    current = properties.setdefault(name, {})
    if kind in _TYPE_ERRORS:
        properties[name] = {**{k: v for k, v in current.items() if k != "type"}, "type": _TYPE_ERRORS[kind]}
        return True
    if kind in _FORMAT_ERRORS:
        properties[name] = {"type": "string", "format": _FORMAT_ERRORS[kind]}
        return True
    if kind in _BOUND_ERRORS and isinstance(message, str):
        keyword, pattern = _BOUND_ERRORS[kind]
        found = re.search(pattern, message)
        if found is None:
            return False
        number = float(found.group(1))
        current[keyword] = int(number) if number.is_integer() else number
        return True
    if kind in ("literal_error", "enum") and isinstance(message, str) and message.startswith("Input should be "):
        options = re.findall(r"'((?:[^'\\]|\\.)*)'", message)
        if not options:
            return False
        properties[name] = {"enum": options}
        return True
    return False


def _type_bounded(error: Any, value: Mapping[str, Any], properties: dict[str, Any]) -> None:
    """A bound holds only for its type (a `maximum` says nothing of a string): a bounded property seen with no
    accepted value is typed by the rejected one."""
    detail = cast(dict[str, Any], error)
    name = cast(list[Any], detail["loc"])[0]
    kind = detail.get("type")
    prop = properties.get(name)
    if kind not in _BOUND_ERRORS or not isinstance(prop, dict) or "type" in prop or name not in value:
        return
    cast(dict[str, Any], prop)["type"] = json_type(value[name])


def _holds(schema: dict[str, Any], accepted: Sequence[Mapping[str, Any]], rejected: Sequence[Rejection]) -> bool:
    try:
        validator = schema_validator(schema)
    except ValueError:
        return False
    for value in accepted:
        try:
            if validator.validate_python(dict(value)) != dict(value):
                return False
        except ValidationError:
            return False
    for rejection in rejected:
        try:
            validator.validate_python(dict(rejection.value))
        except ValidationError as error:
            found = [_essence(e) for e in error.errors(include_url=False, include_context=False)]
            if found != [_essence(e) for e in rejection.errors]:
                return False
        else:
            return False
    return True


def _essence(error: Any) -> tuple[Any, ...]:
    detail = cast(dict[str, Any], error) if isinstance(error, dict) else {}
    return (detail.get("type"), list(detail.get("loc") or ()), detail.get("msg"))
