"""A user's own tinyagent `Agent`, named by a scenario's `agent: module:attribute`, for the tinyagent engine.

The attribute is an `Agent` or a zero-argument factory returning one. The engine keeps the agent's own
system prompt, tools and hooks, and only answers its model calls from the scenario's script (its
`stream_fn`, restored after the run), as the pydantic-ai engine swaps in the scripted model.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any

from tinyagent import Agent

from agentrig.errors import AgentrigError, ScenarioError
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["UNSUPPORTED_PREFIX", "EngineUnsupported", "load_tinyagent_agent"]

UNSUPPORTED_PREFIX = "the tinyagent engine does not run "


class EngineUnsupported(AgentrigError):
    """The scenario uses a feature the tinyagent engine does not run; the message starts with
    `UNSUPPORTED_PREFIX` and names the feature."""


@contextlib.contextmanager
def _on_sys_path(paths: Sequence[Path]) -> Generator[None]:
    added = [str(path) for path in paths if str(path) not in sys.path]
    sys.path[:0] = added
    try:
        yield
    finally:
        for path in added:
            with contextlib.suppress(ValueError):
                sys.path.remove(path)


def load_tinyagent_agent(loaded: LoadedScenario) -> Agent:
    """The tinyagent `Agent` the scenario's `agent:` names; errors name the file, line and field."""
    spec = loaded.scenario.agent or ""

    def fail(message: str) -> ScenarioError:
        return ScenarioError(message, path=loaded.path, line=loaded.line_of("agent"), field="agent")

    # Said the same way whether pydantic-ai is installed (the agent loads) or not (its module fails to import).
    pydantic_agent = EngineUnsupported(f"{UNSUPPORTED_PREFIX}a user's own pydantic-ai agent (`agent: {spec}`)")
    module_name, _, attribute_path = spec.partition(":")
    with _on_sys_path([loaded.base_dir, Path.cwd()]):
        try:
            value: Any = importlib.import_module(module_name)
        except ImportError as error:
            if (error.name or "").partition(".")[0] in ("pydantic_ai", "pydantic_graph"):
                raise pydantic_agent from None
            raise fail(f"cannot import {module_name!r}: {error}") from None
    for attribute in attribute_path.split("."):
        if not hasattr(value, attribute):
            raise fail(f"module {module_name!r} has no attribute {attribute_path!r}")
        value = getattr(value, attribute)
    if not isinstance(value, Agent) and callable(value):
        try:
            value = value()
        except Exception as error:  # the user's factory may raise anything
            raise fail(f"calling the factory {spec!r} failed: {type(error).__name__}: {error}") from None
    if type(value).__module__.partition(".")[0] == "pydantic_ai":
        raise pydantic_agent
    if not isinstance(value, Agent):
        raise fail(f"{spec!r} is a {type(value).__name__}, not a tinyagent Agent or a factory returning one")
    return value
