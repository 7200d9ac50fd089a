"""pydantic validation errors -> one-line `ScenarioError`s with file, line, column and field path.

pydantic reports where an error is as a `loc` tuple of field names, indexes and, inside a union, the
tag of the union member that was tried (`('turns', 0, 'model', 0, 'tool_calls', 0, 'args', 'str')`).
The tags are not in the YAML, so the `loc` is read alongside the model's type annotations: a union
consumes a tag, a model a field name, a list an index. What remains is the field path in the file,
which `_yaml_source.find_node` turns into a line and a column.

A union produces one error per member; they are folded into the one that explains the value (the
member whose errors go deepest), or into one "should be X or Y" line.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails
from yaml.nodes import Node

from agentrig.errors import ScenarioError
from agentrig.scenarios._yaml_source import PathElement, find_node, format_field_path, node_position

_MAX_SHOWN_INPUT = 60


@dataclass(frozen=True, slots=True, kw_only=True)
class _ReadLoc:
    """A pydantic `loc` read against the model's annotations."""

    field_path: tuple[PathElement, ...]
    """Keys and indexes as written in the YAML file."""
    union_site: tuple[PathElement, ...] | None
    """The field path of the first union whose member tag appeared in the loc."""
    union_member: str | None
    """That member's tag."""
    owner: type[BaseModel] | None
    """The model owning the last field of the path (for 'unknown field' suggestions)."""
    annotation: Any
    """The annotation of the value the error is about."""
    about_key: bool = False
    """The error is about the mapping key itself (pydantic's `[key]` loc element), not its value."""


def validation_errors(
    error: ValidationError,
    *,
    model: type[BaseModel],
    root: Node,
    path: Path,
    prefix: tuple[PathElement, ...] = (),
) -> list[ScenarioError]:
    """Translate a pydantic `ValidationError` of `model` (validated from the YAML under `root`) into located errors.

    `prefix` is prepended to every field path shown (e.g. the index of a scenario in a list file).
    """
    read = [(details, _read_loc(model, details["loc"])) for details in error.errors(include_url=False)]
    read = _drop_consequential(read)
    results: list[ScenarioError] = []
    seen: set[str] = set()
    for details, loc in _fold_unions(read):
        scenario_error = _to_scenario_error(details, loc, root=root, path=path, prefix=prefix)
        if scenario_error.message not in seen:
            seen.add(scenario_error.message)
            results.append(scenario_error)
    return sorted(results, key=lambda e: (e.line or 0, e.column or 0))


# --------------------------------------------------------------------------------------------
# Reading a loc against the annotations
# --------------------------------------------------------------------------------------------


def _read_loc(model: type[BaseModel], loc: Sequence[str | int]) -> _ReadLoc:
    field_path: list[PathElement] = []
    union_site: tuple[PathElement, ...] | None = None
    union_member: str | None = None
    owner: type[BaseModel] | None = None
    annotation: Any = model
    about_key = False
    for element in loc:
        if element == "[key]":  # pydantic: the dict key failed validation, not the value
            about_key = True
            break
        annotation = _strip_optional(annotation)
        members = _union_members(annotation)
        if members is not None:
            # pydantic names the member it tried; the tag is not a key in the file.
            if union_site is None:
                union_site, union_member = tuple(field_path), str(element)
            annotation = _member_for_tag(members, str(element))
            continue
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            owner = annotation
            field_path.append(element)
            annotation = _field_annotation(annotation, str(element))
            continue
        origin = get_origin(annotation)
        field_path.append(element)
        if origin in (tuple, list):
            annotation = get_args(annotation)[0]
        elif origin is dict:
            annotation = get_args(annotation)[1]
        else:
            annotation = Any
    return _ReadLoc(
        field_path=tuple(field_path),
        union_site=union_site,
        union_member=union_member,
        owner=owner,
        annotation=_strip_optional(annotation),
        about_key=about_key,
    )


def _strip_optional(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    members = _raw_union_members(annotation)
    if members is not None:
        # pydantic validates `X | None` as a nullable X: no member tag appears in the loc.
        not_none = [member for member in members if member is not type(None)]
        if len(not_none) == 1:
            return _strip_optional(not_none[0])
        if len(not_none) < len(members):
            return Union[tuple(not_none)]  # noqa: UP007 - built from a runtime tuple of types
    return annotation


def _raw_union_members(annotation: Any) -> tuple[Any, ...] | None:
    if get_origin(annotation) in (Union, types.UnionType):
        return get_args(annotation)
    return None


def _union_members(annotation: Any) -> tuple[Any, ...] | None:
    members = _raw_union_members(annotation)
    return members if members is not None and len(members) > 1 else None


def _member_for_tag(members: tuple[Any, ...], tag: str) -> Any:
    """Match pydantic's member tag (`'Bounds'`, `'int'`, `'dict[str,any]'`, `"literal['all']"`) to the member."""
    head = tag.split("[", 1)[0].lower()
    # A tagged union's members are `Annotated[X, Tag(...)]`: the member is X.
    members = tuple(get_args(m)[0] if get_origin(m) is Annotated else m for m in members)
    for member in members:
        if isinstance(member, type) and member.__name__ == tag:
            return member
    for member in members:
        origin = get_origin(member)
        if origin is Literal and head == "literal":
            return member
        if isinstance(origin, type) and origin.__name__ == head:
            return member
        if isinstance(member, type) and member.__name__ == head:
            return member
    return Any


def _field_annotation(model: type[BaseModel], name: str) -> Any:
    for field_name, info in model.model_fields.items():
        if name in (field_name, info.alias):
            return info.annotation
    return Any


def _field_names(model: type[BaseModel]) -> list[str]:
    return [info.alias or field_name for field_name, info in model.model_fields.items()]


# --------------------------------------------------------------------------------------------
# Folding: one line per real problem
# --------------------------------------------------------------------------------------------


def _drop_consequential(read: list[tuple[ErrorDetails, _ReadLoc]]) -> list[tuple[ErrorDetails, _ReadLoc]]:
    """A list whose items failed also reports 'should have at least 1 item': only the items' errors matter."""

    def has_deeper(site: tuple[PathElement, ...]) -> bool:
        return any(len(loc.field_path) > len(site) and loc.field_path[: len(site)] == site for _, loc in read)

    return [(details, loc) for details, loc in read if details["type"] != "too_short" or not has_deeper(loc.field_path)]


def _fold_unions(read: list[tuple[ErrorDetails, _ReadLoc]]) -> list[tuple[ErrorDetails, _ReadLoc]]:
    by_site: dict[tuple[PathElement, ...], list[tuple[ErrorDetails, _ReadLoc]]] = {}
    folded: list[tuple[ErrorDetails, _ReadLoc]] = []
    for details, loc in read:
        if loc.union_site is None:
            folded.append((details, loc))
        else:
            by_site.setdefault(loc.union_site, []).append((details, loc))
    for site, group in by_site.items():
        deepest = max(len(loc.field_path) for _, loc in group)
        if deepest > len(site):
            # The value had the shape of one member and failed inside it: those errors explain it.
            members = {loc.union_member for _, loc in group if len(loc.field_path) == deepest}
            folded.extend((details, loc) for details, loc in group if loc.union_member in members)
            continue
        messages = list(dict.fromkeys(_base_message(details) for details, _ in group))
        hints = [hint for details, loc in group if (hint := _suggestion(details, loc))]
        first_details, first_loc = group[0]
        combined = _join_alternatives(messages) + _shown_input(first_details) + (hints[0] if hints else "")
        folded.append(({**first_details, "type": "union", "msg": combined}, first_loc))
    return folded


def _join_alternatives(messages: list[str]) -> str:
    prefix = "Input should be "
    if all(message.startswith(prefix) for message in messages):
        return prefix + " or ".join(message.removeprefix(prefix) for message in messages)
    return "; or ".join(messages)


# --------------------------------------------------------------------------------------------
# One error -> one line
# --------------------------------------------------------------------------------------------


def _to_scenario_error(
    details: ErrorDetails, loc: _ReadLoc, *, root: Node, path: Path, prefix: tuple[PathElement, ...]
) -> ScenarioError:
    lookup = find_node(root, loc.field_path)
    error_type = details["type"]
    shown_path = loc.field_path
    if error_type == "extra_forbidden":
        message = _unknown_field_message(str(loc.field_path[-1]), loc.owner)
        anchor = lookup.key_node or lookup.node
    elif error_type == "missing":
        message = f"missing required field '{loc.field_path[-1]}'"
        shown_path = loc.field_path[:-1]
        anchor = lookup.node
    else:
        message = _message(details, loc)
        anchor = (lookup.key_node if loc.about_key else None) or lookup.node
    line, column = node_position(anchor)
    field = format_field_path((*prefix, *shown_path)) or None
    return ScenarioError(message, path=path, line=line, column=column, field=field)


def _unknown_field_message(name: str, owner: type[BaseModel] | None) -> str:
    message = f"unknown field '{name}'"
    if owner is None:
        return message
    valid = _field_names(owner)
    close = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
    if close:
        return f"{message}; did you mean '{close[0]}'?"
    return f"{message}; valid fields: {', '.join(valid)}"


# pydantic speaks Python; a scenario author writes YAML.
_YAML_WORDS = (
    ("a valid dictionary", "a mapping"),
    ("a valid tuple", "a list"),
    ("a valid list", "a list"),
    ("Tuple should", "List should"),
)


def _message(details: ErrorDetails, loc: _ReadLoc) -> str:
    if details["type"] == "union":  # already folded by _fold_unions
        return details["msg"]
    if details["type"] == "value_error":
        # Raised by the models' own validators: their text is the whole message.
        return details["msg"].removeprefix("Value error, ")
    return _base_message(details) + _shown_input(details) + _suggestion(details, loc)


def _base_message(details: ErrorDetails) -> str:
    message = details["msg"]
    if details["type"] == "model_type":
        return "Input should be a mapping"
    for python_words, yaml_words in _YAML_WORDS:
        message = message.replace(python_words, yaml_words)
    return message


def _shown_input(details: ErrorDetails) -> str:
    given = details.get("input")
    if isinstance(given, str | int | float | bool) or given is None:
        return f" (got {_show(given)})"
    if isinstance(given, dict):
        return " (got a mapping)"
    if isinstance(given, list):
        return " (got a list)"
    return ""


def _suggestion(details: ErrorDetails, loc: _ReadLoc) -> str:
    given = details.get("input")
    if details["type"] != "literal_error" or not isinstance(given, str):
        return ""
    choices = [str(choice) for choice in get_args(loc.annotation)]
    close = difflib.get_close_matches(given, choices, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def _show(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = repr(value)
    if len(text) > _MAX_SHOWN_INPUT:
        text = text[: _MAX_SHOWN_INPUT - 3] + "..."
    return text
