"""The JSON Schema of a scenario file, for editors and other tools (`agentrig schema`).

Generated from the models, so it cannot drift from what the loader accepts. Rules that JSON Schema
cannot say simply (e.g. a tool result needs exactly one outcome) are checked by the loader only.

Editors that speak yaml-language-server pick it up from a comment on a scenario file's first line:

    # yaml-language-server: $schema=./scenario.schema.json
"""

from __future__ import annotations

from typing import Any

from agentrig.scenarios.model import Scenario

__all__ = ["SCHEMA_DIALECT", "SCHEMA_ID", "scenario_json_schema"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:agentrig:scenario-file:1"
"""Names this format; bump the trailing number on an incompatible change."""


def scenario_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a scenario file: one scenario, or a non-empty list of scenarios."""
    scenario = Scenario.model_json_schema(ref_template="#/$defs/{model}")
    definitions: dict[str, Any] = scenario.pop("$defs", {})
    definitions["Scenario"] = scenario
    reference = {"$ref": "#/$defs/Scenario"}
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        "title": "agentrig scenario file",
        "description": "One agentrig scenario, or a list of scenarios. Reference: docs/scenarios.md.",
        "anyOf": [reference, {"type": "array", "items": reference, "minItems": 1}],
        "$defs": dict(sorted(definitions.items())),
    }
