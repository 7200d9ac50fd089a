"""Scenarios one after another, driven from one event loop: all of them with `-j 1`, a batch in a `-j N` worker.

Entering an event loop per scenario (`asyncio.run`) cost 0.7-1 ms, a sixth of a scripted scenario's own run;
one loop for them all does not. Each scenario is still isolated: the tasks it leaves running are cancelled
when it ends (`scenario_run.run_one_in_loop`).

The loop runs in a thread of its own (a *lane*), and the calling thread watches it. A scenario can block that
loop where asyncio cannot reach it (a sync deps callable or an async tool that sleeps, an import that hangs), and
only a watcher outside the loop can give up on it:

- `settings.timeout` bounds the whole scenario, not only each turn's agent run: past `scenario_budget` (a
  timeout per turn, and one more, at least 5 s, for its agent and deps) the scenario is abandoned, with a
  `timeout` error, and the rest go on in a new lane. The abandoned lane is a daemon thread; it is told to
  cancel, and whatever it finishes later is dropped (`_Lane.abandoned`).
- Ctrl-C and SIGTERM reach the watcher (signals go to the main thread): it cancels the scenario in flight and
  gives it `WIND_DOWN_S` to finish cleanly (its deps' exit, its connections), then abandons it; a second signal
  abandons it at once. KeyboardInterrupt then propagates to the caller, which writes what finished.
- A SystemExit raised in a task the scenario's agent started (a tool run by pydantic-ai's graph, say) ends the
  lane's loop itself: that scenario becomes an `error`, and the rest go on in a new lane.

While scenarios run, `os._exit()` in this process is that scenario's error (`process_exit`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from agentrig.errors import OutputWriteError
from agentrig.runtime.checks.outcome import is_failure
from agentrig.runtime.history.run_records import RunError, ScenarioResult
from agentrig.runtime.suite import stop_signals
from agentrig.runtime.suite.options import ExecuteScenario, RunOptions
from agentrig.runtime.suite.process_exit import intercepted_process_exit
from agentrig.runtime.suite.scenario_run import Finished, failure, run_unwritten, write_finished
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["WIND_DOWN_S", "FedLane", "run_sequentially", "scenario_budget"]

WIND_DOWN_S = 3.0
"""After Ctrl-C or SIGTERM, how long the scenario in flight gets to wind down before it is abandoned."""

Record = Callable[[LoadedScenario, ScenarioResult], None]


SETUP_FLOOR_S = 5.0
"""The least a scenario with a timeout gets for loading its agent and building and closing its deps."""


def scenario_budget(loaded: LoadedScenario) -> float | None:
    """Seconds the whole scenario may take: `settings.timeout` per turn, plus one more timeout (at least
    `SETUP_FLOOR_S`) for loading its agent and building and closing its deps; None without a timeout."""
    timeout = loaded.scenario.settings.timeout
    if timeout is None:
        return None
    return timeout * len(loaded.scenario.turns) + max(timeout, SETUP_FLOOR_S)


def run_sequentially(
    scenarios: Iterable[LoadedScenario],
    options: RunOptions,
    *,
    model: Any,
    execute: ExecuteScenario | None,
    record: Record,
) -> None:
    """Run `scenarios` in order, calling `record` as each finishes; stop after the first failure with `-x`.

    They are taken one at a time, so a lazy iterable (`ScenarioRef.load` for each) loads each right before it runs."""
    pending = iter(scenarios)
    with intercepted_process_exit():
        while True:  # a lane runs until every scenario ran (or -x stopped it), or until it had to be left
            lane = _Lane(pending, options, model=model, execute=execute, record=record)
            if _watch(lane, options, record):
                return


@dataclass(frozen=True, slots=True)
class _InFlight:
    item: LoadedScenario
    started: float
    deadline: float | None


class _Lane:
    """A daemon thread with an event loop of its own, running scenarios from `pending` one after another."""

    def __init__(
        self,
        pending: Iterator[LoadedScenario],
        options: RunOptions,
        *,
        model: Any,
        execute: Any,
        record: Record,
        ready: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.pending = pending
        self.ready = ready
        """Awaited in the lane's loop before it takes each scenario: a fed lane waits there for the next one."""
        self.options = options
        self.model = model
        self.execute = execute
        self.record = record
        self.lock = threading.Lock()
        """Held while the lane takes a scenario or records one, and while the watcher abandons the lane."""
        self.abandoned = False
        self.in_flight: _InFlight | None = None
        self.done = False
        """Every scenario ran, or -x stopped the run: no new lane is needed."""
        self.escaped: BaseException | None = None
        """A KeyboardInterrupt raised inside a scenario, or an `OutputWriteError` writing one: the watcher raises it."""
        self.changed = threading.Event()
        """Set when a scenario with a deadline starts and when the lane ends: the watcher looks again."""
        self.ended = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.Thread(target=self._main, name="agentrig-scenarios", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        loop = self._loop
        loop.set_exception_handler(_quiet_about_agent_generators)
        try:
            self._task = loop.create_task(self._drive())
            loop.run_until_complete(self._task)
        except KeyboardInterrupt as interrupt:
            self.escaped = interrupt
        except asyncio.CancelledError:  # the watcher cancelled the lane (Ctrl-C, or it was abandoned)
            pass
        except OutputWriteError as error:  # agentrig could not write a scenario's files (a full disk): the run stops
            self.escaped = error
        # SystemExit raised in a task of the scenario's own ends the loop, not the run; so does what escapes
        # pydantic-ai's own generators (a GeneratorExit a tool raised, at pydantic-ai 2.38): the scenario's error.
        except BaseException as error:
            self._failed(error)
        finally:
            self.ended.set()
            self.changed.set()
            _close(loop)

    async def _drive(self) -> None:
        options = self.options
        while True:
            if self.ready is not None:
                await self.ready()
            with self.lock:
                if self.abandoned:
                    return
                item = next(self.pending, None)
                if item is None:
                    self.done = True
                    return
                budget = scenario_budget(item)
                now = time.perf_counter()
                self.in_flight = _InFlight(item, now, None if budget is None else now + budget)
            if budget is not None:
                self.changed.set()
            finished = await run_unwritten(item, options=options, model=self.model, execute=self.execute)
            with self.lock:
                if self.abandoned:  # too late: the watcher recorded it as timed out, or the run was stopped
                    return
                result = write_finished(finished, options)
                self.in_flight = None
                self.record(item, result)
            if options.fail_fast and is_failure(result):
                self.done = True
                return

    def _failed(self, error: BaseException) -> None:
        with self.lock:
            in_flight, self.in_flight = self.in_flight, None
            if self.abandoned or in_flight is None:
                return
            result = write_finished(Finished(failure(in_flight.item, error, started=in_flight.started)), self.options)
            self.record(in_flight.item, result)
            if self.options.fail_fast and is_failure(result):
                self.done = True

    def cancel(self) -> None:
        """Ask the loop to cancel the scenario in flight (it runs its cleanup, if its loop is not blocked)."""
        task = self._task
        if task is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # closed meanwhile: nothing left to cancel
                self._loop.call_soon_threadsafe(task.cancel)

    def abandon(self, in_flight: _InFlight | None = None) -> _InFlight | None:
        """Stop taking results from this lane; the scenario it had in flight (if it is `in_flight`, when given)."""
        with self.lock:
            current = self.in_flight
            if in_flight is not None and current is not in_flight:
                return None  # it finished meanwhile
            self.abandoned = True
            self.in_flight = None
        self.cancel()
        return current


def _watch(lane: _Lane, options: RunOptions, record: Record, until: Callable[[], bool] = lambda: False) -> bool:
    """Wait for `lane` to end (or `until()`, checked when `lane.changed`) or for its scenario's deadline; True when
    no new lane is needed."""
    try:
        while not lane.ended.is_set() and not until():
            lane.changed.clear()
            in_flight = lane.in_flight
            remaining = None
            if in_flight is not None and in_flight.deadline is not None:
                remaining = in_flight.deadline - time.perf_counter()
                if remaining <= 0:
                    _time_out(lane, in_flight, options, record)
                    return False
            with stop_signals.waiting():
                lane.changed.wait(remaining)
    except BaseException:  # Ctrl-C, SIGTERM, or what another signal handler raised here (pytest-timeout's failure)
        _wind_down(lane)
        raise
    if lane.escaped is not None:
        raise lane.escaped
    return lane.done


def _time_out(lane: _Lane, in_flight: _InFlight, options: RunOptions, record: Record) -> None:
    if lane.abandon(in_flight) is None:
        return
    budget = in_flight.deadline - in_flight.started if in_flight.deadline is not None else 0.0
    scenario = in_flight.item.scenario
    result = ScenarioResult(
        name=scenario.name,
        path=in_flight.item.path.as_posix(),
        tags=scenario.tags,
        status="failed",
        error=RunError(
            kind="timeout",
            message=f"the scenario did not finish within {budget:g}s (settings.timeout = {scenario.settings.timeout:g}s"
            " per turn, and as much again, at least 5s, for its agent and deps) and was abandoned: something in it"
            " blocks (a sync call in an async tool, a deps callable, an import)",
        ),
        duration_s=time.perf_counter() - in_flight.started,
    )
    record(in_flight.item, write_finished(Finished(result), options))


def _wind_down(lane: _Lane) -> None:
    """After Ctrl-C or SIGTERM: cancel the scenario in flight, wait for it a little, then leave it."""
    try:
        lane.cancel()
        with stop_signals.waiting():  # a second signal: stop waiting at once
            lane.ended.wait(WIND_DOWN_S)
    except KeyboardInterrupt:
        pass
    finally:
        lane.abandon()


class FedLane:
    """One lane kept across scenarios handed over one at a time (`run`), for a front end that schedules them itself
    (the pytest plugin's items, `single.ScenarioSession.run_watched`): each is watched as `run_sequentially` watches
    its own (deadline, Ctrl-C and SIGTERM, `os._exit`), without a thread and an event loop per scenario (a thread
    per scenario cost 0.6 ms, a tenth of a scripted scenario). A lane that had to be left is replaced by the next
    `run`; `close` ends the lane."""

    def __init__(self, options: RunOptions, *, model: Any, execute: ExecuteScenario | None) -> None:
        self.options = options
        self.model = model
        self.execute = execute
        self.queue: deque[LoadedScenario] = deque()
        self.closed = False
        self._lane: _Lane | None = None
        self._wake = _Wake(self)
        self._result: ScenarioResult | None = None

    def run(self, loaded: LoadedScenario) -> ScenarioResult:
        """Run `loaded` on the lane and return its result (a `timeout` failure when it had to be abandoned)."""
        lane = self._lane
        if lane is None or lane.abandoned or lane.ended.is_set():
            self._wake = _Wake(self)  # of the new lane's loop
            lane = self._lane = _Lane(
                _Feed(self.queue), self.options, model=self.model, execute=self.execute, record=self._record,
                ready=self._wake.wait,
            )  # fmt: skip
        self._result = None
        with intercepted_process_exit():  # before the lane can take the scenario
            self.queue.append(loaded)
            self._wake.poke(lane)
            _watch(lane, self.options, self._record, until=lambda: self._result is not None)
        if self._result is None:
            raise RuntimeError("the scenario lane ended without a result")  # cannot happen: every end records one
        return self._result

    def close(self) -> None:
        """End the lane (it takes no scenario after this)."""
        self.closed = True
        if self._lane is not None:
            self._wake.poke(self._lane)

    def _record(self, item: LoadedScenario, result: ScenarioResult) -> None:
        self._result = result
        if self._lane is not None:
            self._lane.changed.set()


class _Wake:
    """How a fed lane, waiting in its own loop for the next scenario, is woken from the calling thread."""

    def __init__(self, fed: FedLane) -> None:
        self.fed = fed
        self.event: asyncio.Event | None = None

    async def wait(self) -> None:
        while not self.fed.queue and not self.fed.closed:
            self.event = self.event or asyncio.Event()  # made in the lane's loop, its first time here
            self.event.clear()
            await self.event.wait()

    def poke(self, lane: _Lane) -> None:
        def wake() -> None:
            if self.event is not None:
                self.event.set()

        with contextlib.suppress(RuntimeError):  # its loop is closed: the lane ended, the next run makes another
            lane._loop.call_soon_threadsafe(wake)  # pyright: ignore[reportPrivateUsage]


class _Feed(Iterator[LoadedScenario]):
    """What a fed lane takes: the scenario handed over, or nothing (the lane ends)."""

    def __init__(self, queue: deque[LoadedScenario]) -> None:
        self.queue = queue

    def __next__(self) -> LoadedScenario:
        if not self.queue:
            raise StopIteration
        return self.queue.popleft()


def _quiet_about_agent_generators(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's report, except for an async generator that failed to close: the agent's run it belonged to
    failed already (a tool raised GeneratorExit, say), and its scenario's error says so; a traceback on stderr
    would only repeat it."""
    if context.get("asyncgen") is None:
        loop.default_exception_handler(context)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Close the lane's loop as `asyncio.run` would, but without waiting for its default executor's threads (a
    thread that never returns must not keep the run from ending)."""
    try:
        leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in leftovers:
            task.cancel()
        if leftovers:
            loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    except BaseException:
        pass
    finally:
        loop.close()
