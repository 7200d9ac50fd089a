"""The agent a scenario runs: a self-contained one built from the YAML, or the user's own (`module:attribute`).

Agents are built once and cached under a version hash of everything that changes their behaviour (the
removal contract's `_compute_agent_version`: retries, timeout, prompt, tools). The orchestrator invalidates
the cache entry after an abort or a timeout, so the next request gets a freshly built agent.

A self-contained agent takes the scenario's system prompt as pydantic-ai `instructions`, not
`system_prompt=`: the loop contract strips system prompts from stored history, and pydantic-ai adds
`system_prompt=` parts only to a conversation without history (2.38 and 2.68), so from the second turn on
the model would never see it again. Instructions are sent with every request and never stored as parts.

The user's agent keeps its own tools, instructions and settings; only its model is replaced per run
(`agent.iter(model=...)`).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.agent import AbstractAgent

from agentrig.errors import ScenarioError
from agentrig.runtime.engine.yaml_tools import ToolCallCounts, build_toolset, can_defer
from agentrig.scenarios.loader import LoadedScenario
from agentrig.scenarios.model import Settings, ToolSpec

__all__ = [
    "DEFAULT_AGENT_CACHE",
    "AgentCache",
    "AgentHandle",
    "agent_for_prompt",
    "agent_for_scenario",
    "agent_version",
    "load_user_agent",
]

AnyAgent = AbstractAgent[Any, Any]


class AgentCache:
    """Built agents by version key. Not thread-safe: one event loop drives the runs."""

    def __init__(self) -> None:
        self._agents: dict[str, AnyAgent] = {}

    def get_or_create(self, key: str, build: Callable[[], AnyAgent]) -> AnyAgent:
        """The cached agent for `key`, built on first use."""
        agent = self._agents.get(key)
        if agent is None:
            agent = build()
            self._agents[key] = agent
        return agent

    def invalidate(self, key: str) -> None:
        """Forget the agent for `key`; the next `get_or_create` builds it again."""
        self._agents.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self._agents

    def __len__(self) -> int:
        return len(self._agents)


DEFAULT_AGENT_CACHE = AgentCache()
"""The process-wide cache the runner uses."""


class AgentHandle:
    """What the orchestrator runs: a cached agent, the deps for its runs, and a way to rebuild it."""

    def __init__(
        self,
        *,
        key: str,
        build: Callable[[], AnyAgent],
        label: str,
        deps: Any = None,
        cache: AgentCache | None = None,
    ) -> None:
        self.key = key
        """The version hash the agent is cached under."""
        self.label = label
        """`self-contained` or the `module:attribute` of the user's agent, for messages."""
        self.deps = deps
        """Passed as `deps=` to every run (YAML tools keep their call counts here)."""
        self._build = build
        self._cache = cache if cache is not None else DEFAULT_AGENT_CACHE

    @property
    def agent(self) -> AnyAgent:
        """The agent, built (or rebuilt after `invalidate`) on demand."""
        return self._cache.get_or_create(self.key, self._build)

    def invalidate(self) -> None:
        """Drop the cached agent (after an abort or a timeout)."""
        self._cache.invalidate(self.key)


def agent_version(*, kind: str, system_prompt: str | None, tools: dict[str, ToolSpec], settings: Settings) -> str:
    """A hash of everything that changes how the agent behaves (short hex)."""
    material = {
        "kind": kind,
        "system_prompt": system_prompt,
        "tools": {name: spec.model_dump(mode="json", by_alias=True) for name, spec in tools.items()},
        "tool_retries": settings.tool_retries,
        "output_retries": settings.output_retries,
        "timeout": settings.timeout,
    }
    digest = hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()
    return f"{kind}:{digest[:16]}"


def _self_contained(system_prompt: str | None, tools: dict[str, ToolSpec], settings: Settings) -> AnyAgent:
    output_type: Any = [str, DeferredToolRequests] if can_defer(tools) else str
    return Agent(
        None,
        instructions=system_prompt,
        output_type=output_type,
        deps_type=ToolCallCounts,
        toolsets=[build_toolset(tools)] if tools else None,
        retries={"tools": settings.tool_retries, "output": settings.output_retries},
    )


def agent_for_prompt(
    system_prompt: str | None, settings: Settings | None = None, *, cache: AgentCache | None = None
) -> AgentHandle:
    """A self-contained agent with no tools, for one-shot prompts (`agentrig prompt`)."""
    settings = settings or Settings()
    key = agent_version(kind="prompt", system_prompt=system_prompt, tools={}, settings=settings)
    return AgentHandle(
        key=key,
        build=lambda: _self_contained(system_prompt, {}, settings),
        label="self-contained",
        deps=ToolCallCounts(),
        cache=cache,
    )


def agent_for_scenario(loaded: LoadedScenario, *, cache: AgentCache | None = None) -> AgentHandle:
    """The agent the scenario names (`agent:`), or a self-contained one built from its YAML."""
    scenario = loaded.scenario
    if scenario.agent is not None:
        spec = scenario.agent
        search = [loaded.base_dir, Path.cwd()]
        load_user_agent(spec, search_paths=search, scenario_path=loaded.path, line=loaded.line_of("agent"))
        key = agent_version(kind=f"user:{spec}", system_prompt=None, tools={}, settings=scenario.settings)
        key += f":{loaded.base_dir.resolve()}"
        return AgentHandle(
            key=key,
            build=lambda: load_user_agent(spec, search_paths=search, scenario_path=loaded.path),
            label=spec,
            cache=cache,
        )
    prompt = loaded.system_prompt_text()
    tools = dict(scenario.tools)
    key = agent_version(kind="self-contained", system_prompt=prompt, tools=tools, settings=scenario.settings)
    return AgentHandle(
        key=key,
        build=lambda: _self_contained(prompt, tools, scenario.settings),
        label="self-contained",
        deps=ToolCallCounts(),
        cache=cache,
    )


def _hint(exit_: SystemExit) -> str:
    # argparse exits with 2 on arguments it does not know: at import time it parses agentrig's command line.
    return " (an argparse parser run at import time reads agentrig's own command line)" if exit_.code == 2 else ""


@contextmanager
def _on_sys_path(paths: Sequence[Path]) -> Generator[None]:
    added = [str(p.resolve()) for p in paths if str(p.resolve()) not in sys.path]
    sys.path[:0] = added
    try:
        yield
    finally:
        for entry in added:
            if entry in sys.path:
                sys.path.remove(entry)


def _import_module(module_name: str, fail: Callable[[str], ScenarioError]) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            raise fail(
                f"module {module_name!r} not found (searched the scenario's directory, the current directory"
                " and sys.path)"
            ) from None
        raise fail(f"importing {module_name!r} failed: {error}") from None
    except Exception as error:  # the user's module may raise anything while importing
        raise fail(f"importing {module_name!r} failed: {type(error).__name__}: {error}") from None
    except SystemExit as exit_:  # sys.exit() or argparse at import time must not end agentrig's run
        raise fail(f"importing {module_name!r} called sys.exit({exit_.code!r}){_hint(exit_)}") from None


def load_user_agent(
    spec: str,
    *,
    search_paths: Sequence[Path] = (),
    scenario_path: Path | str | None = None,
    line: int | None = None,
) -> AnyAgent:
    """Import `module:attribute` (a dotted attribute path is allowed) and return the `Agent` it names, calling
    it first when it is a zero-argument factory. Errors are `ScenarioError`s naming the file and `agent`."""

    def fail(message: str) -> ScenarioError:
        return ScenarioError(message, path=scenario_path, line=line, field="agent")

    module_name, _, attribute_path = spec.partition(":")
    if not module_name or not attribute_path:
        raise fail(f"{spec!r} is not of the form module:attribute")
    with _on_sys_path(search_paths):
        value: Any = _import_module(module_name, fail)
    for attribute in attribute_path.split("."):
        if attribute not in dir(value):
            raise fail(f"module {module_name!r} has no attribute {attribute_path!r}")
        value = getattr(value, attribute)
    if isinstance(value, AbstractAgent):
        return value  # pyright: ignore[reportUnknownVariableType]
    if not callable(value):
        raise fail(f"{spec!r} is a {type(value).__name__}, not a pydantic-ai Agent or a factory returning one")
    try:
        built: Any = value()
    except TypeError as error:
        raise fail(f"{spec!r} is not an Agent and cannot be called without arguments: {error}") from None
    except Exception as error:  # the user's factory may raise anything
        raise fail(f"calling the factory {spec!r} failed: {type(error).__name__}: {error}") from None
    except SystemExit as exit_:
        raise fail(f"calling the factory {spec!r} called sys.exit({exit_.code!r}){_hint(exit_)}") from None
    if not isinstance(built, AbstractAgent):
        raise fail(f"the factory {spec!r} returned a {type(built).__name__}, not a pydantic-ai Agent")
    return built  # pyright: ignore[reportUnknownVariableType]
