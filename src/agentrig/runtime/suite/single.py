"""Scenarios run one at a time, for a front end that schedules them itself: the pytest plugin (one item per
scenario, pytest-xdist spreading the items) and `agentrig.testing` (a scenario inside a user's own test).

    session = ScenarioSession(RunOptions(out_dir=None))
    result = session.run(loaded)          # a ScenarioResult: checks, status, usage, and the history
    session.close()

The same path as `agentrig run -j 1` (`sequential`): the options checked by the runner's rules, one model for the
whole session, and each scenario through `scenario_run.run_one_in_loop` in one event loop kept across them (entering
a loop per scenario costs 0.7-1 ms, a sixth of a scripted scenario). With `options.out_dir` each scenario's folder is
written as `agentrig run --out` writes it; the report files are the front end's (they need every scenario's entry).
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from typing import Any

from agentrig.runtime.history.redaction import refresh_secrets
from agentrig.runtime.history.run_records import ScenarioResult
from agentrig.runtime.models.chain import real_model
from agentrig.runtime.suite.options import ExecuteScenario, RunOptions
from agentrig.runtime.suite.processes.run_limiter import session_limiter
from agentrig.runtime.suite.runner import check_recording_dirs, checked_options, live_model_name
from agentrig.runtime.suite.scenario_run import engine_for, failed_result, run_one_in_loop
from agentrig.runtime.suite.sequential import FedLane
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["ScenarioSession", "with_agent"]


def with_agent(execute: ExecuteScenario | None, *, agent: Any = None, deps: Any = None, deps_given: bool) -> Any:
    """The engine, told to run `agent` (an `Agent` object) in place of the scenario's and/or to use `deps`."""
    if agent is None and not deps_given:
        return execute
    from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import NO_DEPS, execute_scenario

    if execute is not None and execute is not execute_scenario:
        raise ValueError("an agent or deps object can be given to the pydantic-ai engine only")
    return partial(execute_scenario, agent=agent, deps=deps if deps_given else NO_DEPS)


class ScenarioSession:
    """Runs loaded scenarios one by one with one set of `RunOptions` (`jobs` is ignored: the caller schedules)."""

    def __init__(self, options: RunOptions, *, execute: ExecuteScenario | None = None) -> None:
        refresh_secrets()  # the environment's key values, read once for this session's redaction
        self.options = checked_options(options)
        limiter = session_limiter(self.options)
        self._model = real_model(
            live_model_name(self.options),
            base_url=self.options.base_url,
            options=self.options.provider,
            limiter=limiter,
        )
        check_recording_dirs(self.options)
        self._execute = engine_for(execute)
        self._runner: asyncio.Runner | None = None
        self._lanes: dict[int, FedLane] = {}
        """The watched lane of each engine items ran on (`run_watched`), kept from one scenario to the next."""

    def run(self, loaded: LoadedScenario, *, execute: ExecuteScenario | None = None) -> ScenarioResult:
        """Run, check and (with `options.out_dir`) write one scenario; `execute` replaces the session's engine for
        it. KeyboardInterrupt propagates; anything else the agent raises, SystemExit included, is its `error`."""
        started = time.perf_counter()
        if self._runner is None:
            # A loop of our own, never installed as the thread's current loop: the user's other tests keep theirs.
            self._runner = asyncio.Runner(loop_factory=asyncio.new_event_loop)
        work = run_one_in_loop(loaded, options=self.options, model=self._model, execute=execute or self._execute)
        try:
            return self._runner.run(work)
        except SystemExit as error:  # raised in a task of the agent's own, it ended the loop (see `sequential`)
            self.close()
            return failed_result(loaded, error, started=started, options=self.options)

    def run_watched(self, loaded: LoadedScenario, *, execute: ExecuteScenario | None = None) -> ScenarioResult:
        """`run`, on a watched lane as `agentrig run -j 1` runs each scenario (`sequential.FedLane`): the scenario
        runs in a thread of its own, with an event loop of its own (both kept for the next scenario), while the
        calling (main) thread watches it. So `settings.timeout` bounds the whole scenario (abandoned past
        `sequential.scenario_budget`, a `timeout` failure, even when it blocks its loop), Ctrl-C and SIGTERM reach
        the caller at once (the scenario is cancelled, given `sequential.WIND_DOWN_S`, and KeyboardInterrupt
        propagates), and `os._exit` is the scenario's error. Any other exception raised into the watching thread
        (a signal handler's) also leaves the scenario and propagates. For the pytest plugin's items;
        `agentrig.testing` uses `run` (the agent then runs in the caller's thread, where a test's deps objects
        were made). `execute` replaces the session's engine for it."""
        engine = execute or self._execute
        lane = self._lanes.get(id(engine))
        if lane is None:
            lane = self._lanes[id(engine)] = FedLane(self.options, model=self._model, execute=engine)
        return lane.run(loaded)

    async def run_async(self, loaded: LoadedScenario, *, execute: ExecuteScenario | None = None) -> ScenarioResult:
        """`run` inside the caller's running event loop (an async test)."""
        started = time.perf_counter()
        work = run_one_in_loop(loaded, options=self.options, model=self._model, execute=execute or self._execute)
        try:
            return await work
        except SystemExit as error:
            return failed_result(loaded, error, started=started, options=self.options)

    def close(self) -> None:
        """End the session's event loop (cancelling what a scenario left in it)."""
        if self._runner is not None:
            runner, self._runner = self._runner, None
            runner.close()
        for lane in self._lanes.values():
            lane.close()
        self._lanes.clear()
