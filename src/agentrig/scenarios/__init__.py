"""Scenario files: the format (`model`), the YAML loader with exact error locations (`loader`) and the
JSON Schema (`schema`). Imports pydantic and PyYAML, never pydantic-ai or typer, so `agentrig validate`
and `agentrig schema` start fast; the names below are imported on first use, so `agentrig schema` (which
prints a stored file) imports neither the models nor PyYAML.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentrig.scenarios.loader import (
        FileReport,
        LoadedScenario,
        ScenarioWarning,
        ValidationReport,
        discover,
        load_paths,
        load_scenario_file,
        validate_paths,
        validation_report,
    )
    from agentrig.scenarios.model import Scenario
    from agentrig.scenarios.schema import scenario_json_schema

__all__ = [
    "FileReport",
    "LoadedScenario",
    "Scenario",
    "ScenarioWarning",
    "ValidationReport",
    "discover",
    "load_paths",
    "load_scenario_file",
    "scenario_json_schema",
    "validate_paths",
    "validation_report",
]

_HOMES = {"Scenario": "model", "scenario_json_schema": "schema"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES.get(name, 'loader')}"), name)
