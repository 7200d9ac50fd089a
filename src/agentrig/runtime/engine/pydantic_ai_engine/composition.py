"""A scenario's `requires`, `capabilities` and `history_processors`, made ready for its runs.

`requires` is checked before anything is imported: a missing extra refuses the scenario with one line naming
the field, the extra and how to install it, and the requirements it lacks (`requires EXTRA: INSTALL COMMAND`), which
a run reports as the reason it skipped the scenario (an error, exit code 3, under `--require-extras`). Capabilities and
history processors are imported by `module:attribute` from the scenario's directory or the working directory;
each becomes part of `capabilities=` of every run (after the agent's own), so what they do to the history and to
the model's input is pydantic-ai's own behaviour on the installed version.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from pydantic_ai.capabilities import AbstractCapability, ProcessHistory

from agentrig.errors import MissingExtraError, ScenarioError
from agentrig.runtime.engine.module_loading import resolve_attribute
from agentrig.runtime.engine.pydantic_ai_engine.deps import offline_import
from agentrig.scenarios.composition_model import EXTRAS
from agentrig.scenarios.loader import LoadedScenario
from agentrig.scenarios.ui_model import UI_EXTRA

__all__ = ["check_requires", "load_composition", "missing_extra"]


def missing_extra(extra: str) -> str | None:
    """Why `extra` is not usable here (the modules that are not installed and how to install them), or None."""
    modules, install = EXTRAS[extra]
    missing = [module for module in modules if importlib.util.find_spec(module) is None]
    if not missing:
        return None
    return f"the {extra} extra is not installed ({', '.join(missing)} missing): {install}"


def check_requires(loaded: LoadedScenario) -> None:
    """Refuse the scenario, at its first unmet requirement, when an extra it needs is missing: one its `requires`
    lists, or the extra of a UI turn's protocol, needed whether `requires` lists it or not (located at the turn's
    `ui.protocol`). The error's `requirements` name every extra missing, each once."""
    needed: list[tuple[str, tuple[str | int, ...], str]] = [
        (extra, ("requires",), f"requires[{index}]") for index, extra in enumerate(loaded.scenario.requires)
    ]
    needed += [
        (UI_EXTRA[turn.ui.protocol], ("turns", index, "ui", "protocol"), f"turns[{index}].ui.protocol")
        for index, turn in enumerate(loaded.scenario.turns)
        if turn.ui is not None
    ]
    unmet: dict[str, tuple[str, tuple[str | int, ...], str]] = {}
    for extra, where, field in needed:
        if extra not in unmet and (reason := missing_extra(extra)) is not None:
            unmet[extra] = (reason, where, field)
    if not unmet:
        return
    reason, where, field = next(iter(unmet.values()))
    requirements = tuple(f"requires {extra}: {EXTRAS[extra][1]}" for extra in unmet)
    raise MissingExtraError(
        reason, requirements=requirements, path=loaded.path, line=loaded.line_of(*where), field=field
    )


def load_composition(loaded: LoadedScenario, *, offline: bool) -> list[Any]:
    """The scenario's capabilities, then its history processors as `ProcessHistory`, in the order written."""
    scenario = loaded.scenario
    search = [loaded.base_dir, Path.cwd()]
    built: list[Any] = []
    for field_name in ("capabilities", "history_processors"):
        for index, spec in enumerate(getattr(scenario, field_name)):

            def fail(message: str, field_name: str = field_name, index: int = index) -> ScenarioError:
                return ScenarioError(
                    message, path=loaded.path, line=loaded.line_of(field_name), field=f"{field_name}[{index}]"
                )

            with offline_import(offline):
                value = resolve_attribute(spec, search_paths=search, fail=fail)
            if field_name == "history_processors":
                if not callable(value):
                    raise fail(f"{spec!r} is a {type(value).__name__}, not a history processor function")
                processor: Any = value  # the user's function; pydantic-ai checks its shape when it calls it
                built.append(ProcessHistory(processor))
                continue
            built.extend(_capabilities(value, spec, fail))
    return built


def _capabilities(value: Any, spec: str, fail: Any) -> list[Any]:
    if isinstance(value, AbstractCapability):
        return [value]
    if not callable(value):
        raise fail(f"{spec!r} is a {type(value).__name__}, not a pydantic-ai capability or a factory of one")
    try:
        made: Any = value()
    except Exception as error:  # the user's factory may raise anything
        raise fail(f"calling the factory {spec!r} failed: {type(error).__name__}: {error}") from None
    items: list[Any] = list(made) if isinstance(made, list | tuple) else [made]
    wrong = [type(item).__name__ for item in items if not isinstance(item, AbstractCapability)]
    if wrong:
        raise fail(f"the factory {spec!r} returned {', '.join(wrong)}, not pydantic-ai capabilities")
    return items
