"""The base of every scenario-format model: unknown keys forbidden, frozen, field docs added to the schema."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from agentrig.scenarios.field_docs import add_field_descriptions

__all__ = ["AGENT_SPEC_PATTERN", "JsonValue", "Strict"]

JsonValue = Any
"""Any value YAML (and so JSON) can hold."""

AGENT_SPEC_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"
"""`module:attribute`, as `agent:`, `deps:`, `agents:` and `output.type` name Python objects."""


class Strict(BaseModel):
    # The docstring under each field becomes its JSON Schema description (`agentrig schema`, editor
    # hovers) and its line in docs/scenarios.md. Added when a schema is generated, not at import:
    # pydantic's `use_attribute_docstrings` would double the import time of this module (see field_docs).
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, json_schema_extra=add_field_descriptions
    )
