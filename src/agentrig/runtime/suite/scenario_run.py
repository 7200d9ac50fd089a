"""One scenario: build its model (real, recorded or replayed), execute it through the engine in its own event
loop, check it against its expectations, and write its output files."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from agentrig.errors import AgentrigError, UsageError
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.run_records import RunError, ScenarioResult
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.suite import reports
from agentrig.runtime.suite.expectations import check_scenario
from agentrig.runtime.suite.options import ExecuteScenario, ExecutionLike, RunOptions
from agentrig.runtime.suite.outcome import scenario_status, unexpected_error
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["build_model", "run_one"]


def _default_execute() -> ExecuteScenario:
    from agentrig.runtime.engine.scenario_execution import execute_scenario

    return execute_scenario


def build_model(model: str | None, base_url: str | None) -> Any:
    """The real model for `--model`, through helper-built `agentrig.runtime.models.providers.build_model`."""
    if model is None:
        return None
    try:
        from agentrig.runtime.models.providers import build_model as build_provider_model
    except ImportError as error:
        raise UsageError(f"--model {model}: real providers are not available ({error})") from None
    return build_provider_model(model, base_url=base_url)


def _history_of(execution: ExecutionLike) -> tuple[Message, ...]:
    return tuple(execution.session.messages)


def _scenario_model(name: str, model: Any, options: RunOptions) -> Any:
    """The model for one scenario: the run's model, or a recording around it, or a replay of a recording."""
    if options.record_dir is None and options.replay_dir is None:
        return model
    from agentrig.runtime.models.record_replay import scenario_model

    return scenario_model(name, model, record_dir=options.record_dir, replay_dir=options.replay_dir)


async def _execute_and_close(execute: ExecuteScenario, loaded: LoadedScenario, model: Any) -> ExecutionLike:
    # A provider model's HTTP client belongs to this event loop (one `asyncio.run` per scenario): close its
    # connections in the same loop, or the next scenario's loop inherits dead ones.
    try:
        return await execute(loaded, model=model)
    finally:
        if model is not None:
            from agentrig.runtime.models.providers import close_model

            await close_model(model)


def run_one(
    loaded: LoadedScenario,
    *,
    options: RunOptions,
    model: Any = None,
    execute: ExecuteScenario | None = None,
) -> ScenarioResult:
    """Run, check and (with `options.out_dir`) write the outputs of one scenario. KeyboardInterrupt propagates.

    With `options.out_dir` the result comes back without its messages (the history, each turn's new messages):
    history.json holds them, and a run of thousands of scenarios must not keep every history in memory (nor send
    it from a worker to the parent).
    """
    execute = execute or _default_execute()
    started = time.perf_counter()
    scenario = loaded.scenario
    try:
        model = _scenario_model(scenario.name, model, options)
        execution: ExecutionLike = asyncio.run(_execute_and_close(execute, loaded, model))
    except Exception as error:  # the engine or the user's agent failed: this scenario's error, not the suite's
        message = error.message if isinstance(error, AgentrigError) else f"{type(error).__name__}: {error}"
        result = ScenarioResult(
            name=scenario.name,
            path=loaded.path.as_posix(),
            tags=scenario.tags,
            status="error",
            error=RunError(kind="agent_error", message=message.splitlines()[0] if message else type(error).__name__),
            duration_s=time.perf_counter() - started,
        )
        if options.out_dir is not None:
            reports.write_scenario_outputs(options.out_dir, result)
        return result
    history = _history_of(execution)
    turns = tuple(execution.turns)
    checks = check_scenario(
        loaded,
        turns,
        history,
        scripted=execution.scripted,
        registry=getattr(execution, "registry", None),
        update_golden=options.update_golden,
    )
    unexpected = unexpected_error(loaded, turns, scripted=execution.scripted)
    result = ScenarioResult(
        name=scenario.name,
        path=loaded.path.as_posix(),
        tags=scenario.tags,
        status=scenario_status(checks, unexpected),
        turns=turns,
        checks=tuple(checks),
        history=history,
        usage=Usage.total(turn.usage for turn in turns),
        error=unexpected,
        duration_s=time.perf_counter() - started,
    )
    if options.out_dir is not None:
        reports.write_scenario_outputs(options.out_dir, result, execution=execution)
        result = _written(result)
    return result


def _written(result: ScenarioResult) -> ScenarioResult:
    """What the run keeps of a scenario whose files are written: what report.json needs, not its messages."""
    turns = tuple(replace(turn, new_messages=()) for turn in result.turns)
    return replace(result, history=(), turns=turns)
