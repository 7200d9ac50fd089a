"""The docstring written under each model field, read lazily, for JSON Schema descriptions and the docs.

pydantic can do this itself (`ConfigDict(use_attribute_docstrings=True)`), but on Python < 3.13 it
walks the stack and re-tokenizes the source once per class while the class is created: measured at
more than half of importing `agentrig.scenarios.model`, a cost every `agentrig validate` would pay
for descriptions only `agentrig schema` and the docs generator read. Here the defining module is
parsed once, on first use, and the descriptions are added when a JSON Schema is generated.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_field_descriptions", "field_docstrings"]

from pydantic import BaseModel


def field_docstrings(model_class: type[BaseModel]) -> dict[str, str]:
    """`{field name: docstring}` for a model, inherited fields included (a subclass's docstring wins)."""
    merged: dict[str, str] = {}
    for klass in reversed(model_class.__mro__):
        module = sys.modules.get(klass.__module__)
        source_file = getattr(module, "__file__", None)
        if source_file is not None:
            merged.update(_module_docstrings(source_file).get(klass.__qualname__, {}))
    return merged


def add_field_descriptions(schema: dict[str, Any], model_class: type[Any]) -> None:
    """pydantic `json_schema_extra` hook: give each property of `model_class` its field docstring."""
    properties: dict[str, Any] = schema.get("properties", {})
    docstrings = field_docstrings(model_class)
    for name, info in model_class.model_fields.items():
        prop = properties.get(info.alias or name)
        if isinstance(prop, dict) and name in docstrings and "description" not in prop:
            prop["description"] = docstrings[name]


@functools.cache
def _module_docstrings(source_file: str) -> dict[str, dict[str, str]]:
    """`{class name: {field name: docstring}}` for the top-level classes of one source file."""
    try:
        tree = ast.parse(Path(source_file).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):  # no source shipped: no descriptions, as pydantic does
        return {}
    classes: dict[str, dict[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = _class_docstrings(node)
    return classes


def _class_docstrings(node: ast.ClassDef) -> dict[str, str]:
    docstrings: dict[str, str] = {}
    for statement, following in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docstrings[statement.target.id] = inspect.cleandoc(following.value.value)
    return docstrings
