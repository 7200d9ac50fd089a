"""What a scenario composes into every run of its agent: the user's capabilities and history processors, named
by `module:attribute`, and the optional extras it needs. `Scenario` (in `model.py`) inherits `Composition`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from agentrig.scenarios._strict import Strict

__all__ = ["AGENT_SPEC_PATTERN", "EXTRAS", "Composition", "Extra"]

AGENT_SPEC_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"
"""`module:attribute`, the attribute possibly dotted."""

Extra = Literal["ag-ui", "vercel-ai", "harness"]

EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "ag-ui": (("ag_ui", "starlette"), "pip install 'pydantic-ai-slim[ag-ui]'"),
    "vercel-ai": (("starlette",), "pip install 'pydantic-ai-slim[ui]'"),
    "harness": (("pydantic_ai_harness",), "pip install pydantic-ai-harness"),
}
"""Each optional extra: the modules that must be importable, and how to install them."""

_Spec = Annotated[str, Field(pattern=AGENT_SPEC_PATTERN)]


class Composition(Strict):
    """The user's capabilities and history processors, added to every run of the scenario's agent (the base of
    `Scenario`)."""

    capabilities: tuple[_Spec, ...] = ()
    """pydantic-ai capabilities as `module:attribute`: an `AbstractCapability` (e.g. `Hooks(...)`,
    `ProcessHistory(...)`, a pydantic-ai-harness class instance) or a zero-argument factory returning one or a
    list of them; passed as `capabilities=` to every run, after the agent's own."""
    history_processors: tuple[_Spec, ...] = ()
    """History processors as `module:attribute`: a function `(messages) -> messages` or `(ctx, messages) ->
    messages` (sync or async), each attached as a `ProcessHistory` capability. pydantic-ai keeps what it returns
    as the run's history; a `model_request` hook (under `capabilities`) changes only what the model is sent."""
    requires: tuple[Extra, ...] = ()
    """Optional extras the scenario needs: `ag-ui` (`pydantic-ai-slim[ag-ui]`), `vercel-ai`
    (`pydantic-ai-slim[ui]`), `harness` (`pydantic-ai-harness`). A missing one refuses the scenario with one
    line naming it (status `error`, exit code 3)."""
