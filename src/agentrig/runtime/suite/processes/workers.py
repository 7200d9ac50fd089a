"""Worker processes for `-j N`: a forkserver pool whose workers load, run, check and write one scenario each.

Workers are processes, not threads: a pydantic-ai run is CPU-bound Python and threads would serialize on the
GIL. Each worker gets a small batch of scenarios already loaded (detached from their YAML nodes, read from the
runner's `scenario_store` as the batch is sent: files are parsed once per run, by the parent), runs them from
one event loop as `-j 1` does, checks them, writes their output files and sends back their `ScenarioResult`s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from agentrig.runtime.checks.outcome import is_failure
from agentrig.runtime.history.run_records import RunError, ScenarioResult
from agentrig.runtime.models.chain import real_model
from agentrig.runtime.suite.options import ExecuteScenario, RunOptions
from agentrig.runtime.suite.outputs.scenario_files import write_scenario_outputs
from agentrig.runtime.suite.processes import stop_signals
from agentrig.runtime.suite.processes.pool import new_pool
from agentrig.runtime.suite.processes.run_limiter import worker_limiter
from agentrig.runtime.suite.scenario_store import ScenarioIdentity, ScenarioRef
from agentrig.runtime.suite.sequential import run_sequentially
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["run_parallel"]

_worker_model: dict[str, Any] = {}


def _run_in_worker(
    batch: Sequence[LoadedScenario], options: RunOptions, execute: ExecuteScenario | None
) -> list[ScenarioResult]:
    """Run a batch of scenarios from one event loop (`sequential`, as `-j 1` does: entering a loop per scenario
    cost 0.7-1 ms). With `-x` the batch stops at its first failure."""
    live = options.model if options.live_model else None  # a replay reaches no provider: no model, no key
    if live is not None and live not in _worker_model:
        # One model for the worker's life, behind the run's limiter (`run_limiter`): the bound holds across workers.
        limiter = worker_limiter(options)
        _worker_model[live] = real_model(live, base_url=options.base_url, options=options.provider, limiter=limiter)
    results: list[ScenarioResult] = []
    model = _worker_model.get(live or "")
    run_sequentially(batch, options, model=model, execute=execute, record=lambda _, result: results.append(result))
    return results


_LARGEST_BATCH = 8
"""Scenarios sent to a worker at once at most: enough to share an event loop, few enough to keep progress
lines coming and the last batches short, so no worker is left with a long tail while the others idle."""


def _batch_size(pending: int, options: RunOptions, total: int) -> int:
    if options.fail_fast or options.max_cost is not None:
        return 1  # stop promptly (-x, or a spent --max-cost): nothing is in flight beyond one scenario per worker
    if options.width > 1:  # provider-bound: a worker runs its batch side by side, as many as may be in flight, the
        return max(1, min(options.width, -(-total // options.jobs)))  # run's scenarios dealt evenly to the workers
    return max(1, min(_LARGEST_BATCH, pending // (options.jobs * 4)))


def _worker_died(item: ScenarioIdentity, started: float) -> ScenarioResult:
    """The result of a scenario whose worker process died under it (os.abort, a segfault, the OOM killer)."""
    return ScenarioResult(
        name=item.name,
        path=item.path.as_posix(),
        tags=item.tags,
        status="error",
        error=RunError(
            kind="agent_error",
            message="the worker process running this scenario died (a crash, os.abort() or the OOM killer)",
        ),
        duration_s=time.perf_counter() - started,
    )


def run_parallel(
    pool: ProcessPoolExecutor,
    selected: Sequence[ScenarioRef],
    options: RunOptions,
    execute: ExecuteScenario | None,
    record: Callable[[ScenarioRef, ScenarioResult], None],
    *,
    may_start: Callable[[int], bool] = lambda running: True,
) -> None:
    """Run `selected` on `pool`, calling `record` as each finishes. Each batch is loaded as it is sent, while
    `may_start(batches running)` (`--max-cost`: until the budget is spent).

    A worker that dies breaks the whole pool, and every scenario in flight loses its result, not only the one
    that killed it. Then the pool is replaced, and the scenarios that were in flight run again one at a time:
    one that kills its worker when it runs alone is the culprit and becomes an `error`; the others get their
    real results. Each runs at most twice.
    """
    pending = list(selected)
    suspects: list[ScenarioRef] = []
    # future -> (its scenarios, submitted alone, started)
    running: dict[Future[list[ScenarioResult]], tuple[list[ScenarioRef], bool, float]] = {}
    # A few batches queued per worker hide the round trip to the parent; with -x only `jobs` scenarios are in
    # flight (batches of one), so it stops promptly.
    window = options.jobs if options.fail_fast else options.jobs * 2
    stop = False

    def first_id(future: Future[list[ScenarioResult]]) -> str:
        return running[future][0][0].id

    def submit(batch: list[ScenarioRef], *, alone: bool) -> None:
        future = pool.submit(_run_in_worker, [ref.load() for ref in batch], options, execute)
        running[future] = (batch, alone, time.perf_counter())

    try:
        while (pending and not stop and may_start(len(running))) or suspects or running:
            if suspects and not running:
                submit([suspects.pop(0)], alone=True)
            while not suspects and pending and not stop and len(running) < window and may_start(len(running)):
                size = _batch_size(len(pending), options, len(selected))
                batch, pending = pending[:size], pending[size:]
                submit(batch, alone=False)
            if not running:
                break
            with stop_signals.waiting():  # Ctrl-C and SIGTERM reach the run here, never mid-record
                done, _ = wait(running, timeout=stop_signals.WAIT_SLICE_S, return_when=FIRST_COMPLETED)
            broken = False
            for future in sorted(done, key=first_id):
                batch, alone, started = running.pop(future)
                try:
                    results = future.result()
                except BrokenProcessPool:
                    broken = True
                    if not alone:
                        suspects.extend(batch)
                        continue
                    results = [_worker_died(batch[0], started)]
                    if options.out_dir is not None:  # the worker may have left the folder half written
                        results = [write_scenario_outputs(options.out_dir, results[0])]
                for item, result in zip(batch, results, strict=False):  # shorter: a batch that stopped (-x)
                    record(item, result)
                    if options.fail_fast and is_failure(result):
                        stop = True
            if broken:
                suspects.extend(item for batch, _, _ in running.values() for item in batch)
                suspects.sort(key=lambda item: item.id)
                running.clear()
                pool.shutdown(wait=False, cancel_futures=True)
                pool = new_pool(options.jobs)
    except BaseException:
        _stop_workers(pool, within_s=0.0)
        raise
    _stop_workers(pool, within_s=WORKERS_EXIT_S)


WORKERS_EXIT_S = 5.0
"""How long idle workers get to exit at the end of a run before they are killed: one whose scenario left a
thread that never ends (Python joins such threads at exit) would otherwise keep the run from ending."""


def _stop_workers(pool: ProcessPoolExecutor, *, within_s: float) -> None:
    # concurrent.futures offers no public way to stop running workers; after Ctrl-C or SIGTERM they must not keep
    # running (they ignore both), so end them. The mapping is private but stable since 3.8; shutdown drops it.
    processes: list[Any] = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + within_s
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.kill()
