"""One scenario: build its model (real, recorded or replayed), execute it through the engine (in an event loop
of its own, or in the sequential run's one loop), check it against its expectations, and write its files."""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Coroutine
from contextvars import Context, ContextVar
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from agentrig.errors import AgentrigError, MissingExtraError, Unsupported
from agentrig.runtime.checks.event_checks import check_events
from agentrig.runtime.checks.expectations import check_scenario
from agentrig.runtime.checks.judge_checks import has_judges, judge_check, scenario_score, score_check
from agentrig.runtime.checks.limit_checks import limit_checks
from agentrig.runtime.checks.outcome import scenario_status, unexpected_error
from agentrig.runtime.engine.warning_capture import capturing, take_warnings
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.run_records import (
    PROVIDER_ERROR_KINDS,
    Check,
    RunError,
    RunErrorKind,
    ScenarioResult,
)
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models import chain
from agentrig.runtime.models.attempt_log import AttemptLog, recording_attempts
from agentrig.runtime.models.pricing import SCRIPTED_COST
from agentrig.runtime.models.record_modes import record_setup
from agentrig.runtime.models.request_policy import using_scenario_settings
from agentrig.runtime.models.stops import RunStopped
from agentrig.runtime.models.timeouts import timeout_flag
from agentrig.runtime.suite.budget import BUDGET_CHECK
from agentrig.runtime.suite.options import ExecuteScenario, ExecutionLike, RunOptions
from agentrig.runtime.suite.outputs.scenario_files import write_scenario_outputs
from agentrig.runtime.suite.processes.process_exit import ProcessExitCalled
from agentrig.runtime.suite.processes.stop_signals import RunInterrupted
from agentrig.runtime.suite.repeats import recording_name
from agentrig.runtime.suite.simulation import as_run, simulating, with_users_spend
from agentrig.scenarios.loader import LoadedScenario

__all__ = [
    "REQUIRES_CHECK",
    "Finished",
    "engine_for",
    "failed_result",
    "failure",
    "run_one",
    "run_one_in_loop",
    "run_unwritten",
    "scenario_task_factory",
    "unmet_requirements",
    "with_default_timeout",
    "write_finished",
]

_T = TypeVar("_T")


def engine_for(execute: ExecuteScenario | None) -> ExecuteScenario:
    """`execute`, or the default engine (pydantic-ai's), imported now."""
    return execute or _default_execute()


def _default_execute() -> ExecuteScenario:
    from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import execute_scenario

    return execute_scenario


def _history_of(execution: ExecutionLike) -> tuple[Message, ...]:
    return tuple(execution.session.messages)


def _scenario_model(name: str, model: Any, options: RunOptions, meter: Any) -> Any:
    """The model for one scenario: the run's model, or a recording around it, or a replay of a recording (a
    repeat's own, `repeats.recording_name`)."""
    setup = record_setup(
        mode=options.record_mode, record_dir=options.record_dir, replay_dir=options.replay_dir, model=options.model
    )
    return chain.for_scenario(recording_name(name, setup), model, setup=setup, model_name=options.model, meter=meter)


def _scenario_meter(options: RunOptions, model: Any) -> Any:
    """What counts and prices one scenario's requests; None for a scripted run (nothing to price). Under
    `--max-cost` it admits each live request through the run's limiter, the one the run's model waits on."""
    if options.model is None and options.replay_dir is None:
        return None
    budget = getattr(model, "limiter", None) if options.max_cost is not None else None
    return chain.scenario_meter(options.model, prices=options.prices, budget=budget)


def stopped_by_budget(result: ScenarioResult, reason: str) -> ScenarioResult:
    """A scenario a request of which the budget refused: `skipped`, with what it did and spent until then."""
    return replace(
        result, status="skipped", error=None, checks=(Check(name=BUDGET_CHECK, passed=True, skipped_reason=reason),)
    )


def _with_cost(result: ScenarioResult, meter: Any) -> ScenarioResult:
    return replace(result, cost=meter.cost() if meter is not None else SCRIPTED_COST)


async def _execute_and_close(
    execute: ExecuteScenario, loaded: LoadedScenario, model: Any, *, shared: bool = False
) -> ExecutionLike:
    # A provider model's HTTP client belongs to the loop it ran in, and `run_one` starts a loop per scenario:
    # close its connections in the same loop, or the next scenario's loop inherits dead ones. Scenarios running side
    # by side (`shared`) use the connections together: the lane closes them when it ends.
    try:
        return await execute(loaded, model=model)
    finally:
        if model is not None and not shared:
            from agentrig.runtime.models.providers import close_model

            await close_model(model)


def _describe(error: BaseException) -> str:
    if isinstance(error, SystemExit):
        return f"the agent called sys.exit({error.code!r})"
    if isinstance(error, ProcessExitCalled):
        return f"the agent called os._exit({error.code!r})"
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _is_interruption(error: BaseException) -> bool:
    """Ctrl-C or SIGTERM (or a cancellation the run asked for): the run stops, not only this scenario."""
    if isinstance(error, KeyboardInterrupt):
        # Python runs signal handlers in the main thread only: a KeyboardInterrupt raised anywhere else (the lane
        # `sequential` runs scenarios on, a sync tool's thread) is the agent's own, so this scenario's error.
        return isinstance(error, RunInterrupted) or threading.current_thread() is threading.main_thread()
    if isinstance(error, asyncio.CancelledError):
        task = asyncio.current_task()
        return task is None or task.cancelling() > 0  # else the agent raised it: nothing cancelled the scenario
    if isinstance(error, BaseExceptionGroup):
        return any(_is_interruption(inner) for inner in error.exceptions)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType, reportUnknownMemberType]
    return False


def with_default_timeout(loaded: LoadedScenario, timeout: float | None) -> LoadedScenario:
    """The scenario with `--timeout` as its `settings.timeout` when it sets none of its own."""
    settings = loaded.scenario.settings
    if timeout is None or settings.timeout is not None:
        return loaded
    scenario = loaded.scenario.model_copy(update={"settings": settings.model_copy(update={"timeout": timeout})})
    return replace(loaded, scenario=scenario)


def with_default_deps(loaded: LoadedScenario, deps: str | None) -> LoadedScenario:
    """The scenario with `--deps` as its `deps` when it names a user's agent and no deps of its own."""
    scenario = loaded.scenario
    if deps is None or scenario.agent is None or scenario.deps is not None:
        return loaded
    return replace(loaded, scenario=scenario.model_copy(update={"deps": deps}))


def run_one(
    loaded: LoadedScenario,
    *,
    options: RunOptions,
    model: Any = None,
    execute: ExecuteScenario | None = None,
) -> ScenarioResult:
    """Run, check and (with `options.out_dir`) write the outputs of one scenario in an event loop of its own (for
    a caller outside any loop; the runner uses `run_one_in_loop`). KeyboardInterrupt propagates; any other
    failure, SystemExit included, becomes the scenario's `error`.

    With `options.out_dir` the result comes back without its messages (the history, each turn's new messages):
    history.json holds them, and a run of thousands of scenarios must not keep every history in memory (nor send
    it from a worker to the parent).
    """
    started = time.perf_counter()
    try:
        return asyncio.run(run_one_in_loop(loaded, options=options, model=model, execute=execute))
    except SystemExit as error:  # raised in a task of the agent's own, it ended the loop (see run_one_in_loop)
        return failed_result(loaded, error, started=started, options=options)


async def run_one_in_loop(
    loaded: LoadedScenario,
    *,
    options: RunOptions,
    model: Any = None,
    execute: ExecuteScenario | None = None,
) -> ScenarioResult:
    """`run_one` inside the caller's running event loop: `suite.sequential` drives many scenarios from one loop,
    which saves entering a loop per scenario (0.7-1 ms, a sixth of a scripted scenario's own run)."""
    return write_finished(await run_unwritten(loaded, options=options, model=model, execute=execute), options)


@dataclass(frozen=True, slots=True)
class Finished:
    """A scenario that ran (or failed to), its folder not written yet: `write_finished` writes it."""

    result: ScenarioResult
    execution: ExecutionLike | None = None
    events: tuple[Any, ...] = ()


async def run_unwritten(
    loaded: LoadedScenario,
    *,
    options: RunOptions,
    model: Any = None,
    execute: ExecuteScenario | None = None,
    shared: bool = False,
) -> Finished:
    """Run and check one scenario in the running loop, writing nothing: `suite.sequential` writes its folder only
    if the scenario was not abandoned meanwhile (a scenario that outlived its time must not write late).

    What the scenario leaves running is cancelled when it ends, as `asyncio.run` would. A SystemExit raised in
    a task of its own ends the loop instead of reaching this coroutine: `suite.sequential` handles that.
    Ctrl-C, SIGTERM and a cancellation of this task propagate; everything else is this scenario's error, a
    KeyboardInterrupt the agent raised itself included (`_is_interruption`).
    `shared`: the model's connections serve scenarios running beside this one and stay open.

    The provider layer counts the scenario's requests in an `AttemptLog` of its own (the result's `attempts`),
    follows its `settings.provider`, and a turn's timeout that came from `--timeout` is said so. The warnings shown
    meanwhile are its `warnings` (`engine/warning_capture`: from its tasks, its tools' threads, its modules' import),
    also when it fails, and when the run gives up on it (`take_warnings(loaded)`, the object given here)."""
    started = time.perf_counter()
    given = options.timeout is not None and loaded.scenario.settings.timeout is None
    flag = f"{options.provider.flag_prefix}timeout" if given else None
    scenario, loaded = loaded, _as_run(loaded, options)
    meter = _scenario_meter(options, model)
    log = AttemptLog()
    with capturing(owner=scenario, show=options.show_warnings):
        try:
            with (
                recording_attempts(log),
                using_scenario_settings(loaded.scenario.settings.provider),
                timeout_flag(flag),
            ):
                with simulating(loaded, options, model) as users:
                    work = _execute(loaded, model, options, execute, meter, shared=shared)
                    execution = await _isolated(work, shared=shared)
                loaded = as_run(loaded, execution.turns)  # the checks read the turns a simulated turn ran
                ran_s = time.perf_counter() - started  # the limits measure the agent's run, not its judges'
                judged = with_users_spend(await _judged(loaded, execution, options, model), users)
        # The engine or the user's agent failed: this scenario's error, not the suite's. Whatever it raised: a
        # sys.exit() or os._exit() in a tool, a CancelledError or GeneratorExit nothing asked for, a BaseException
        # of its own must not end the whole run with no report (and, at -j 1, exit code 0).
        except BaseException as error:
            if _is_interruption(error):
                raise
            if isinstance(error, MissingExtraError) and not options.require_extras:
                return Finished(unmet_requirements(scenario, error, started=started))
            # what it spent still counts
            failed = _with_cost(failure(scenario, error, started=started), meter)
            return Finished(_budget_checked(replace(failed, attempts=log.snapshot()), meter))
        finished = _checked(
            loaded, execution, started=started, ran_s=ran_s, options=options, meter=meter, judged=judged
        )
    result = replace(finished.result, attempts=log.snapshot(), warnings=take_warnings(scenario))
    return replace(finished, result=_budget_checked(result, meter))


def _budget_checked(result: ScenarioResult, meter: Any) -> ScenarioResult:
    refused = meter.refused if meter is not None else None
    return stopped_by_budget(result, refused) if refused is not None else result


def write_finished(finished: Finished, options: RunOptions) -> ScenarioResult:
    """Write the scenario's folder (with `options.out_dir`) and return what the run keeps of its result."""
    result = finished.result
    if options.out_dir is None:
        return result
    result = write_scenario_outputs(options.out_dir, result, execution=finished.execution, events=finished.events)
    return _written(result) if finished.execution is not None else result


def _as_run(loaded: LoadedScenario, options: RunOptions) -> LoadedScenario:
    loaded = with_default_timeout(with_default_deps(loaded, options.default_deps), options.timeout)
    if options.stream and not loaded.scenario.stream:
        loaded = replace(loaded, scenario=loaded.scenario.model_copy(update={"stream": True}))
    return loaded


async def _execute(
    loaded: LoadedScenario,
    model: Any,
    options: RunOptions,
    execute: ExecuteScenario | None,
    meter: Any = None,
    *,
    shared: bool,
) -> ExecutionLike:
    model = _scenario_model(loaded.scenario.name, model, options, meter)
    return await _execute_and_close(engine_for(execute), loaded, model, shared=shared)


async def _isolated(work: Coroutine[Any, Any, _T], *, shared: bool = False) -> _T:
    """Await `work`, then cancel the tasks it started and left running (nothing of one scenario outlives it).

    `shared`: scenarios run side by side in this loop, and the tasks started meanwhile are not all this one's: only
    those its own context started (`scenario_task_factory` tags each with the scenario that made it) are cancelled."""
    before = asyncio.all_tasks()
    owner = object()
    token = _task_owner.set(owner) if shared else None
    try:
        return await work
    finally:
        if token is not None:
            _task_owner.reset(token)
        leftovers = asyncio.all_tasks() - before
        if shared:
            leftovers = {task for task in leftovers if _owners.get(task) is owner}
        for task in leftovers:
            task.cancel()
        if leftovers:
            await asyncio.gather(*leftovers, return_exceptions=True)


_task_owner: ContextVar[object | None] = ContextVar("agentrig_task_owner", default=None)
_owners: weakref.WeakKeyDictionary[asyncio.Task[Any], object] = weakref.WeakKeyDictionary()


def scenario_task_factory(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], *, context: Context | None = None
) -> asyncio.Task[Any]:
    """The task factory of a loop running scenarios side by side: each task remembers the scenario whose code started
    it (a task copies its creator's context, so the scenario's tasks' own tasks are its too)."""
    task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, context=context)
    owner = _task_owner.get()
    if owner is not None:
        _owners[task] = owner
    return task


def failed_result(
    loaded: LoadedScenario, error: BaseException, *, started: float, options: RunOptions
) -> ScenarioResult:
    """The `error` result of a scenario whose run raised `error`, its files written (the run left no events)."""
    return write_finished(Finished(failure(loaded, error, started=started)), options)


PYTEST_TIMEOUT_MESSAGE = "from pytest-timeout"
"""In the failure pytest-timeout's `signal` method raises into a test that outlived its timeout (2.x)."""


def _failure_kind(error: BaseException) -> RunErrorKind:
    """What a scenario whose run raised `error` failed of: a stop agentrig made (a missing recording is a
    `replay_mismatch`), pytest-timeout ending the test it runs in (`timeout`), a scenario this environment cannot
    run (`unsupported`), else the agent's own error."""
    if isinstance(error, RunStopped):
        return error.kind
    if type(error).__name__ == "Failed" and PYTEST_TIMEOUT_MESSAGE in str(error):
        return "timeout"
    if isinstance(error, Unsupported):  # the engine or a missing extra: nothing of the user's raised
        return "unsupported"
    return "agent_error"


def failure(loaded: LoadedScenario, error: BaseException, *, started: float) -> ScenarioResult:
    """The result of a scenario whose run raised `error`: `error` status for the agent's own error or a scenario
    this environment cannot run (it could not run), `failed` for a stop with a kind of its own (as a turn ending in
    it would be). With the warnings it showed until then (`loaded`: the object its run was given)."""
    message = error.message if isinstance(error, AgentrigError | RunStopped) else _describe(error)
    scenario = loaded.scenario
    kind = _failure_kind(error)
    return ScenarioResult(
        name=scenario.name,
        path=loaded.path.as_posix(),
        tags=scenario.tags,
        # A provider's error outside a turn (a simulated user's model) is an `error`, as one inside a turn is.
        status="error" if kind in ("agent_error", "unsupported") or kind in PROVIDER_ERROR_KINDS else "failed",
        error=RunError(kind=kind, message=message.splitlines()[0] if message else type(error).__name__),
        duration_s=time.perf_counter() - started,
        warnings=take_warnings(loaded),
    )


REQUIRES_CHECK = "scenario: requires"
"""The check a scenario skipped for an extra that is not installed carries the reason on (`skipped_reason`)."""


def unmet_requirements(loaded: LoadedScenario, error: MissingExtraError, *, started: float) -> ScenarioResult:
    """The `skipped` result of a scenario that needs extras this environment lacks: the reason names each one and its
    install command (`requires ag-ui: pip install 'pydantic-ai-slim[ag-ui]'`). Nothing of it ran: the engine checks
    `requires` before it imports the agent."""
    scenario = loaded.scenario
    return ScenarioResult(
        name=scenario.name,
        path=loaded.path.as_posix(),
        tags=scenario.tags,
        status="skipped",
        checks=(Check(name=REQUIRES_CHECK, passed=True, skipped_reason="; ".join(error.requirements)),),
        duration_s=time.perf_counter() - started,
        warnings=take_warnings(loaded),
    )


async def _judged(loaded: LoadedScenario, execution: ExecutionLike, options: RunOptions, model: Any) -> Any:
    """The verdicts of the scenario's judged checks (`models.judging`), its judges behind the run's limiter; None
    when it has none (pydantic-ai is then not imported: the tinyagent engine runs without it)."""
    if not has_judges(loaded.scenario):
        return None
    from agentrig.runtime.suite.judging import judge_run

    history, turns = _history_of(execution), tuple(execution.turns)
    setup = record_setup(
        mode=options.record_mode, record_dir=options.record_dir, replay_dir=options.replay_dir, model=options.model
    )
    return await judge_run(
        loaded.scenario,
        turns,
        history,
        prices=options.prices,
        options=options.provider,
        limiter=getattr(model, "limiter", None),
        setup=setup,
        recording=recording_name(loaded.scenario.name, setup),  # the judges follow the agent's recording
    )


def _checked(
    loaded: LoadedScenario,
    execution: ExecutionLike,
    *,
    started: float,
    ran_s: float,
    options: RunOptions,
    meter: Any,
    judged: Any = None,
) -> Finished:
    # The limits are measured on the agent's run (`ran_s`: its wall time, its checks and judges not counted), what
    # its requests cost and how many it made; the judges' requests are added to the scenario's usage and cost after.
    scenario = loaded.scenario
    history = _history_of(execution)
    turns = tuple(execution.turns)
    usage = Usage.total(turn.usage for turn in turns)
    cost = meter.cost() if meter is not None else SCRIPTED_COST
    checks = check_scenario(
        loaded,
        turns,
        history,
        scripted=execution.scripted,
        registry=getattr(execution, "registry", None),
        update_golden=options.update_golden,
        subagent_runs=tuple(getattr(execution, "subagent_runs", ())),
    )
    events = tuple(getattr(execution, "events", ()))
    checks = [*checks, *check_events(events, scenario.expect.events)]
    limits = limit_checks(scenario.expect, duration_s=ran_s, usage=usage, cost=cost, scripted=execution.scripted)
    checks.extend(limits)
    if judged is not None:
        from agentrig.runtime.models.judging import with_judges_cost

        checks.extend(judge_check(record) for record in judged.records)
        usage, cost = usage + judged.usage, with_judges_cost(cost, judged.costs)
    score = scenario_score(judged.records if judged is not None else (), scenario.expect.min_score)
    scored = score_check(score, scenario.expect.min_score)
    if scored is not None:
        checks.append(scored)
    unexpected = unexpected_error(loaded, turns, scripted=execution.scripted)
    result = ScenarioResult(
        name=scenario.name,
        path=loaded.path.as_posix(),
        tags=scenario.tags,
        status=scenario_status(checks, unexpected),
        turns=turns,
        checks=tuple(checks),
        history=history,
        usage=usage,
        error=unexpected,
        duration_s=time.perf_counter() - started,
        cost=cost,
        score=score,
    )
    return Finished(result, execution, events)


def _written(result: ScenarioResult) -> ScenarioResult:
    """What the run keeps of a scenario whose files are written: what report.json needs, not its messages."""
    turns = tuple(replace(turn, new_messages=()) for turn in result.turns)
    return replace(result, history=(), turns=turns)
