"""The agent a scenario runs: a self-contained one built from the YAML, or the user's own (`module:attribute`).

Agents are built once and cached under a version hash of everything that changes their behaviour (the
removal contract's `_compute_agent_version`: retries, timeout, prompt, tools). The orchestrator invalidates
the cache entry after an abort or a timeout, so the next request gets a freshly built agent.

A self-contained agent takes the scenario's system prompt as pydantic-ai `instructions`, not
`system_prompt=`: the loop contract strips system prompts from stored history, and pydantic-ai adds
`system_prompt=` parts only to a conversation without history (2.38 and 2.68), so from the second turn on
the model would never see it again. Instructions are sent with every request and never stored as parts.

The user's agent keeps its own tools, instructions and settings; only its model is replaced per run
(`agent.iter(model=...)`), and the retry budgets when the scenario sets them (`retries=` of the run). An
`Agent` is shared by every scenario naming it; a factory is called once per scenario.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.agent import AbstractAgent

from agentrig.errors import ScenarioError
from agentrig.runtime.engine.module_loading import resolve_attribute, sys_exit_hint
from agentrig.runtime.engine.pydantic_ai_engine.deps import offline_import
from agentrig.runtime.engine.pydantic_ai_engine.yaml_output import add_output_validator, output_type
from agentrig.runtime.engine.pydantic_ai_engine.yaml_tools import (
    ToolCallCounts,
    build_tools,
    can_defer,
    tools_may_fail,
)
from agentrig.scenarios.loader import LoadedScenario
from agentrig.scenarios.model import OutputSpec, Settings, ToolSpec

__all__ = [
    "DEFAULT_AGENT_CACHE",
    "AgentCache",
    "AgentHandle",
    "agent_for_prompt",
    "agent_for_scenario",
    "agent_version",
    "call_factory",
    "load_user_agent",
    "resolve_user_agent",
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
        run_retries: Mapping[str, int] | None = None,
        tools_may_fail: bool = True,
    ) -> None:
        self.key = key
        """The version hash the agent is cached under."""
        self.label = label
        """`self-contained` or the `module:attribute` of the user's agent, for messages."""
        self.deps = deps
        """Passed as `deps=` to every run (YAML tools keep their call counts here; a user's agent gets the
        scenario's `deps`)."""
        self.run_retries = dict(run_retries) if run_retries is not None else None
        """pydantic-ai's run-level `retries=` (the scenario's explicit retry settings); None keeps the agent's."""
        self.tools_may_fail = tools_may_fail
        """Whether a tool of the agent can raise an exception of its own, so a run must hold tool failures
        (`held_failures`); False only for a self-contained agent whose YAML tools cannot (`yaml_tools.tools_may_fail`)
        and that has no output type of its own."""
        self.run_capabilities: list[Any] = []
        """Capabilities added to every run (`capabilities=` of the run): the scenario's `capabilities` and
        `history_processors` (`composition.load_composition`)."""
        self._build = build
        self._cache = cache if cache is not None else DEFAULT_AGENT_CACHE

    @property
    def agent(self) -> AnyAgent:
        """The agent, built (or rebuilt after `invalidate`) on demand."""
        return self._cache.get_or_create(self.key, self._build)

    def invalidate(self) -> None:
        """Drop the cached agent (after an abort or a timeout)."""
        self._cache.invalidate(self.key)


def agent_version(
    *,
    kind: str,
    system_prompt: str | None,
    tools: dict[str, ToolSpec],
    settings: Settings,
    output: OutputSpec | None = None,
    base_dir: Path | None = None,
) -> str:
    """A hash of everything that changes how the agent behaves (short hex); `base_dir` where `output.type` is
    imported from."""
    material = {
        "kind": kind,
        "system_prompt": system_prompt,
        "tools": {name: spec.model_dump(mode="json", by_alias=True) for name, spec in tools.items()},
        "output": output.model_dump(mode="json", by_alias=True) if output is not None else None,
        "base_dir": str(base_dir.resolve()) if output is not None and _imports_type(output) and base_dir else None,
        "tool_retries": settings.tool_retries,
        "output_retries": settings.output_retries,
        "timeout": settings.timeout,
    }
    digest = hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()
    return f"{kind}:{digest[:16]}"


def _imports_type(output: OutputSpec) -> bool:
    """Whether the output names a Python type (imported from the scenario's folder)."""
    return output.type is not None or any(tool.type is not None for tool in output.tools)


def _self_contained(
    system_prompt: str | None,
    tools: dict[str, ToolSpec],
    settings: Settings,
    output: OutputSpec | None = None,
    loaded: LoadedScenario | None = None,
    offline: bool = False,
) -> AnyAgent:
    search = [loaded.base_dir, Path.cwd()] if loaded is not None else [Path.cwd()]
    agent: AnyAgent = Agent(
        None,
        instructions=system_prompt,
        output_type=output_type(
            output,
            may_defer=can_defer(tools),
            search_paths=search,
            scenario_path=loaded.path if loaded is not None else None,
            line=loaded.line_of("output", "type") if loaded is not None else None,
            line_of=(lambda index: loaded.line_of("output", "tools", index, "type")) if loaded is not None else None,
            offline=offline,
        ),
        deps_type=ToolCallCounts,
        tools=build_tools(tools),
        retries={"tools": settings.tool_retries, "output": settings.output_retries},
    )
    add_output_validator(agent, output)
    return agent


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


def _run_retries(settings: Settings) -> dict[str, int] | None:
    """The retry budgets a scenario sets explicitly, as pydantic-ai's run-level `retries=` (None: the agent's own)."""
    given = settings.model_fields_set
    retries = {
        category: value
        for category, name, value in (
            ("tools", "tool_retries", settings.tool_retries),
            ("output", "output_retries", settings.output_retries),
        )
        if name in given
    }
    return retries or None


def agent_for_scenario(
    loaded: LoadedScenario, *, cache: AgentCache | None = None, offline: bool = False, agent: Any = None
) -> AgentHandle:
    """The agent the scenario names (`agent:`), or a self-contained one built from its YAML; `agent`, an `Agent`
    object a Python caller holds (`agentrig.testing`), takes the place of both.

    A factory is called for this scenario alone (its agent is cached in the handle, not shared with other
    scenarios); `offline` imports the agent's module with placeholder provider keys (`deps.offline_import`).
    """
    scenario = loaded.scenario
    if agent is not None:
        if not isinstance(agent, AbstractAgent):
            raise ScenarioError(f"agent= must be a pydantic-ai Agent, got {type(agent).__name__}", path=loaded.path)
        given: AnyAgent = agent
        label = f"{type(given).__name__}({given.name or 'unnamed'})"
        key = agent_version(kind=f"object:{id(given)}", system_prompt=None, tools={}, settings=scenario.settings)
        return AgentHandle(
            key=key,
            build=lambda: given,
            label=label,
            cache=AgentCache(),  # never shared: another object may get this id once this one is gone
            run_retries=_run_retries(scenario.settings),
        )
    if scenario.agent is not None:
        spec = scenario.agent
        search = [loaded.base_dir, Path.cwd()]
        line = loaded.line_of("agent")
        with offline_import(offline):
            target = resolve_user_agent(spec, search_paths=search, scenario_path=loaded.path, line=line)
        key = agent_version(kind=f"user:{spec}", system_prompt=None, tools={}, settings=scenario.settings)
        key += f":{loaded.base_dir.resolve()}"
        if isinstance(target, AbstractAgent):
            user_agent: AnyAgent = target
            return AgentHandle(
                key=key, build=lambda: user_agent, label=spec, cache=cache, run_retries=_run_retries(scenario.settings)
            )

        def build() -> AnyAgent:
            with offline_import(offline):
                return call_factory(target, spec, scenario_path=loaded.path, line=line)

        own_cache = AgentCache()  # per scenario: a factory's agent is never shared with another scenario
        own_cache.get_or_create(key, build)  # fail now, with a clear line, rather than inside the first turn
        return AgentHandle(
            key=key, build=build, label=spec, cache=own_cache, run_retries=_run_retries(scenario.settings)
        )
    prompt = loaded.system_prompt_text()
    tools = dict(scenario.tools)
    output = scenario.output
    key = agent_version(
        kind="self-contained",
        system_prompt=prompt,
        tools=tools,
        settings=scenario.settings,
        output=output,
        base_dir=loaded.base_dir,
    )
    if output is not None and _imports_type(output):
        _self_contained(prompt, tools, scenario.settings, output, loaded, offline)  # fail now, at its line
    return AgentHandle(
        key=key,
        build=lambda: _self_contained(prompt, tools, scenario.settings, output, loaded, offline),
        label="self-contained",
        deps=ToolCallCounts(),
        cache=cache,
        tools_may_fail=output is not None or tools_may_fail(tools),
    )


def resolve_user_agent(
    spec: str, *, search_paths: Sequence[Path] = (), scenario_path: Path | str | None = None, line: int | None = None
) -> AnyAgent | Callable[[], Any]:
    """The `Agent` or the zero-argument factory `module:attribute` names."""

    def fail(message: str) -> ScenarioError:
        return ScenarioError(message, path=scenario_path, line=line, field="agent")

    value = resolve_attribute(spec, search_paths=search_paths, fail=fail)
    if isinstance(value, AbstractAgent):
        return value
    if not callable(value):
        raise fail(f"{spec!r} is a {type(value).__name__}, not a pydantic-ai Agent or a factory returning one")
    return value


def call_factory(
    factory: Callable[[], Any], spec: str, *, scenario_path: Path | str | None = None, line: int | None = None
) -> AnyAgent:
    """Call an agent factory; errors are `ScenarioError`s naming the file and `agent`."""

    def fail(message: str) -> ScenarioError:
        return ScenarioError(message, path=scenario_path, line=line, field="agent")

    try:
        built: Any = factory()
    except TypeError as error:
        raise fail(f"{spec!r} is not an Agent and cannot be called without arguments: {error}") from None
    except Exception as error:  # the user's factory may raise anything
        raise fail(f"calling the factory {spec!r} failed: {type(error).__name__}: {error}") from None
    except SystemExit as exit_:
        raise fail(f"calling the factory {spec!r} called sys.exit({exit_.code!r}){sys_exit_hint(exit_)}") from None
    if not isinstance(built, AbstractAgent):
        raise fail(f"the factory {spec!r} returned a {type(built).__name__}, not a pydantic-ai Agent")
    return built


def load_user_agent(
    spec: str,
    *,
    search_paths: Sequence[Path] = (),
    scenario_path: Path | str | None = None,
    line: int | None = None,
) -> AnyAgent:
    """Import `module:attribute` (a dotted attribute path is allowed) and return the `Agent` it names, calling
    it first when it is a zero-argument factory. Errors are `ScenarioError`s naming the file and `agent`."""
    target = resolve_user_agent(spec, search_paths=search_paths, scenario_path=scenario_path, line=line)
    if isinstance(target, AbstractAgent):
        return target
    return call_factory(target, spec, scenario_path=scenario_path, line=line)
