"""A scenario's JSON Schema as a pydantic validator: YAML tools and YAML output schemas validate what the model sent
as pydantic-ai validates a real function's arguments or a real output type, with the same error details.

    validator = schema_validator({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    validator.validate_python({"n": "x"})   # ValidationError: n: Input should be a valid integer, ...

The JSON Schema becomes a pydantic-core schema, so a scripted call with bad arguments gets the retry prompt a real
tool would produce (`int_parsing`, `missing`, `extra_forbidden`, ... in pydantic's words, lax mode as pydantic-ai's
tools). Supported: `type` (one or a list), `properties`, `required`, `additionalProperties` (false forbids extra
keys; absent or true keeps them; a schema validates them), `default` (filled in, as a Python default is), `items`,
`enum`, `const`, `anyOf` / `oneOf`, `allOf` of one schema, local `$ref`s to `$defs` / `definitions` (recursion
included), string `minLength` / `maxLength` / `pattern`, number bounds and `multipleOf`, array `minItems` /
`maxItems`, and the `format`s pydantic writes for its own types: `date-time`, `date` and `time` are parsed as
pydantic parses a `datetime`, `date` or `time` field (the same errors: `datetime_from_date_parsing`, ...), the value
kept as the model wrote it. Anything else (another `format`, `patternProperties`, `if`/`then`, ...) is not
checked: that part accepts any value, as pydantic-ai's `Tool.from_schema` accepts everything. A schema that is not
a JSON Schema at all (`type: strnig`, `required: x`) raises `ValueError`, which the scenario loader reports at the
field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic_core import CoreSchema, SchemaValidator, core_schema

__all__ = ["check_json_schema", "core_schema_for", "schema_validator"]

_TYPES = frozenset({"string", "integer", "number", "boolean", "null", "array", "object"})
_DEF_PREFIXES = ("#/$defs/", "#/definitions/")


def schema_validator(schema: Mapping[str, Any]) -> SchemaValidator:
    """A pydantic validator for values `schema` describes (see the module docstring)."""
    return SchemaValidator(core_schema_for(schema))


def check_json_schema(schema: Mapping[str, Any], *, field: str) -> None:
    """Raise `ValueError` naming what is wrong (under `field`, e.g. `parameters.required`) when `schema` cannot be
    read as a JSON Schema."""
    try:
        core_schema_for(schema)
    except ValueError as error:
        raise ValueError(f"{field}.{error}") from None


def core_schema_for(schema: Mapping[str, Any]) -> CoreSchema:
    """The pydantic-core schema of a JSON Schema, its `$defs` as pydantic definitions."""
    converter = _Converter(schema)
    root = converter.convert(schema, "")
    if not converter.used:
        return root
    definitions = [converter.definition(name) for name in sorted(converter.used)]
    return core_schema.definitions_schema(root, definitions)


class _Converter:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.used: set[str] = set()
        self._definitions: dict[str, Any] = {}
        for key in ("$defs", "definitions"):
            found = root.get(key, {})
            if not isinstance(found, Mapping):
                raise ValueError(f"{key}: expected a mapping of schemas")
            self._definitions.update(found)

    def definition(self, name: str) -> CoreSchema:
        converted = self.convert(self._definitions[name], f"$defs.{name}")
        return {**converted, "ref": name}  # type: ignore[return-value]

    def convert(self, schema: Any, where: str) -> CoreSchema:
        if schema is True or schema == {}:
            return core_schema.any_schema()
        if not isinstance(schema, Mapping):
            raise ValueError(f"{where or '(root)'}: expected a JSON Schema (a mapping), got {schema!r}")
        node: Mapping[str, Any] = schema
        if "$ref" in node:
            return self._reference(node["$ref"], where)
        for key in ("anyOf", "oneOf"):
            if key in node:
                return self._union(node[key], f"{_join(where, key)}")
        if "allOf" in node:
            parts = node["allOf"]
            if isinstance(parts, list) and len(parts) == 1:
                return self.convert(parts[0], _join(where, "allOf[0]"))
            return core_schema.any_schema()  # an intersection pydantic cannot say: not checked
        if "const" in node:
            return core_schema.literal_schema([node["const"]])
        if "enum" in node:
            values = node["enum"]
            if not isinstance(values, list) or not values:
                raise ValueError(f"{_join(where, 'enum')}: expected a non-empty list")
            return core_schema.literal_schema(values)
        kinds = node.get("type")
        if kinds is None:
            return self._object(node, where) if "properties" in node else core_schema.any_schema()
        if isinstance(kinds, list):
            return self._union([{**node, "type": kind} for kind in kinds], _join(where, "type"))
        if kinds not in _TYPES:
            raise ValueError(f"{_join(where, 'type')}: unknown type {kinds!r} (known: {', '.join(sorted(_TYPES))})")
        return self._typed(kinds, node, where)

    def _reference(self, reference: Any, where: str) -> CoreSchema:
        if not isinstance(reference, str) or not reference.startswith(_DEF_PREFIXES):
            raise ValueError(f"{_join(where, '$ref')}: only local references to $defs are supported, got {reference!r}")
        name = reference.split("/", 2)[2]
        if name not in self._definitions:
            raise ValueError(f"{_join(where, '$ref')}: {reference!r} names no definition")
        self.used.add(name)
        return core_schema.definition_reference_schema(name)

    def _union(self, choices: Any, where: str) -> CoreSchema:
        if not isinstance(choices, list) or not choices:
            raise ValueError(f"{where}: expected a non-empty list of schemas")
        # `X | None` is a nullable X in pydantic (no union member tags in its errors), as a function's
        # `x: int | None` becomes `anyOf: [{type: integer}, {type: null}]`: read it back the same way.
        kept = [(index, choice) for index, choice in enumerate(choices) if choice != {"type": "null"}]
        if not kept:
            return core_schema.none_schema()
        members: list[CoreSchema] = [self.convert(choice, f"{where}[{index}]") for index, choice in kept]
        schema = members[0] if len(members) == 1 else core_schema.union_schema(list[Any](members))
        return core_schema.nullable_schema(schema) if len(kept) < len(choices) else schema

    def _typed(self, kind: str, node: Mapping[str, Any], where: str) -> CoreSchema:
        if kind == "string" and node.get("format") in _TEMPORAL:
            return _parsed_but_kept(_TEMPORAL[node["format"]]())
        if kind == "string":
            return core_schema.str_schema(
                min_length=node.get("minLength"), max_length=node.get("maxLength"), pattern=node.get("pattern")
            )
        if kind in ("integer", "number"):
            bounds: dict[str, Any] = {
                "ge": node.get("minimum"),
                "le": node.get("maximum"),
                "gt": node.get("exclusiveMinimum"),
                "lt": node.get("exclusiveMaximum"),
                "multiple_of": node.get("multipleOf"),
            }
            # JSON Schema draft 4 wrote exclusive bounds as booleans beside minimum/maximum: not checked here.
            bounds = {key: value for key, value in bounds.items() if isinstance(value, int | float)}
            return core_schema.int_schema(**bounds) if kind == "integer" else core_schema.float_schema(**bounds)
        if kind == "boolean":
            return core_schema.bool_schema()
        if kind == "null":
            return core_schema.none_schema()
        if kind == "array":
            items = node.get("items", True)
            return core_schema.list_schema(
                self.convert(items, _join(where, "items")) if isinstance(items, Mapping | bool) else None,
                min_length=node.get("minItems"),
                max_length=node.get("maxItems"),
            )
        return self._object(node, where)

    def _object(self, node: Mapping[str, Any], where: str) -> CoreSchema:
        properties = node.get("properties", {})
        if not isinstance(properties, Mapping):
            raise ValueError(f"{_join(where, 'properties')}: expected a mapping of property schemas")
        required = node.get("required", [])
        if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
            raise ValueError(f"{_join(where, 'required')}: expected a list of property names")
        fields: dict[str, core_schema.TypedDictField] = {}
        for name, property_schema in properties.items():
            inner = self.convert(property_schema, _join(where, f"properties.{name}"))
            if isinstance(property_schema, Mapping) and "default" in property_schema and name not in required:
                inner = core_schema.with_default_schema(inner, default=property_schema["default"])
            fields[str(name)] = core_schema.typed_dict_field(inner, required=name in required)
        extra = node.get("additionalProperties", True)
        if extra is False:
            return core_schema.typed_dict_schema(fields, extra_behavior="forbid")
        extras_schema = (
            self.convert(extra, _join(where, "additionalProperties")) if isinstance(extra, Mapping) else None
        )
        return core_schema.typed_dict_schema(fields, extra_behavior="allow", extras_schema=extras_schema)


_TEMPORAL = {"date-time": core_schema.datetime_schema, "date": core_schema.date_schema, "time": core_schema.time_schema}
"""The string formats pydantic writes for `datetime`, `date` and `time` fields, checked as pydantic checks them."""


def _parsed_but_kept(schema: CoreSchema) -> CoreSchema:
    """Validate with `schema` (its errors, as pydantic gives them for a real field), but keep the value as written:
    the arguments a YAML tool's rules see, and a YAML output's JSON, stay what the model sent."""

    def keep(value: Any, handler: core_schema.ValidatorFunctionWrapHandler) -> Any:
        handler(value)
        return value

    return core_schema.no_info_wrap_validator_function(keep, schema)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
