"""What a suite run is asked to do (`RunOptions`), and what the engine hands back for one scenario."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentrig.runtime.models.provider_options import ProviderOptions

if TYPE_CHECKING:  # annotations only: the pytest plugin reads these options before pytest-xdist starts its workers
    from agentrig.runtime.history.run_records import TurnRecord
    from agentrig.runtime.models.limiter_service import LimiterAddress

__all__ = ["DEFAULT_OUT_DIR", "JOBS_PER_CPU", "ExecuteScenario", "ExecutionLike", "RunOptions", "max_jobs"]

DEFAULT_OUT_DIR = Path("agentrig-out")

JOBS_PER_CPU = 4
"""`-j` is capped at this many worker processes per CPU: scripted scenarios are CPU-bound, so more workers
than CPUs only add memory (each worker holds pydantic-ai); a few per CPU still help real-model runs, which
wait on the network. `-j 100000` would otherwise try to start 100000 processes."""


def max_jobs() -> int:
    """The most worker processes a run starts: JOBS_PER_CPU per CPU."""
    return JOBS_PER_CPU * (os.cpu_count() or 1)


class ExecutionLike(Protocol):
    """What the engine returns (`agentrig.runtime.engine.pydantic_ai_engine.scenario_execution.ScenarioExecution`)."""

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
`agentrig.runtime.engine.pydantic_ai_engine.scenario_execution.execute_scenario`.
Must be a module-level function when `jobs > 1` (it is sent to worker processes by reference)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """What `agentrig run` was asked to do."""

    paths: tuple[Path, ...] = (Path("scenarios"),)
    """Scenario files or directories (searched recursively)."""
    keyword: str | None = None
    """`-k` expression: words match a name substring or a tag; `not`, `and`, `or` and parentheses combine them."""
    jobs: int = 1
    """Worker processes; 1 runs in this process. Capped at `max_jobs()`."""
    shard: tuple[int, int] | None = None
    """(K, N): run only shard K of N (1-based), chosen by a hash of the scenario id."""
    durations: Path | None = None
    """An earlier run's report.json (or output directory) whose durations balance the shards (`--durations`)."""
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
    stream: bool = False
    """Run every scenario streamed (`--stream`), as if it said `stream: true`."""
    replay_dir: Path | None = None
    """Answer each scenario offline from the recordings here (`--replay`); a changed request fails with a diff."""
    default_deps: str | None = None
    """`module:attribute` building the deps of scenarios with an `agent` and no `deps` of their own (`--deps`)."""
    html_report: bool = True
    """Write `report.html` beside report.json (`--no-html` turns it off)."""
    engine: str = "pydantic-ai"
    """The engine's name (`--engine`), for the reports."""
    record_mode: str | None = None
    """`--record-mode`: none, once, new_episodes or all (pytest-recording's meanings; `models.record_modes`), with
    `record_dir` (or `replay_dir` for none) as the recordings directory. None: `--record` alone is all, `--replay`
    alone is none."""
    prices: Path | None = None
    """`--prices FILE`: US dollars per million tokens for models genai-prices does not know (`models.pricing`)."""
    max_cost: float | None = None
    """`--max-cost USD`: no scenario starts once the run has spent this much (the running ones finish)."""
    repeat: int = 1
    """`--repeat N`: each scenario runs N times (`suite.repeats`)."""
    pass_rate: float | None = None
    """`--pass-rate R`: the fraction of its repeats a scenario must pass when its `settings.pass_rate` says none."""
    baseline: Path | None = None
    """`--baseline DIR`: an earlier run's output folder its repeats are compared with (`suite.repeat_baseline`)."""
    live_model: bool = True
    """False when `model` is only the model the recordings are replayed as (`--record-mode none`, or `once` with
    every recording there): no request reaches it, so it is never built and needs no key."""
    timeout: float | None = None
    """Seconds per turn (`--timeout`) for scenarios whose `settings.timeout` says nothing."""
    provider: ProviderOptions = field(default_factory=ProviderOptions)
    """The provider layer's settings (`--max-concurrency`, `--rpm`, `--tpm`, retries, `--request-timeout`)."""
    show_warnings: bool = True
    """Pass each warning a scenario records on to Python's own display too (stderr; pytest's warnings summary in the
    plugin); `agentrig run` does not: its reports hold them (`engine/warning_capture`)."""
    require_extras: bool = False
    """A scenario whose `requires:` extras (or a UI turn's adapter) are not installed is an `error` (exit code 3)
    instead of `skipped` with the install command (`--require-extras`: a gate that must run every scenario)."""
    limiter: LimiterAddress | None = None
    """Where the run's limiter listens, for its `-j N` workers (set by the runner, never by a front end)."""

    @property
    def provider_bound(self) -> bool:
        """Scenarios talk to a real provider (`--model`, recorded or not): they wait on the network, and run side by
        side (`provider.scenario_width` at a time in each process). A replay is offline, and so is a run whose
        recordings answer every request (`live_model` False)."""
        return self.model is not None and self.live_model and self.replay_dir is None

    @property
    def width(self) -> int:
        """Scenarios one process runs at once: side by side when provider-bound, else one after another."""
        return self.provider.scenario_width if self.provider_bound else 1
