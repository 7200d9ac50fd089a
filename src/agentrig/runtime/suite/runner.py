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
from agentrig.runtime.models.limiter import Limiter
from agentrig.runtime.models.provider_options import check_positive_seconds, check_provider_options, provider_modules
from agentrig.runtime.models.record_modes import check_recorded_models, needs_live_model, record_setup
from agentrig.runtime.reports.report_files import HtmlOptions
from agentrig.runtime.reports.totals import RunTotals, cost_json
from agentrig.runtime.suite.budget import RunBudget
from agentrig.runtime.suite.options import DEFAULT_OUT_DIR, ExecuteScenario, ExecutionLike, RunOptions, max_jobs
from agentrig.runtime.suite.outputs import reports
from agentrig.runtime.suite.outputs.scenario_files import write_scenario_outputs
from agentrig.runtime.suite.processes.pool import WorkerImport, send_worker_imports, started_pool, worker_imports
from agentrig.runtime.suite.processes.run_limiter import run_limiter
from agentrig.runtime.suite.processes.stop_signals import StopSignals
from agentrig.runtime.suite.processes.workers import run_parallel
from agentrig.runtime.suite.repeat_baseline import read_baseline, with_baseline
from agentrig.runtime.suite.repeats import RepeatTally, base_name, expand_repeats, recording_name
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
from agentrig.runtime.suite.timeouts import budget_of
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
    "live_model_name",
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
        with StopSignals() as signals, run_limiter(options) as (options, limiter):
            return _run_suite(options, progress, execute, loaded, pool, started, signals, note, limiter)
    finally:
        send_worker_imports([])  # a run that stopped early: the forkserver waits for nothing more
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _user_modules(selected: Sequence[ScenarioRef], options: RunOptions) -> list[WorkerImport]:
    """What the `-j N` workers' forkserver imports before it forks them: each module the selected scenarios'
    `agent:` and `deps:` (and `--deps`) name; a scripted run imports agents with placeholder provider keys."""
    named = (
        (ref.user_modules, ref.base_dir, budget_of(options.timeout if ref.timeout is None else ref.timeout, ref.turns))
        for ref in selected
    )
    modules = worker_imports(named, default_deps=options.default_deps, offline=options.model is None, cwd=Path.cwd())
    # A worker that talks to a provider forks with its SDK and pydantic-ai's model for it imported (0.3-0.5 s each).
    provider: list[WorkerImport] = [
        (name, [], False, None) for name in provider_modules(options.model) if options.provider_bound
    ]
    return [*provider, *modules]


def live_model_name(options: RunOptions) -> str | None:
    """The model a run may send requests to: `--model`, unless the run only replays (then none, and no key)."""
    setup = record_setup(
        mode=options.record_mode, record_dir=options.record_dir, replay_dir=options.replay_dir, model=options.model
    )
    return None if setup is not None and setup.replays_only else options.model


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
    check_provider_options(options.provider)
    check_positive_seconds(options.timeout, "--timeout")
    check_accounting_options(options)
    return replace(options, jobs=min(options.jobs, max_jobs()))


def check_accounting_options(options: RunOptions) -> None:
    """A `UsageError` for a bad `--repeat`, `--pass-rate`, `--max-cost`, `--prices` or `--record-mode`."""
    if options.repeat < 1:
        raise UsageError(f"--repeat must be at least 1, got {options.repeat}")
    if options.pass_rate is not None and not 0 <= options.pass_rate <= 1:
        raise UsageError(f"--pass-rate must be between 0 and 1 (a fraction of the runs), got {options.pass_rate:g}")
    if options.max_cost is not None and not options.max_cost > 0:  # also NaN
        raise UsageError(f"--max-cost must be an amount of US dollars above 0, got {options.max_cost:g}")
    # The record flags checked here, in one line; under --repeat each run records its own (`repeats.recording_name`).
    record_setup(
        mode=options.record_mode, record_dir=options.record_dir, replay_dir=options.replay_dir, model=options.model
    )
    if options.prices is not None or options.max_cost is not None:
        from agentrig.runtime.models.pricing import pricer_for, require_price

        if options.max_cost is not None:
            require_price(options.model, options.prices, flag=f"--max-cost {options.max_cost:g}")
        elif options.model is not None:
            pricer_for(options.model, options.prices)  # a bad --prices file: one line now, not in every scenario


def _run_suite(
    options: RunOptions,
    progress: Progress | None,
    execute: ExecuteScenario | None,
    loaded: Sequence[LoadedScenario] | None,
    pool: ProcessPoolExecutor | None,
    started: float,
    signals: StopSignals,
    note: Note | None = None,
    limiter: Limiter | None = None,
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
    check_recording_dirs(options)
    setup = record_setup(
        mode=options.record_mode, record_dir=options.record_dir, replay_dir=options.replay_dir, model=options.model
    )
    baseline = read_baseline(options.baseline, options.repeat)
    names = [recording_name(item.name, setup) for item in expand_repeats(selected, options.repeat)]
    check_recorded_models(setup, options.model, names)
    if not needs_live_model(setup, names):  # a replay is offline: no live model, no key
        options = replace(options, live_model=False)
    live = options.model if options.live_model else None
    model = None
    if options.jobs == 1:
        model = real_model(live, base_url=options.base_url, options=options.provider, limiter=limiter)
    elif live is not None:
        real_model(live, base_url=options.base_url)  # fail fast here, not once per worker
    selected = expand_repeats(selected, options.repeat)
    html = HtmlOptions(engine=options.engine) if options.html_report else None
    signals.raise_if_received()  # a signal whose KeyboardInterrupt was swallowed (start-up's too): --out untouched
    folder = reports.prepare_run_out_dir(options.out_dir) if options.out_dir is not None else None
    # From here on the run writes into --out: a signal stops it only where it waits, and the reports get written.
    signals.protect()
    if folder is not None:
        reports.mark_run_started(folder, SuiteResult(results=(), duration_s=0.0, interrupted=True), html=html)

    # Results wait for the reports in a spool: a run of thousands of scenarios holds a thousand of them at most.
    spool = Spool[ScenarioResult]()
    finished: dict[str, int] = {}  # scenario id -> its result's index in the spool
    counts = count_statuses(())
    interrupted = False
    stop_signal: int | None = None
    totals = RunTotals(max_cost_usd=options.max_cost)
    budget = RunBudget(options.max_cost)
    rates = {base_name(item.name): item.pass_rate for item in selected}
    repeats = RepeatTally(options.repeat, options.pass_rate, rates) if options.repeat > 1 else None

    def record(item: ScenarioIdentity, result: ScenarioResult) -> None:
        finished[item.id] = spool.append(result)
        counts[result.status] += 1
        attempts = result.attempts.to_json() if result.attempts is not None else None
        totals.add(
            {
                "status": result.status,
                "usage": result.usage.to_json(),
                "attempts": attempts,
                "cost": cost_json(result.cost),
                "warnings": [record.to_json() for record in result.warnings],
            }
        )
        budget.add(result)
        if repeats is not None:
            repeats.add(result)
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
            scenarios = budget.gate(ref.load() for ref in selected)  # each read from the store as its turn comes
            run_sequentially(
                scenarios, options, model=model, execute=execute, record=record, may_start=budget.allows_start
            )
        else:
            assert pool is not None  # created by run_suite whenever jobs > 1
            run_parallel(pool, selected, options, execute, record, may_start=budget.allows_start)
    except KeyboardInterrupt as interrupt:  # Ctrl-C or SIGTERM (stop_signals.RunInterrupted); a tool's own is its error
        interrupted = True
        stop_signal = getattr(interrupt, "signum", signals.signum or signal.SIGINT)
    finally:
        gc.unfreeze()

    reason = INTERRUPTED_REASON if interrupted else budget.reason if budget.exhausted else FAIL_FAST_REASON
    for item in selected:
        if item.id not in finished:  # not run: reported as skipped, and its folder says so (nothing of a run before)
            skipped = _skipped(item, reason)
            if options.out_dir is not None:
                skipped = write_scenario_outputs(options.out_dir, skipped)
            finished[item.id] = spool.append(skipped)
            counts[skipped.status] += 1
            totals.add({"status": "skipped"})
            if budget.exhausted and not interrupted:
                totals.not_run_for_budget += 1
            if repeats is not None:
                repeats.add(skipped)
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
        verdicts=repeats.verdicts() if repeats is not None else None,
        totals=totals.to_json(),
        repeats=with_baseline(repeats.report() if repeats is not None else None, baseline, options.baseline),
    )
    if folder is not None:
        reports.write_reports(folder.path, suite, html=html, owner=folder)
        folder.finish()  # what an earlier run left and this one did not write again (the unselected scenarios)
    return suite
