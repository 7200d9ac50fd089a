"""The suite runner: discover scenarios, filter (`-k`), shard (`--shard K/N`), run them in parallel
worker processes (`-j N`), stop early (`-x`), and collect results in a deterministic order.

    run_suite(RunOptions(paths=[Path("scenarios")], jobs=2)) -> SuiteResult

Results are sorted by scenario id whatever order they finish in. The parts: `selection` (-k, --shard),
`scenario_run` (one scenario), `workers` (-j), `outcome` (statuses and the exit code), `reports` (files).
"""

from __future__ import annotations

import gc
import signal
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

from agentrig.errors import UsageError
from agentrig.runtime.checks.outcome import SuiteResult, count_statuses, exit_code_for
from agentrig.runtime.history.redaction import refresh_secrets
from agentrig.runtime.history.run_records import Check, ScenarioResult
from agentrig.runtime.models.chain import real_model
from agentrig.runtime.reports.report_files import HtmlOptions
from agentrig.runtime.suite import reports
from agentrig.runtime.suite.options import DEFAULT_OUT_DIR, ExecuteScenario, ExecutionLike, RunOptions, max_jobs
from agentrig.runtime.suite.pool import send_worker_imports, started_pool
from agentrig.runtime.suite.scenario_files import remove_scenario_folders, write_scenario_outputs
from agentrig.runtime.suite.scenario_run import engine_for, run_one
from agentrig.runtime.suite.scenario_store import ScenarioIdentity, ScenarioRef, store_scenarios
from agentrig.runtime.suite.selection import (
    KeywordExpression,
    parse_shard,
    select_scenarios,
    shard_durations,
    shard_members,
)
from agentrig.runtime.suite.sequential import run_sequentially
from agentrig.runtime.suite.shard_plan import COUNT_PLAN, read_durations
from agentrig.runtime.suite.spool import Spool, SpoolView
from agentrig.runtime.suite.stop_signals import StopSignals
from agentrig.runtime.suite.workers import run_parallel
from agentrig.scenarios.loader import LoadedScenario, iter_scenarios

__all__ = [
    "DEFAULT_OUT_DIR",
    "ExecuteScenario",
    "ExecutionLike",
    "KeywordExpression",
    "RunOptions",
    "SuiteResult",
    "check_recording_dirs",
    "checked_options",
    "exit_code_for",
    "parse_shard",
    "run_one",
    "run_suite",
    "select_scenarios",
    "shard_members",
]

INTERRUPTED_REASON = "interrupted before it finished"
FAIL_FAST_REASON = "not run: stopped after the first failure (-x)"

Progress = Callable[[int, int, ScenarioResult], None]
"""`progress(done, total, result)` after each scenario finishes."""

Note = Callable[[str], None]
"""`note(text)`: one line the user should see before the run (e.g. a durations file that cannot be used)."""


def _skipped(item: ScenarioRef, reason: str) -> ScenarioResult:
    return ScenarioResult(
        name=item.name,
        path=item.path.as_posix(),
        status="skipped",
        tags=item.tags,
        checks=(Check(name="scenario: run", passed=True, skipped_reason=reason),),
    )


def check_recording_dirs(options: RunOptions) -> None:
    """A `UsageError` for a `--replay` directory that does not exist or a `--record` path that is a file."""
    if options.replay_dir is not None and not options.replay_dir.is_dir():
        raise UsageError(f"--replay {options.replay_dir}: no such directory")
    if options.record_dir is not None and options.record_dir.exists() and not options.record_dir.is_dir():
        raise UsageError(f"--record {options.record_dir}: exists and is not a directory")


def run_suite(
    options: RunOptions,
    *,
    progress: Progress | None = None,
    execute: ExecuteScenario | None = None,
    loaded: Sequence[LoadedScenario] | None = None,
    pool: ProcessPoolExecutor | None = None,
    note: Note | None = None,
) -> SuiteResult:
    """Run the selected scenarios and write reports to `options.out_dir` (also after Ctrl-C or SIGTERM, then
    partial: `stop_signals`).

    With `-j N`, `pool` is a `pool.started_pool(N)` the caller started early (the run shuts it down), else the run
    starts one. `note` is told what the user should know before the run starts."""
    started = time.perf_counter()
    refresh_secrets()  # the environment's key values, read once for this run's redaction
    try:
        options = checked_options(options)
        # Workers start first: the forkserver imports pydantic-ai (about a second) while this process reads the
        # scenario files, instead of after it.
        if pool is None and options.jobs > 1:
            pool = started_pool(options.jobs, user_modules_later=True)
        with StopSignals() as signals:
            return _run_suite(options, progress, execute, loaded, pool, started, signals, note)
    finally:
        send_worker_imports([])  # a run that stopped early: the forkserver waits for nothing more
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _user_modules(selected: Sequence[ScenarioRef], options: RunOptions) -> list[tuple[str, list[str], bool]]:
    """What the `-j N` workers' forkserver imports before it forks them: each module the selected scenarios'
    `agent:` and `deps:` (and `--deps`) name, once, from where its first scenario would import it."""
    cwd = str(Path.cwd())
    offline = options.model is None  # a scripted run imports agents with placeholder provider keys
    modules: dict[str, tuple[str, list[str], bool]] = {}
    for ref in selected:
        names = ref.user_modules
        if options.default_deps:
            names = (*names, options.default_deps.partition(":")[0])
        for name in names:
            if name not in modules:
                directories = [str(ref.base_dir.resolve())] if ref.base_dir is not None else []
                modules[name] = (name, [*directories, cwd], offline)
    return list(modules.values())


def checked_options(options: RunOptions) -> RunOptions:
    """The options, `-j` capped per CPU; a `UsageError` for a combination that cannot run."""
    if options.jobs < 1:
        raise UsageError(f"-j/--jobs must be at least 1, got {options.jobs}")
    if options.update_golden and (options.model is not None or options.replay_dir is not None):
        raise UsageError("--update-golden needs the scripted model: goldens are never written from a real model's run")
    if options.record_dir is not None and options.replay_dir is not None:
        raise UsageError("--record and --replay cannot be used together")
    if options.record_dir is not None and options.model is None:
        raise UsageError("--record needs --model: the real model whose answers are recorded")
    if options.durations is not None and options.shard is None:
        raise UsageError("--durations balances shards: it needs --shard K/N")
    return replace(options, jobs=min(options.jobs, max_jobs()))


def _run_suite(
    options: RunOptions,
    progress: Progress | None,
    execute: ExecuteScenario | None,
    loaded: Sequence[LoadedScenario] | None,
    pool: ProcessPoolExecutor | None,
    started: float,
    signals: StopSignals,
    note: Note | None = None,
) -> SuiteResult:
    # Each file parsed once, each scenario detached from its YAML as soon as its file is checked and held as a
    # reference (`scenario_store`): a run of thousands of scenarios holds no parse trees, and a thousand scenarios.
    all_loaded = store_scenarios(loaded if loaded is not None else iter_scenarios(options.paths))
    durations = None
    if options.shard is not None and options.durations is not None:
        durations = shard_durations(all_loaded, keyword=options.keyword, durations=read_durations(options.durations))
        if durations.note is not None and note is not None:
            note(durations.note)
    selected = select_scenarios(all_loaded, keyword=options.keyword, shard=options.shard, durations=durations)
    if options.keyword and not selected and not options.shard:
        raise UsageError(f"-k {options.keyword!r} selects none of the {len(all_loaded)} scenarios")
    if options.jobs > 1:
        send_worker_imports(_user_modules(selected, options))
    # Everything that can be a usage error is checked before the output directory is cleared.
    model = real_model(options.model, base_url=options.base_url) if options.jobs == 1 else None
    if options.model is not None and options.jobs > 1:
        real_model(options.model, base_url=options.base_url)  # fail fast here, not once per worker
    check_recording_dirs(options)
    earlier_folders = reports.prepare_run_out_dir(options.out_dir) if options.out_dir is not None else frozenset()
    # From here on the run writes into --out: a signal stops it only where it waits, and the reports get written.
    signals.protect()
    if options.out_dir is not None:
        reports.mark_run_started(options.out_dir, SuiteResult(results=(), duration_s=0.0, interrupted=True))

    # Results wait for the reports in a spool: a run of thousands of scenarios holds a thousand of them at most.
    spool = Spool[ScenarioResult]()
    finished: dict[str, int] = {}  # scenario id -> its result's index in the spool
    counts = count_statuses(())
    interrupted = False
    stop_signal: int | None = None

    def record(item: ScenarioIdentity, result: ScenarioResult) -> None:
        finished[item.id] = spool.append(result)
        counts[result.status] += 1
        if progress is not None:
            progress(len(finished), len(selected), result)

    # Everything alive now (imported modules, the loaded scenarios) lives as long as the run: out of the cyclic
    # collector's sight, a full collection scans only what the scenarios made. Full collections took 8% of a
    # 500-scenario run, and 5% once frozen (the rest is freeing the scenarios' own garbage). So the engine is
    # imported first (in this process only with -j 1: workers import it themselves, and freeze it too).
    if options.jobs == 1:
        execute = engine_for(execute)
    gc.freeze()
    try:
        if options.jobs == 1:
            scenarios = (ref.load() for ref in selected)  # each read from the store as its turn comes
            run_sequentially(scenarios, options, model=model, execute=execute, record=record)
        else:
            assert pool is not None  # created by run_suite whenever jobs > 1
            run_parallel(pool, selected, options, execute, record)
    except KeyboardInterrupt as interrupt:  # Ctrl-C or SIGTERM (stop_signals.RunInterrupted); a tool's own is its error
        interrupted = True
        stop_signal = getattr(interrupt, "signum", signals.signum or signal.SIGINT)
    finally:
        gc.unfreeze()

    reason = INTERRUPTED_REASON if interrupted else FAIL_FAST_REASON
    for item in selected:
        if item.id not in finished:  # not run: reported as skipped, and its folder says so (nothing of a run before)
            skipped = _skipped(item, reason)
            finished[item.id] = spool.append(skipped)
            counts[skipped.status] += 1
            if options.out_dir is not None:
                write_scenario_outputs(options.out_dir, skipped)
    if options.out_dir is not None:
        remove_scenario_folders(options.out_dir, earlier_folders - {item.name for item in selected})
    suite = SuiteResult(
        results=SpoolView(spool, [finished[item.id] for item in selected]),
        duration_s=time.perf_counter() - started,
        interrupted=interrupted,
        stop_signal=stop_signal,
        shard=options.shard,
        shard_plan=durations.label if durations is not None else COUNT_PLAN,
        model=options.model,
        discovered=len(all_loaded),
        counts=counts,
    )
    if options.out_dir is not None:
        html = HtmlOptions(engine=options.engine) if options.html_report else None
        reports.write_reports(options.out_dir, suite, html=html)
    return suite
