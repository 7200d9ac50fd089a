"""Scenarios one after another, driven from one event loop: all of them with `-j 1`, a batch in a `-j N` worker.

Entering an event loop per scenario (`asyncio.run`) cost 0.7-1 ms, a sixth of a scripted scenario's own run;
one loop for them all does not. Each scenario is still isolated: the tasks it leaves running are cancelled
when it ends (`scenario_run.run_one_in_loop`).

One thing escapes a coroutine: a SystemExit raised in a task the scenario's agent started (a tool run by
pydantic-ai's graph, say) ends the loop itself. Then that scenario becomes an `error`, as `run_one` would make
it, and the rest go on in a new loop. KeyboardInterrupt propagates to the caller, which writes what finished.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

from agentrig.runtime.history.run_records import ScenarioResult
from agentrig.runtime.suite.options import ExecuteScenario, RunOptions
from agentrig.runtime.suite.outcome import is_failure
from agentrig.runtime.suite.scenario_run import failed_result, run_one_in_loop
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["run_sequentially"]


def run_sequentially(
    scenarios: Iterable[LoadedScenario],
    options: RunOptions,
    *,
    model: Any,
    execute: ExecuteScenario | None,
    record: Callable[[LoadedScenario, ScenarioResult], None],
) -> None:
    """Run `scenarios` in order, calling `record` as each finishes; stop after the first failure with `-x`.

    They are taken one at a time, so a lazy iterable (`ScenarioRef.load` for each) loads each right before it runs."""
    pending = iter(scenarios)
    running: list[tuple[LoadedScenario, float]] = []  # the scenario in flight, and when it started

    async def drive() -> None:
        for item in pending:
            running[:] = [(item, time.perf_counter())]
            result = await run_one_in_loop(item, options=options, model=model, execute=execute)
            running.clear()
            record(item, result)
            if options.fail_fast and is_failure(result):
                return

    while True:  # `drive` returns once every scenario ran or -x stopped it; SystemExit takes it down mid-way
        try:
            asyncio.run(drive())
            return
        except SystemExit as error:  # raised in a task of the scenario's own: it ended the loop, not the run
            item, started = running.pop()
            result = failed_result(item, error, started=started, options=options)
            record(item, result)
            if options.fail_fast and is_failure(result):
                return
