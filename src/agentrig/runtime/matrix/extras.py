"""What a version's environment installs beside the pin for the scenarios it runs: the optional extras they need.

A scenario says what it needs (`requires: [ag-ui, vercel-ai, harness]`, and a UI turn its protocol's adapter); an
environment built without it would skip the scenario on every version (`agentrig run` skips a scenario whose
extras are not installed), and the compatibility page would show the row as unproven. So `agentrig matrix` installs
them with the pin, in the same resolver call: pydantic-ai-slim's own extras (`ag-ui`, `ui`) on the pinned
requirement, and pydantic-ai-harness unpinned, so each pin gets the release that resolves beside it; and it runs each
environment with `--require-extras`, where an extra that still is not there is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentrig.errors import AgentrigError
from agentrig.scenarios.loader import load_paths
from agentrig.scenarios.ui_model import UI_EXTRA

__all__ = ["pin_requirements", "scenario_extras"]

_SLIM_EXTRAS = {"ag-ui": "ag-ui", "vercel-ai": "ui"}
"""Each scenario extra that is an extra of pydantic-ai-slim, by the name pydantic-ai-slim gives it."""
_PACKAGES = {"harness": "pydantic-ai-harness"}
"""Each scenario extra that is a distribution of its own."""


def scenario_extras(paths: Sequence[Path]) -> tuple[str, ...]:
    """Every extra the scenarios under `paths` need, sorted; none when they cannot be read (the run names why)."""
    try:
        loaded = load_paths(list(paths))
    except AgentrigError:
        return ()
    found: set[str] = set()
    for item in loaded:
        found.update(item.scenario.requires)
        found.update(UI_EXTRA[turn.ui.protocol] for turn in item.scenario.turns if turn.ui is not None)
    return tuple(sorted(found))


def pin_requirements(version: str, extras: Sequence[str] = ()) -> list[str]:
    """The requirements that pin pydantic-ai to `version`, with what `extras` need."""
    slim = sorted({_SLIM_EXTRAS[extra] for extra in extras if extra in _SLIM_EXTRAS})
    pin = f"pydantic-ai-slim[{','.join(slim)}]=={version}" if slim else f"pydantic-ai-slim=={version}"
    packages = sorted({_PACKAGES[extra] for extra in extras if extra in _PACKAGES})
    return [pin, f"pydantic-graph=={version}", *packages]
