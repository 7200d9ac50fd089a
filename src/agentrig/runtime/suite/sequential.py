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
  lane's loop itself: that scenario becomes an `error`, and the rest go on in a new lane. So does a
  KeyboardInterrupt: only the watcher (the main thread) receives signals, so one raised in the lane is the agent's
  own, never Ctrl-C.

Scenarios that talk to a real provider wait on the network, not the CPU: a lane runs `options.width` of them side by
side (`--max-concurrency`; the run-wide limiter bounds their requests), each in a task of its own with its deadline
kept in the loop. The watcher stays the backstop for a loop that is blocked: past a deadline and `BLOCKED_GRACE_S`,
the lane is left, the overdue scenario times out and the others in flight run again in a new lane (as a worker that
dies has its scenarios run again).

While scenarios run, `os._exit()` in this process is that scenario's error (`process_exit`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from agentrig.errors import OutputWriteError
from agentrig.runtime.checks.outcome import is_failure
from agentrig.runtime.engine.warning_capture import take_warnings
from agentrig.runtime.history.run_records import RunError, ScenarioResult
from agentrig.runtime.suite.options import ExecuteScenario, RunOptions
from agentrig.runtime.suite.processes import stop_signals
from agentrig.runtime.suite.processes.process_exit import intercepted_process_exit
from agentrig.runtime.suite.scenario_run import (
    Finished,
    failure,
    run_unwritten,
    scenario_task_factory,
    with_default_timeout,
    write_finished,
)
from agentrig.runtime.suite.timeouts import budget_of
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["BLOCKED_GRACE_S", "WIND_DOWN_S", "FedLane", "run_sequentially", "scenario_budget"]

BLOCKED_GRACE_S = 2.0
"""Side by side, a scenario's deadline is kept inside the loop; the watcher leaves the lane only this long after it,
when the loop has not kept it (something blocks the loop)."""

WIND_DOWN_S = 3.0
"""After Ctrl-C or SIGTERM, how long the scenario in flight gets to wind down before it is abandoned."""

Record = Callable[[LoadedScenario, ScenarioResult], None]
MayStart = Callable[[int], bool]
"""Given how many scenarios are running, whether another may start beside them (`budget.RunBudget.allows_start`)."""


def scenario_budget(loaded: LoadedScenario) -> float | None:
    """Seconds the whole scenario may take (`timeouts.budget_of`); None without a timeout. (`--timeout` is applied
    to the scenario first: `scenario_run.with_default_timeout`.)"""
    return budget_of(loaded.scenario.settings.timeout, loaded.scenario.most_turns)


def run_sequentially(
    scenarios: Iterable[LoadedScenario],
    options: RunOptions,
    *,
    model: Any,
    execute: ExecuteScenario | None,
    record: Record,
    may_start: MayStart | None = None,
) -> None:
    """Run `scenarios` in order, calling `record` as each finishes; stop after the first failure with `-x`.

    They are taken one at a time, so a lazy iterable (`ScenarioRef.load` for each) loads each right before it runs.
    Side by side, `may_start(running)` says whether another may start beside those running (`--max-cost`)."""
    pending = _Pending(iter(scenarios))
    with intercepted_process_exit():
        while True:  # a lane runs until every scenario ran (or -x stopped it), or until it had to be left
            lane = _Lane(pending, options, model=model, execute=execute, record=record, may_start=may_start)
            if _watch(lane, options, record):
                return


@dataclass(slots=True)
class _Pending:
    """The scenarios not started yet: those a left lane had in flight first, then the rest, one at a time."""

    rest: Iterator[LoadedScenario]
    again: deque[LoadedScenario] = field(default_factory=deque[LoadedScenario])

    def next(self) -> LoadedScenario | None:
        return self.again.popleft() if self.again else next(self.rest, None)


_keys = itertools.count()


@dataclass(frozen=True, slots=True)
class _InFlight:
    item: LoadedScenario
    started: float
    deadline: float | None
    key: int = field(default_factory=lambda: next(_keys))


class _Lane:
    """A daemon thread with an event loop of its own, running scenarios from `pending`: one after another, or
    `options.width` side by side."""

    def __init__(
        self,
        pending: _Pending,
        options: RunOptions,
        *,
        model: Any,
        execute: Any,
        record: Record,
        may_start: MayStart | None = None,
        ready: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.pending = pending
        self.ready = ready
        """Awaited in the lane's loop before it takes each scenario: a fed lane waits there for the next one."""
        self.options = options
        self.model = model
        self.execute = execute
        self.record = record
        self.may_start = may_start
        self.lock = threading.Lock()
        """Held while the lane takes a scenario or records one, and while the watcher abandons the lane."""
        self.abandoned = False
        self.in_flight: dict[int, _InFlight] = {}
        self.done = False
        """Every scenario ran, or -x stopped the run: no new lane is needed."""
        self.escaped: BaseException | None = None
        """An `OutputWriteError` writing a scenario's files (a full disk): the watcher raises it."""
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
        if self.options.width > 1:  # side by side: a scenario cancels only the tasks it started itself
            loop.set_task_factory(scenario_task_factory)  # pyright: ignore[reportArgumentType]
        try:
            # A fed lane (`FedLane`) is handed one scenario at a time by its front end: it runs them one after
            # another whatever the width (side by side, it would end the moment its feed was empty).
            one_at_a_time = self.options.width == 1 or self.ready is not None
            drive = self._drive() if one_at_a_time else self._drive_side_by_side()
            self._task = loop.create_task(drive)
            loop.run_until_complete(self._task)
        except asyncio.CancelledError:  # the watcher cancelled the lane (Ctrl-C, or it was abandoned)
            pass
        except OutputWriteError as error:  # agentrig could not write a scenario's files (a full disk): the run stops
            self.escaped = error
        # SystemExit or KeyboardInterrupt raised in a task of the scenario's own ends the loop, not the run (signals
        # reach the watcher, never this thread: a KeyboardInterrupt here is the agent's); so does what escapes
        # pydantic-ai's own generators (a GeneratorExit a tool raised, at pydantic-ai 2.38): the scenario's error.
        except BaseException as error:
            self._failed(error)
        finally:
            self.ended.set()
            self.changed.set()
            _close(loop)

    def _take(self) -> _InFlight | None:
        """Under the lock: the next scenario, now in flight (None: none left, or the lane was left)."""
        if self.abandoned:
            return None
        item = self.pending.next()
        if item is None:
            self.done = True
            return None
        budget = scenario_budget(with_default_timeout(item, self.options.timeout))
        now = time.perf_counter()
        flight = _InFlight(item, now, None if budget is None else now + budget)
        self.in_flight[flight.key] = flight
        return flight

    def _keep(self, flight: _InFlight, finished: Finished) -> ScenarioResult | None:
        """Write and record a finished scenario, unless the lane was left or the watcher recorded it meanwhile."""
        with self.lock:
            if self.abandoned or self.in_flight.pop(flight.key, None) is None:
                return None  # too late: the watcher recorded it as timed out, or the run was stopped
            result = write_finished(finished, self.options)
            self.record(flight.item, result)
            return result

    async def _drive(self) -> None:
        options = self.options
        while True:
            if self.ready is not None:
                await self.ready()
            with self.lock:
                flight = self._take()
            if flight is None:
                return
            if flight.deadline is not None:
                self.changed.set()
            finished = await run_unwritten(flight.item, options=options, model=self.model, execute=self.execute)
            result = self._keep(flight, finished)
            if result is None:
                return
            if options.fail_fast and is_failure(result):
                self.done = True
                return

    async def _drive_side_by_side(self) -> None:
        """Up to `options.width` scenarios at once, each in a task with its deadline kept in the loop; the model's
        connections, shared by them, are closed when the lane ends."""
        options = self.options
        running: dict[asyncio.Task[Finished], _InFlight] = {}
        taking = True
        try:
            while True:
                while (
                    taking and len(running) < options.width and (self.may_start is None or self.may_start(len(running)))
                ):
                    with self.lock:
                        flight = self._take()
                    if flight is None:
                        taking = False
                        break
                    running[asyncio.create_task(self._run_bounded(flight))] = flight
                    if flight.deadline is not None:
                        self.changed.set()
                if not running:
                    self.done = not self.abandoned
                    return
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in sorted(done, key=lambda task: running[task].key):
                    flight = running.pop(task)
                    result = self._keep(flight, task.result())  # an interruption propagates from here
                    if result is None and self.abandoned:
                        return
                    if result is not None and options.fail_fast and is_failure(result):
                        taking = False  # -x: the ones in flight finish, no new one starts
                        self.done = True
        finally:
            for task in running:
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)
            if self.model is not None:
                from agentrig.runtime.models.providers import close_model  # a real model: pydantic-ai is loaded

                await close_model(self.model)

    async def _run_bounded(self, flight: _InFlight) -> Finished:
        """Run one scenario, cancelled at its deadline (then a `timeout` result, as the watcher would give)."""
        work = run_unwritten(flight.item, options=self.options, model=self.model, execute=self.execute, shared=True)
        if flight.deadline is None:
            return await work
        try:
            async with asyncio.timeout(flight.deadline - flight.started):
                return await work
        except TimeoutError:
            return Finished(_timed_out(flight, self.options, blocked=False))

    def _failed(self, error: BaseException) -> None:
        with self.lock:
            flights = list(self.in_flight.values())
            self.in_flight.clear()
            if self.abandoned:
                return
            for flight in flights:  # side by side, nothing says which of them raised it: each is told
                result = write_finished(Finished(failure(flight.item, error, started=flight.started)), self.options)
                self.record(flight.item, result)
                if self.options.fail_fast and is_failure(result):
                    self.done = True

    def cancel(self) -> None:
        """Ask the loop to cancel the scenarios in flight (they run their cleanup, if the loop is not blocked)."""
        task = self._task
        if task is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # closed meanwhile: nothing left to cancel
                self._loop.call_soon_threadsafe(task.cancel)

    def abandon(self, overdue: _InFlight | None = None) -> list[_InFlight] | None:
        """Stop taking results from this lane; the scenarios it had in flight (None when `overdue`, if given, has
        finished meanwhile)."""
        with self.lock:
            if overdue is not None and overdue.key not in self.in_flight:
                return None
            self.abandoned = True
            flights = list(self.in_flight.values())
            self.in_flight.clear()
        self.cancel()
        return flights


def _watch(lane: _Lane, options: RunOptions, record: Record, until: Callable[[], bool] = lambda: False) -> bool:
    """Wait for `lane` to end (or `until()`, checked when `lane.changed`) or for its scenario's deadline; True when
    no new lane is needed."""
    grace = 0.0 if options.width == 1 else BLOCKED_GRACE_S
    try:
        while True:
            lane.changed.clear()  # before looking: a change from now on ends the wait below at once
            if lane.ended.is_set() or until():
                break
            with lane.lock:
                deadlines = [flight for flight in lane.in_flight.values() if flight.deadline is not None]
            overdue = min(deadlines, key=lambda flight: flight.deadline or 0.0, default=None)
            remaining = None
            if overdue is not None and overdue.deadline is not None:
                remaining = overdue.deadline + grace - time.perf_counter()
                if remaining <= 0:
                    _time_out(lane, overdue, options, record)
                    return False
            with stop_signals.waiting():
                lane.changed.wait(stop_signals.wait_slice(remaining))
    except BaseException:  # Ctrl-C, SIGTERM, or what another signal handler raised here (pytest-timeout's failure)
        _wind_down(lane)
        raise
    if lane.escaped is not None:
        raise lane.escaped
    return lane.done


def _time_out(lane: _Lane, overdue: _InFlight, options: RunOptions, record: Record) -> None:
    flights = lane.abandon(overdue)
    if flights is None:
        return
    record(overdue.item, write_finished(Finished(_timed_out(overdue, options, blocked=True)), options))
    # The others shared the blocked loop: they run again in the next lane (against a real model, a re-run repeats
    # their requests, as when a worker dies).
    lane.pending.again.extend(flight.item for flight in flights if flight is not overdue)


def _timed_out(flight: _InFlight, options: RunOptions, *, blocked: bool) -> ScenarioResult:
    """The `timeout` result of a scenario past its whole budget: abandoned with its lane (`blocked`), or cancelled."""
    budget = flight.deadline - flight.started if flight.deadline is not None else 0.0
    scenario = flight.item.scenario
    own = scenario.settings.timeout
    flag = f"{options.provider.flag_prefix}timeout {options.timeout or 0.0:g}s"
    said = f"settings.timeout = {own:g}s" if own is not None else flag
    how = (
        "was abandoned: something in it blocks (a sync call in an async tool, a deps callable, an import)"
        if blocked
        else "was cancelled"
    )
    return ScenarioResult(
        name=scenario.name,
        path=flight.item.path.as_posix(),
        tags=scenario.tags,
        status="failed",
        error=RunError(
            kind="timeout",
            message=f"the scenario did not finish within {budget:g}s ({said} per turn, and as much again, at least 5s,"
            f" for its agent and deps) and {how}",
        ),
        duration_s=time.perf_counter() - flight.started,
        warnings=take_warnings(flight.item),  # what it showed before it was given up on
    )


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
                _Pending(_Feed(self.queue)), self.options, model=self.model, execute=self.execute,
                record=self._record, ready=self._wake.wait,
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
