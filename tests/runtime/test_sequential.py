"""`-j 1` drives every scenario from one event loop; nothing one scenario starts may outlive it."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite
from agentrig.runtime.suite.scenario_run import run_one
from agentrig.scenarios.loader import LoadedScenario, load_paths
from tests.runtime.runner_fakes import FakeExecution, fake_execute
from tests.runtime.test_runner import write_scenario


def test_tasks_a_scenario_leaves_running_are_cancelled_when_it_ends(tmp_path: Path) -> None:
    for name in ("alpha", "beta"):
        write_scenario(tmp_path, name)
    left_running: list[asyncio.Task[None]] = []
    loops: set[int] = set()

    async def leaves_a_task(loaded: LoadedScenario, *, model: Any = None) -> FakeExecution:
        loops.add(id(asyncio.get_running_loop()))
        if left_running:
            assert left_running[0].cancelled()  # gone before the next scenario starts
        left_running.append(asyncio.get_running_loop().create_task(asyncio.sleep(3600)))
        return await fake_execute(loaded, model=model)

    suite = run_suite(RunOptions(paths=(tmp_path,), out_dir=None), execute=leaves_a_task)
    assert [result.status for result in suite.results] == ["passed", "passed"]
    assert len(loops) == 1  # one loop for the run
    assert all(task.cancelled() for task in left_running)


def test_a_run_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    # The run hides what lives as long as it does from the cyclic collector; afterwards nothing may stay hidden
    # (a frozen object is never collected).
    write_scenario(tmp_path, "alpha")
    assert gc.get_freeze_count() == 0
    run_suite(RunOptions(paths=(tmp_path,), out_dir=None), execute=fake_execute)
    assert gc.get_freeze_count() == 0


def test_run_one_makes_a_sys_exit_in_a_task_of_the_agents_own_its_error(tmp_path: Path) -> None:
    # A SystemExit raised in another task ends `asyncio.run` itself instead of reaching the scenario's coroutine.
    write_scenario(tmp_path, "alpha")

    async def exits_in_a_task(loaded: LoadedScenario, *, model: Any = None) -> FakeExecution:
        async def tool() -> None:
            raise SystemExit(4)

        asyncio.get_running_loop().create_task(tool())
        await asyncio.sleep(1)
        return await fake_execute(loaded, model=model)

    (loaded,) = load_paths([tmp_path])
    result = run_one(loaded, options=RunOptions(out_dir=None), execute=exits_in_a_task)
    assert result.status == "error"
    assert result.error is not None
    assert "sys.exit(4)" in result.error.message
