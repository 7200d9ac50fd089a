"""The base of every scenario-format model: unknown keys forbidden, frozen, field docs added to the schema."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict

from agentrig.scenarios.field_docs import add_field_descriptions
from agentrig.scenarios.version_spec import parse_version_spec

__all__ = ["AGENT_SPEC_PATTERN", "JsonValue", "Strict", "VersionSpec"]

JsonValue = Any
"""Any value YAML (and so JSON) can hold."""

AGENT_SPEC_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"
"""`module:attribute`, as `agent:`, `deps:`, `agents:` and `output.type` name Python objects."""


def _checked_version_spec(spec: str) -> str:
    parse_version_spec(spec)  # ValueError naming the clause that is not `OP X.Y[.Z]`
    return spec


VersionSpec = Annotated[str, AfterValidator(_checked_version_spec)]
"""A version specifier (`when_pydantic_ai`, `when_ag_ui_protocol`): `<2.60`, `>=2.40,<2.60` (`version_spec`)."""


class Strict(BaseModel):
    # The docstring under each field becomes its JSON Schema description (`agentrig schema`, editor
    # hovers) and its line in docs/scenarios.md. Added when a schema is generated, not at import:
    # pydantic's `use_attribute_docstrings` would double the import time of this module (see field_docs).
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, json_schema_extra=add_field_descriptions
    )
