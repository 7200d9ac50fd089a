"""Helpers for the engine tests (scripted model, orchestrator, execution): scenarios from YAML text."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import ScenarioExecution, execute_scenario
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.invariants import check_invariants
from agentrig.scenarios.loader import LoadedScenario, load_scenario_file


def load_yaml(tmp_path: Path, text: str, *, name: str = "scenario.yaml") -> LoadedScenario:
    """The single scenario written in `text` (dedented), loaded from a file in `tmp_path`."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    loaded = load_scenario_file(path)
    assert len(loaded) == 1
    return loaded[0]


def execute(loaded: LoadedScenario) -> ScenarioExecution:
    """Run the scenario with the scripted model and a private agent cache."""
    return asyncio.run(execute_scenario(loaded, cache=AgentCache()))


def assert_invariants(execution: ScenarioExecution) -> None:
    """Every history invariant holds on the final history, registry included."""
    violations = check_invariants(execution.session.messages, registry=execution.registry)
    assert violations == [], [str(v.message) for v in violations]


def kinds(history: tuple[Message, ...] | list[Message]) -> list[tuple[str, list[str]]]:
    """(kind, [part kinds]) per message: a compact picture of a history's shape."""
    return [(m.kind, [p.part_kind for p in m.parts]) for m in history]
