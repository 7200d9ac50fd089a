"""How results become verdicts: a scenario's status, the suite's counts and its exit code.

Exit code precedence (docs/exit-codes.md): 130 interrupted > 3 error > 1 failed > 0. A scenario is `error`
when a turn ended with a provider or infrastructure error no expectation asked for, `failed` when a check
failed, else `passed`.
"""

from __future__ import annotations

import signal
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentrig.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_PROVIDER, EXIT_TERMINATED
from agentrig.runtime.history.run_records import (
    PROVIDER_ERROR_KINDS,
    Check,
    RunError,
    ScenarioResult,
    ScenarioStatus,
    TurnRecord,
)
from agentrig.scenarios.loader import LoadedScenario

__all__ = [
    "SuiteResult",
    "count_statuses",
    "exit_code_for",
    "is_failure",
    "scenario_status",
    "unexpected_error",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteResult:
    """The outcome of a suite run."""

    results: Sequence[ScenarioResult]
    """One result per selected scenario, sorted by scenario id (a run's come from its `Spool`: past the first
    thousand, each is read back from disk when asked for)."""
    duration_s: float
    """Wall time of the whole run."""
    interrupted: bool = False
    """Ctrl-C or SIGTERM stopped the run; unfinished scenarios are `skipped`."""
    stop_signal: int | None = None
    """The signal that stopped it (SIGTERM makes the exit code 143); None for Ctrl-C raised another way."""
    shard: tuple[int, int] | None = None
    shard_plan: str = "count"
    """How the shards were dealt: `count`, or `durations <digest>` (`shard_plan`); merge refuses a mix."""
    model: str | None = None
    discovered: int = 0
    """Scenarios found before `-k` and `--shard` selected some."""
    counts: dict[str, int] = field(default_factory=dict[str, int])
    """passed / failed / error / skipped."""
    verdicts: dict[str, int] | None = None
    """Under `--repeat N`: the scenarios' verdicts over their runs (`suite.repeats`), which the exit code follows."""
    totals: Mapping[str, Any] | None = None
    """report.json's `totals` block (`reports.totals`): requests, tokens, cost, the budget."""
    repeats: Mapping[str, Any] | None = None
    """report.json's `repeats` block under `--repeat N` (`suite.repeats`)."""

    @property
    def exit_code(self) -> int:
        """130 interrupted (143 by SIGTERM) > 3 provider/infrastructure error > 1 failed > 0 (docs/exit-codes.md);
        under `--repeat`, by the scenarios' verdicts rather than each run's status."""
        if self.interrupted and self.stop_signal == signal.SIGTERM:
            return EXIT_TERMINATED
        counts = self.verdicts if self.verdicts is not None else self.counts
        return exit_code_for(counts, interrupted=self.interrupted)


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


def _expected_error(loaded: LoadedScenario, turn: TurnRecord, *, is_last: bool) -> bool:
    scenario = loaded.scenario
    if turn.index < len(scenario.turns) and scenario.turns[turn.index].expect.error is not None:
        return True
    return is_last and scenario.expect.error is not None


def unexpected_error(loaded: LoadedScenario, turns: Sequence[TurnRecord], *, scripted: bool) -> RunError | None:
    """The first turn error no expectation asked for (any error counts on a real model: scripted errors are skipped)."""
    for position, turn in enumerate(turns):
        if turn.error is None:
            continue
        if not scripted or not _expected_error(loaded, turn, is_last=position == len(turns) - 1):
            return turn.error
    return None


def scenario_status(checks: Sequence[Check], unexpected: RunError | None) -> ScenarioStatus:
    if unexpected is not None and unexpected.kind in PROVIDER_ERROR_KINDS:
        return "error"
    return "passed" if all(check.passed for check in checks) else "failed"


def is_failure(result: ScenarioResult) -> bool:
    """Failed or errored: what `-x` stops on."""
    return result.status in ("failed", "error")
