"""The loaded scenarios of a run, held as light references until each one's turn comes.

    refs = store_scenarios(iter_scenarios(paths))   # each file parsed once; past a thousand, kept pickled on disk
    ref.id, ref.name, ref.path, ref.tags            # what -k, --shard and a not-run scenario's result need
    ref.load()                                      # the `LoadedScenario` itself, right before it runs

A loaded scenario is about 16 KB of objects; a reference is a few hundred bytes. So a run of 10,000 scenarios
holds about what one of 1,000 does, and still reads each file once, whatever `-j`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from agentrig.runtime.suite.spool import Spool
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["ScenarioIdentity", "ScenarioRef", "named_modules", "store_scenarios"]


class ScenarioIdentity(Protocol):
    """What names a scenario in a run: a `LoadedScenario`, or a `ScenarioRef` to one."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def tags(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class ScenarioRef:
    """One scenario of a run, by reference."""

    id: str
    name: str
    path: Path
    tags: tuple[str, ...]
    store: Spool[LoadedScenario]
    index: int
    user_modules: tuple[str, ...] = ()
    """The modules its `agent:` and `deps:` name (`-j N` workers start with them imported)."""
    base_dir: Path | None = None
    """The scenario's directory, where those modules are imported from."""
    pass_rate: float | None = None
    """Its `settings.pass_rate`: the fraction of its repeats it must pass (`--repeat`)."""
    repeat: int = 0
    """Which run of the scenario this is under `--repeat N` (1..N; its name then ends in `@NN`), 0 without."""
    timeout: float | None = None
    """Its `settings.timeout` (`--timeout` applies where it is None)."""
    turns: int = 0
    """How many turns it has: with `timeout`, what its run may take (`timeouts.budget_of`)."""

    def load(self) -> LoadedScenario:
        """The scenario (from memory, or read back from the spool: then a copy of its own), named as this run of
        it under `--repeat`."""
        loaded = self.store[self.index]
        if self.repeat:
            loaded = replace(loaded, scenario=loaded.scenario.model_copy(update={"name": self.name}))
        return loaded


def named_modules(scenario: LoadedScenario) -> tuple[str, ...]:
    """The modules a scenario's `agent:` and `deps:` (`module:attribute`) name."""
    named = (scenario.scenario.agent, scenario.scenario.deps)
    return tuple(spec.partition(":")[0] for spec in named if spec)


def store_scenarios(scenarios: Iterable[LoadedScenario]) -> list[ScenarioRef]:
    """A reference to each scenario, the scenarios themselves kept in one new spool (detached from their YAML)."""
    store = Spool[LoadedScenario]()
    refs: list[ScenarioRef] = []
    for scenario in scenarios:
        scenario = scenario.detached()
        modules = named_modules(scenario)
        index = store.append(scenario)
        pass_rate = scenario.scenario.settings.pass_rate
        refs.append(
            ScenarioRef(
                scenario.id,
                scenario.name,
                scenario.path,
                scenario.tags,
                store,
                index,
                modules,
                scenario.base_dir,
                pass_rate,
                timeout=scenario.scenario.settings.timeout,
                turns=scenario.scenario.most_turns,
            )
        )
    return refs
