"""The suite runner: discover scenarios, filter (`-k`), shard (`--shard K/N`), run them in parallel
worker processes (`-j N`), stop early (`-x`), and collect results in a deterministic order.

    run_suite(RunOptions(paths=[Path("scenarios")], jobs=2)) -> SuiteResult

Workers are processes, not threads: a pydantic-ai run is CPU-bound Python and threads would
serialize on the GIL. Each worker loads its scenario file itself (a `LoadedScenario` holds YAML
nodes not worth pickling), runs it with `asyncio.run`, checks it, writes its output files and sends
back a `ScenarioResult`. Results are sorted by scenario id whatever order they finish in.

Exit code precedence (docs/exit-codes.md): 130 interrupted > 3 error > 1 failed > 0.
"""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentrig.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROVIDER,
    AgentrigError,
    InfrastructureError,
    UsageError,
)
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.run_records import (
    PROVIDER_ERROR_KINDS,
    Check,
    RunError,
    ScenarioResult,
    ScenarioStatus,
    TurnRecord,
)
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.suite.expectations import check_scenario
from agentrig.scenarios.loader import LoadedScenario

__all__ = [
    "ExecuteScenario",
    "RunOptions",
    "SuiteResult",
    "in_shard",
    "parse_shard",
    "run_one",
    "run_suite",
    "select_scenarios",
]

DEFAULT_OUT_DIR = Path("agentrig-out")
INTERRUPTED_REASON = "interrupted before it finished"
FAIL_FAST_REASON = "not run: stopped after the first failure (-x)"


class ExecutionLike(Protocol):
    """What the engine returns (`agentrig.runtime.engine.scenario_execution.ScenarioExecution`)."""

    @property
    def turns(self) -> Sequence[TurnRecord]: ...

    @property
    def session(self) -> Any: ...

    @property
    def pydantic_ai_dump(self) -> bytes: ...

    @property
    def scripted(self) -> bool: ...


ExecuteScenario = Callable[..., Any]
"""`async (loaded, *, model=None) -> ExecutionLike`; the default is
`agentrig.runtime.engine.scenario_execution.execute_scenario`.
Must be a module-level function when `jobs > 1` (it is sent to worker processes by reference)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """What `agentrig run` was asked to do."""

    paths: tuple[Path, ...] = (Path("scenarios"),)
    """Scenario files or directories (searched recursively)."""
    keyword: str | None = None
    """`-k` expression: words match a name substring or a tag; `not`, `and`, `or` and parentheses combine them."""
    jobs: int = 1
    """Worker processes; 1 runs in this process."""
    shard: tuple[int, int] | None = None
    """(K, N): run only shard K of N (1-based), chosen by a hash of the scenario id."""
    fail_fast: bool = False
    """Stop scheduling scenarios after the first failure or error."""
    out_dir: Path | None = DEFAULT_OUT_DIR
    """Where reports and per-scenario files go; None writes nothing."""
    update_golden: bool = False
    """Rewrite golden files with this run's histories (scripted runs only)."""
    model: str | None = None
    """`provider:name` of a real model; None runs the scripts."""
    base_url: str | None = None
    """Base URL for an OpenAI-compatible provider (passed to `providers.build_model`)."""
    record_dir: Path | None = None
    """Record each scenario's real model answers as a replayable script here (`--record`, needs `model`)."""
    replay_dir: Path | None = None
    """Answer each scenario offline from the recordings here (`--replay`); a changed request fails with a diff."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteResult:
    """The outcome of a suite run."""

    results: tuple[ScenarioResult, ...]
    """One result per selected scenario, sorted by scenario id."""
    duration_s: float
    """Wall time of the whole run."""
    interrupted: bool = False
    """Ctrl-C stopped the run; unfinished scenarios are `skipped`."""
    shard: tuple[int, int] | None = None
    model: str | None = None
    discovered: int = 0
    """Scenarios found before `-k` and `--shard` selected some."""
    counts: dict[str, int] = field(default_factory=dict[str, int])
    """passed / failed / error / skipped."""

    @property
    def exit_code(self) -> int:
        """130 interrupted > 3 provider/infrastructure error > 1 failed > 0 (docs/exit-codes.md)."""
        return exit_code_for(self.counts, interrupted=self.interrupted)


def exit_code_for(counts: dict[str, int], *, interrupted: bool) -> int:
    """The documented exit code for a summary."""
    if interrupted:
        return EXIT_INTERRUPTED
    if counts.get("error", 0):
        return EXIT_PROVIDER
    if counts.get("failed", 0):
        return EXIT_FAILED
    return EXIT_OK


def count_statuses(results: Iterable[ScenarioResult]) -> dict[str, int]:
    """How many results have each status (every status present, zero when absent)."""
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for result in results:
        counts[result.status] += 1
    return counts


# --------------------------------------------------------------------------------------------
# selection
# --------------------------------------------------------------------------------------------

_KEYWORD_TOKEN = re.compile(r"\(|\)|[^\s()]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class KeywordExpression:
    """A parsed `-k` expression, like pytest's: words joined by `and`, `or`, `not` and parentheses.

    A word matches a scenario when it is a case-insensitive substring of the name or equals one of its tags.
    """

    tokens: tuple[str, ...]
    """The expression, tokenized (validated by `parse`)."""

    @staticmethod
    def parse(text: str) -> KeywordExpression:
        """Tokenize and validate; a malformed expression raises `UsageError`."""
        expression = KeywordExpression(tokens=tuple(_KEYWORD_TOKEN.findall(text)))
        if not expression.tokens:
            raise UsageError("-k needs an expression, e.g. -k tools or -k 'retry and not slow'")
        expression.matches("", ())  # evaluating once finds every syntax error
        return expression

    def matches(self, name: str, tags: Sequence[str]) -> bool:
        """Evaluate the expression for one scenario."""
        position = 0
        tokens = self.tokens
        lowered_name = name.lower()

        def peek() -> str | None:
            return tokens[position] if position < len(tokens) else None

        def take() -> str:
            nonlocal position
            token = peek()
            if token is None:
                raise UsageError(f"-k {' '.join(tokens)!r}: the expression ends too early")
            position += 1
            return token

        def either() -> bool:
            value = both()
            while peek() == "or":
                take()
                value = both() or value
            return value

        def both() -> bool:
            value = negation()
            while peek() == "and":
                take()
                value = negation() and value
            return value

        def negation() -> bool:
            if peek() == "not":
                take()
                return not negation()
            return atom()

        def atom() -> bool:
            token = take()
            if token == "(":
                value = either()
                if take() != ")":
                    raise UsageError(f"-k {' '.join(tokens)!r}: missing ')'")
                return value
            if token in (")", "and", "or"):
                raise UsageError(f"-k {' '.join(tokens)!r}: unexpected {token!r}")
            return token.lower() in lowered_name or token in tags

        result = either()
        if position != len(tokens):
            raise UsageError(f"-k {' '.join(tokens)!r}: unexpected {tokens[position]!r}")
        return result


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` -> (K, N); 1 <= K <= N."""
    try:
        index_text, count_text = text.split("/")
        index, count = int(index_text), int(count_text)
    except ValueError:
        raise UsageError(f"--shard expects K/N such as 1/4, got {text!r}") from None
    if count < 1 or not 1 <= index <= count:
        raise UsageError(f"--shard {text}: K must be between 1 and N")
    return index, count


def in_shard(scenario_id: str, shard: tuple[int, int]) -> bool:
    """Stable shard membership: a hash of the id alone, so adding a scenario moves only that scenario."""
    index, count = shard
    digest = hashlib.sha256(scenario_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count == index - 1


def select_scenarios(
    loaded: Sequence[LoadedScenario], *, keyword: str | None, shard: tuple[int, int] | None
) -> list[LoadedScenario]:
    """The scenarios `-k` and `--shard` keep, sorted by id."""
    expression = KeywordExpression.parse(keyword) if keyword else None
    chosen = [
        item
        for item in loaded
        if (expression is None or expression.matches(item.scenario.name, item.scenario.tags))
        and (shard is None or in_shard(item.id, shard))
    ]
    return sorted(chosen, key=lambda item: item.id)


# --------------------------------------------------------------------------------------------
# one scenario
# --------------------------------------------------------------------------------------------


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


def _expected_error(loaded: LoadedScenario, turn: TurnRecord, *, is_last: bool) -> bool:
    scenario = loaded.scenario
    if turn.index < len(scenario.turns) and scenario.turns[turn.index].expect.error is not None:
        return True
    return is_last and scenario.expect.error is not None


def _unexpected_error(loaded: LoadedScenario, turns: Sequence[TurnRecord], *, scripted: bool) -> RunError | None:
    """The first turn error no expectation asked for (any error counts on a real model: scripted errors are skipped)."""
    for position, turn in enumerate(turns):
        if turn.error is None:
            continue
        if not scripted or not _expected_error(loaded, turn, is_last=position == len(turns) - 1):
            return turn.error
    return None


def _status(checks: Sequence[Check], unexpected: RunError | None) -> ScenarioStatus:
    if unexpected is not None and unexpected.kind in PROVIDER_ERROR_KINDS:
        return "error"
    return "passed" if all(check.passed for check in checks) else "failed"


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
    """Run, check and (with `options.out_dir`) write the outputs of one scenario. KeyboardInterrupt propagates."""
    from agentrig.runtime.suite import reports

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
    unexpected = _unexpected_error(loaded, turns, scripted=execution.scripted)
    result = ScenarioResult(
        name=scenario.name,
        path=loaded.path.as_posix(),
        tags=scenario.tags,
        status=_status(checks, unexpected),
        turns=turns,
        checks=tuple(checks),
        history=history,
        usage=Usage.total(turn.usage for turn in turns),
        error=unexpected,
        duration_s=time.perf_counter() - started,
    )
    if options.out_dir is not None:
        reports.write_scenario_outputs(options.out_dir, result, execution=execution)
    return result


# --------------------------------------------------------------------------------------------
# worker processes
# --------------------------------------------------------------------------------------------

_worker_model: dict[str, Any] = {}


def _worker_init(cwd: str) -> None:
    # The parent handles Ctrl-C (stops scheduling, writes partial reports); workers must not die mid-write.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    os.chdir(cwd)


def _run_in_worker(path: str, index: int, options: RunOptions, execute: ExecuteScenario | None) -> ScenarioResult:
    from agentrig.scenarios.loader import load_scenario_file

    loaded = next(item for item in load_scenario_file(Path(path)) if item.index == index)
    if options.model is not None and options.model not in _worker_model:
        _worker_model[options.model] = build_model(options.model, options.base_url)
    return run_one(loaded, options=options, model=_worker_model.get(options.model or ""), execute=execute)


# Imported once by the forkserver, so forked workers start warm: everything a scripted scenario touches
# (a module first imported inside a worker is imported again by every worker).
_WORKER_PRELOAD = [
    "agentrig.runtime.suite.runner",
    "agentrig.runtime.engine.scenario_execution",
    "agentrig.runtime.suite.reports",
    "agentrig.runtime.history.wire",
    "agentrig.runtime.history.sessions",
    "agentrig.scenarios.loader",
    "jsonschema",
]


def _started_pool(jobs: int) -> ProcessPoolExecutor:
    """A worker pool whose processes are already starting (the executor would start them on first use).

    Starting a worker blocks until the forkserver has imported its preload, so it happens on a thread: the
    caller goes on reading scenario files meanwhile, and its first `submit` waits for the thread's lock.
    """
    pool = _pool(jobs)
    threading.Thread(target=lambda: [pool.submit(os.getpid) for _ in range(jobs)], daemon=True).start()
    return pool


def _pool(jobs: int) -> ProcessPoolExecutor:
    # forkserver: workers fork from a clean server that has pydantic-ai imported once (no fork of a
    # parent with threads, no per-worker re-import). Windows and macOS default to spawn.
    if sys.platform.startswith("linux"):
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(_WORKER_PRELOAD)
    else:
        context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_worker_init, initargs=(os.getcwd(),))


# --------------------------------------------------------------------------------------------
# the suite
# --------------------------------------------------------------------------------------------

Progress = Callable[[int, int, ScenarioResult], None]
"""`progress(done, total, result)` after each scenario finishes."""


def _skipped(item: LoadedScenario, reason: str) -> ScenarioResult:
    return ScenarioResult(
        name=item.scenario.name,
        path=item.path.as_posix(),
        status="skipped",
        tags=item.scenario.tags,
        checks=(Check(name="scenario: run", passed=True, skipped_reason=reason),),
    )


def _is_failure(result: ScenarioResult) -> bool:
    return result.status in ("failed", "error")


def run_suite(
    options: RunOptions,
    *,
    progress: Progress | None = None,
    execute: ExecuteScenario | None = None,
    loaded: Sequence[LoadedScenario] | None = None,
) -> SuiteResult:
    """Run the selected scenarios and write reports to `options.out_dir` (also after Ctrl-C, then partial)."""
    started = time.perf_counter()
    if options.jobs < 1:
        raise UsageError(f"-j/--jobs must be at least 1, got {options.jobs}")
    if options.update_golden and (options.model is not None or options.replay_dir is not None):
        raise UsageError("--update-golden needs the scripted model: goldens are never written from a real model's run")
    if options.record_dir is not None and options.replay_dir is not None:
        raise UsageError("--record and --replay cannot be used together")
    if options.record_dir is not None and options.model is None:
        raise UsageError("--record needs --model: the real model whose answers are recorded")
    # Workers start first: the forkserver imports pydantic-ai (about a second) while this process reads the
    # scenario files, instead of after it.
    pool = _started_pool(options.jobs) if options.jobs > 1 else None
    try:
        return _run_suite(options, progress, execute, loaded, pool, started)
    finally:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _run_suite(
    options: RunOptions,
    progress: Progress | None,
    execute: ExecuteScenario | None,
    loaded: Sequence[LoadedScenario] | None,
    pool: ProcessPoolExecutor | None,
    started: float,
) -> SuiteResult:
    from agentrig.runtime.suite import reports
    from agentrig.scenarios.loader import load_paths

    all_loaded = list(loaded) if loaded is not None else load_paths(options.paths)
    selected = select_scenarios(all_loaded, keyword=options.keyword, shard=options.shard)
    if options.keyword and not selected and not options.shard:
        raise UsageError(f"-k {options.keyword!r} selects none of the {len(all_loaded)} scenarios")
    if options.out_dir is not None:
        reports.prepare_out_dir(options.out_dir)
    model = build_model(options.model, options.base_url) if options.jobs == 1 else None
    if options.model is not None and options.jobs > 1:
        build_model(options.model, options.base_url)  # fail fast here, not once per worker

    finished: dict[str, ScenarioResult] = {}
    interrupted = False

    def record(item: LoadedScenario, result: ScenarioResult) -> None:
        finished[item.id] = result
        if progress is not None:
            progress(len(finished), len(selected), result)

    try:
        if options.jobs == 1:
            for item in selected:
                record(item, run_one(item, options=options, model=model, execute=execute))
                if options.fail_fast and _is_failure(finished[item.id]):
                    break
        else:
            assert pool is not None  # created by run_suite whenever jobs > 1
            _run_parallel(pool, selected, options, execute, record)
    except KeyboardInterrupt:
        interrupted = True

    reason = INTERRUPTED_REASON if interrupted else FAIL_FAST_REASON
    results = [finished.get(item.id) or _skipped(item, reason) for item in selected]
    suite = SuiteResult(
        results=tuple(results),
        duration_s=time.perf_counter() - started,
        interrupted=interrupted,
        shard=options.shard,
        model=options.model,
        discovered=len(all_loaded),
        counts=count_statuses(results),
    )
    if options.out_dir is not None:
        reports.write_reports(options.out_dir, suite)
    return suite


def _run_parallel(
    pool: ProcessPoolExecutor,
    selected: Sequence[LoadedScenario],
    options: RunOptions,
    execute: ExecuteScenario | None,
    record: Callable[[LoadedScenario, ScenarioResult], None],
) -> None:
    pending = list(selected)
    running: dict[Future[ScenarioResult], LoadedScenario] = {}
    # A few scenarios queued per worker hide the round trip to the parent (a scripted scenario takes
    # ~15 ms, the hand-over a few); with -x only `jobs` are in flight, so it stops promptly.
    window = options.jobs if options.fail_fast else options.jobs * 4
    stop = False
    try:
        while pending or running:
            while pending and not stop and len(running) < window:
                item = pending.pop(0)
                future = pool.submit(_run_in_worker, str(item.path), item.index, options, execute)
                running[future] = item
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: running[f].id):
                item = running.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool as error:
                    raise InfrastructureError(f"a worker process died while running {item.id}: {error}") from None
                record(item, result)
                if options.fail_fast and _is_failure(result):
                    stop = True
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        _terminate_workers(pool)
        raise
    pool.shutdown(wait=True)


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    # concurrent.futures offers no public way to stop running workers; after Ctrl-C they must not
    # keep running (they ignore SIGINT), so end them. The mapping is private but stable since 3.8.
    processes: dict[int, Any] = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        if process.is_alive():
            process.terminate()
