"""A scenario's simulated turns (`simulate:`), from the suite's side: what the run gives their user models (its
limiter, prices and record mode: `simulating`), the scenario as it ran (each simulated turn replaced by the ordinary
turns it ran, so every check reads turn N as the run's turn N: `as_run`), and their requests counted in the
scenario's usage and cost beside the judges' (`with_users_spend`)."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentrig.runtime.history.run_records import TurnRecord
from agentrig.runtime.models.record_modes import record_setup
from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.repeats import recording_name
from agentrig.scenarios.loader import LoadedScenario
from agentrig.scenarios.model import Turn, TurnExpectations

if TYPE_CHECKING:  # pydantic-ai is imported only for a scenario that simulates a user
    from agentrig.runtime.models.simulated_user import SimulatedUsers

__all__ = ["as_run", "simulates", "simulating", "with_users_spend"]


def simulates(loaded: LoadedScenario) -> bool:
    """Whether the scenario has a simulated turn."""
    return any(turn.simulate is not None for turn in loaded.scenario.turns)


@contextmanager
def simulating(loaded: LoadedScenario, options: RunOptions, model: Any) -> Generator[SimulatedUsers | None]:
    """The scenario's simulated users' share of the run while it runs (None when it simulates none): the run's
    limiter (the one its model waits on), its prices, its record mode, its recording name."""
    if not simulates(loaded):
        yield None
        return
    from agentrig.runtime.models.simulated_user import SimulatedUsers, using_simulated_users

    setup = record_setup(
        mode=options.record_mode, record_dir=options.record_dir, replay_dir=options.replay_dir, model=options.model
    )
    users = SimulatedUsers(
        prices=options.prices,
        options=options.provider,
        limiter=getattr(model, "limiter", None),
        setup=setup,
        recording=recording_name(loaded.scenario.name, setup),  # the agent's recording's name, as its judges'
    )
    with using_simulated_users(users):
        yield users


def as_run(loaded: LoadedScenario, turns: Sequence[TurnRecord]) -> LoadedScenario:
    """The scenario with each simulated turn replaced by the turns it ran: the turn's `expect` on the last of them,
    nothing on the others, its user message each one's prompt. Unchanged without simulated turns."""
    scenario = loaded.scenario
    if not simulates(loaded):
        return loaded
    ran: dict[int, list[TurnRecord]] = {}
    for record in turns:
        if record.simulated is not None:
            ran.setdefault(record.simulated.turn, []).append(record)
    expanded: list[Turn] = []
    for index, turn in enumerate(scenario.turns):
        if turn.simulate is None:
            expanded.append(turn)
            continue
        records = ran.get(index, [])
        for position, record in enumerate(records):
            last = position == len(records) - 1
            expect = turn.expect if last else TurnExpectations()
            expanded.append(turn.model_copy(update={"simulate": None, "user": record.prompt, "expect": expect}))
    return replace(loaded, scenario=scenario.model_copy(update={"turns": tuple(expanded)}))


def with_users_spend(judged: Any, users: SimulatedUsers | None) -> Any:
    """The judged run (`suite.judging.JudgedRun`, or None) with the simulated users' requests and costs added, so
    the scenario's usage and cost count them as they count the judges' (after its limits, which measure the agent's
    requests)."""
    if users is None or (not users.costs and users.usage.requests == 0):
        return judged
    from agentrig.runtime.suite.judging import JudgedRun

    base = judged if judged is not None else JudgedRun()
    return replace(base, usage=users.usage + base.usage, costs=[*users.costs, *base.costs])
