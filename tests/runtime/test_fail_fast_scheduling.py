"""`-x` with `-j`: once a failure is seen nothing more is scheduled, and only `jobs` scenarios are ever in flight.

Checked with a pool whose futures finish in a known order, so the promise is tested exactly, not through
how fast worker processes happen to be on the machine running the tests.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, cast

from agentrig.runtime.history.run_records import ScenarioResult
from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.processes.workers import run_parallel
from agentrig.runtime.suite.scenario_store import ScenarioRef, store_scenarios
from agentrig.scenarios.loader import load_paths
from tests.runtime.runner_fakes import fake_execute
from tests.runtime.test_runner import write_scenario


class OrderedPool:
    """Runs each submitted batch at once, in this process; its future is done by the time `wait` looks."""

    def __init__(self) -> None:
        self.submitted: list[str] = []

    def submit(self, function: Callable[..., list[ScenarioResult]], *args: Any) -> Future[list[ScenarioResult]]:
        future: Future[list[ScenarioResult]] = Future()
        self.submitted.extend(item.path.stem for item in args[0])
        future.set_result(function(*args))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        del wait, cancel_futures


def _run(directory: Path, *, jobs: int) -> tuple[OrderedPool, list[str]]:
    options = RunOptions(paths=(directory,), out_dir=None, jobs=jobs, fail_fast=True)
    selected = store_scenarios(load_paths(options.paths))
    pool = OrderedPool()
    finished: list[str] = []

    def record(item: ScenarioRef, result: ScenarioResult) -> None:
        finished.append(f"{item.name}:{result.status}")

    run_parallel(cast(Any, pool), selected, options, fake_execute, record)
    return pool, finished


def test_nothing_is_scheduled_after_the_first_failure(tmp_path: Path) -> None:
    write_scenario(tmp_path, "q0", text="wrong")
    for index in range(1, 8):
        write_scenario(tmp_path, f"q{index}")

    pool, finished = _run(tmp_path, jobs=2)

    assert pool.submitted == ["q0", "q1"]  # the window is `jobs` with -x
    assert finished == ["q0:failed", "q1:passed"]


def test_a_failure_later_in_the_run_stops_the_rest(tmp_path: Path) -> None:
    for index in range(8):
        write_scenario(tmp_path, f"q{index}", text="wrong" if index == 4 else "done")

    pool, finished = _run(tmp_path, jobs=3)

    assert pool.submitted == ["q0", "q1", "q2", "q3", "q4", "q5"]
    assert finished == ["q0:passed", "q1:passed", "q2:passed", "q3:passed", "q4:failed", "q5:passed"]


def test_without_x_scenarios_go_in_batches_and_each_is_recorded_once_in_order(tmp_path: Path) -> None:
    for index in range(40):
        write_scenario(tmp_path, f"q{index:02d}")
    options = RunOptions(paths=(tmp_path,), out_dir=None, jobs=2)
    pool = BatchCountingPool()
    finished: list[str] = []
    run_parallel(
        cast(Any, pool),
        store_scenarios(load_paths(options.paths)),
        options,
        fake_execute,
        lambda item, _: finished.append(item.name),
    )
    assert finished == [f"q{index:02d}" for index in range(40)]
    assert max(pool.sizes) > 1  # shared event loops
    assert pool.sizes[-1] == 1  # the tail is short, so no worker is left with a long one


class BatchCountingPool(OrderedPool):
    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def submit(self, function: Callable[..., list[ScenarioResult]], *args: Any) -> Future[list[ScenarioResult]]:
        self.sizes.append(len(args[0]))
        return super().submit(function, *args)
