"""Scenario files: the format (`model`), the YAML loader with exact error locations (`loader`) and the
JSON Schema (`schema`). Imports pydantic and PyYAML, never pydantic-ai or typer, so `agentrig validate`
and `agentrig schema` start fast.
"""

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
