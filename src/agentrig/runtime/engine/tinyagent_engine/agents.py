"""A user's own tinyagent `Agent`, named by a scenario's `agent: module:attribute`, for the tinyagent engine.

The attribute is an `Agent` or a zero-argument factory returning one. The engine keeps the agent's own
system prompt, tools and hooks, and only answers its model calls from the scenario's script (its
`stream_fn`, restored after the run), as the pydantic-ai engine swaps in the scripted model.

A module that is a pydantic-ai agent's is refused before it is imported: its source is read (not run) and
one that imports pydantic-ai and not tinyagent is named as such, so the reason is the same one line whether
pydantic-ai is installed or not, and importing it cannot fail first (a provider model built at import time
asks for its API key).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import sys
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any

from tinyagent import Agent

from agentrig.errors import ScenarioError, Unsupported
from agentrig.runtime.engine import warning_capture
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["UNSUPPORTED_PREFIX", "EngineUnsupported", "load_tinyagent_agent"]

UNSUPPORTED_PREFIX = "the tinyagent engine does not run "


class EngineUnsupported(Unsupported):
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


def _module_file(module_name: str, search: Sequence[Path]) -> Path | None:
    """The source file of `module_name` on `search` then `sys.path`, found without importing anything."""
    parts = module_name.split(".")
    for base in [*search, *(Path(entry) for entry in sys.path if entry)]:
        stem = base.joinpath(*parts)
        for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def imports_pydantic_ai_only(path: Path) -> bool:
    """Whether the module at `path` imports pydantic-ai (or pydantic-graph) and no tinyagent: a pydantic-ai
    agent's module. Unreadable or unparsable source says nothing (False): the import will tell."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return False
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.partition(".")[0])
    return bool(imported & {"pydantic_ai", "pydantic_graph"}) and "tinyagent" not in imported


def load_tinyagent_agent(loaded: LoadedScenario) -> Agent:
    """The tinyagent `Agent` the scenario's `agent:` names; errors name the file, line and field."""
    spec = loaded.scenario.agent or ""

    def fail(message: str) -> ScenarioError:
        return ScenarioError(message, path=loaded.path, line=loaded.line_of("agent"), field="agent")

    # Said the same way whether pydantic-ai is installed (the agent loads) or not (its module fails to import).
    pydantic_agent = EngineUnsupported(f"{UNSUPPORTED_PREFIX}a user's own pydantic-ai agent (`agent: {spec}`)")
    module_name, _, attribute_path = spec.partition(":")
    source = _module_file(module_name, [loaded.base_dir, Path.cwd()])
    if source is not None and imports_pydantic_ai_only(source):
        raise pydantic_agent
    with _on_sys_path([loaded.base_dir, Path.cwd()]):
        try:
            with warning_capture.importing(module_name):  # what it warns is the module's (`module_loading`)
                value: Any = importlib.import_module(module_name)
        except ImportError as error:
            if (error.name or "").partition(".")[0] in ("pydantic_ai", "pydantic_graph"):
                raise pydantic_agent from None
            raise fail(f"cannot import {module_name!r}: {error}") from None
    warning_capture.add_module_warnings(module_name)
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
