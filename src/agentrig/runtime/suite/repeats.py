"""`agentrig run --repeat N`: each scenario N times, judged by the fraction of its runs that pass.

A real model is not deterministic: one pass or one failure says little. Under `--repeat N` every selected scenario
runs N times, each run a scenario of its own in the reports and on disk (`NAME@01` .. `NAME@NN`: `@` is not allowed
in a scenario name, so no run's folder can collide with another scenario's). Then, per scenario:

- its pass fraction (passed runs / runs that ran) with a 95% Wilson score interval (sound at 0 and N, unlike the
  normal approximation);
- the rate it needs: its `settings.pass_rate`, else `--pass-rate`, else 1 (every run);
- its verdict: `passed` when the pass fraction meets the rate; else `error` when a run ended in a provider or
  infrastructure error, else `failed`; `skipped` when no run ran (Ctrl-C, `--max-cost`);
- `flaky` when its runs disagree (some passed, some did not);
- its score over the runs and each judged check's pass rate and scores (`repeat_scores`), and, against a
  `--baseline` run, how both changed (`reports/repeat_baseline`).

The run's exit code then follows the scenarios' verdicts (`SuiteResult.verdicts`), with the precedence of a plain
run: 130/143 interrupted > 3 error > 1 failed > 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentrig.runtime.history.run_records import ScenarioResult
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models.record_modes import RecordSetup, recording_path
from agentrig.runtime.suite.repeat_scores import ScoreTally, wilson_interval
from agentrig.runtime.suite.scenario_store import ScenarioRef

__all__ = [
    "REPEAT_SEPARATOR",
    "RepeatTally",
    "base_name",
    "expand_repeats",
    "merged_repeats",
    "recording_name",
    "repeat_name",
    "wilson_interval",
]

REPEAT_SEPARATOR = "@"
"""Between a scenario's name and the number of its run (`weather@03`); never part of a scenario's own name."""


def repeat_name(name: str, index: int, count: int) -> str:
    """The name of run `index` (1-based) of `count`: zero-padded, so the runs sort in order."""
    return f"{name}{REPEAT_SEPARATOR}{index:0{max(2, len(str(count)))}d}"


def base_name(name: str) -> str:
    """The scenario a run belongs to: `weather@03` -> `weather` (a name without a run number is its own)."""
    return name.partition(REPEAT_SEPARATOR)[0]


def recording_name(name: str, setup: RecordSetup | None) -> str:
    """The recording a run named `name` records to or replays from: under `--repeat N` each run has its own
    (`NAME@03.json`), so a recorded repeat run replays run by run as it ran; a replay (`none`) of a run without one
    replays its scenario's one recording (`NAME.json`), as every run without `--repeat` does."""
    scenario = base_name(name)
    if scenario == name or setup is None:
        return scenario
    if setup.mode == "none" and not recording_path(setup.directory, name).is_file():
        return scenario
    return name


def expand_repeats(selected: Sequence[ScenarioRef], count: int) -> list[ScenarioRef]:
    """Each scenario `count` times in a row (`count` 1: the scenarios unchanged)."""
    if count == 1:
        return list(selected)
    runs: list[ScenarioRef] = []
    for ref in selected:
        for index in range(1, count + 1):
            name = repeat_name(ref.name, index, count)
            runs.append(replace(ref, id=f"{ref.path.as_posix()}::{name}", name=name, repeat=index))
    return runs


@dataclass(slots=True)
class _Scenario:
    name: str
    path: str
    required: float
    statuses: list[str] = field(default_factory=list[str])
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    duration_s: float = 0.0
    scores: ScoreTally = field(default_factory=ScoreTally)


class RepeatTally:
    """The runs of each scenario as they finish, and the scenarios' verdicts over them."""

    def __init__(self, count: int, default_rate: float | None, rates: Mapping[str, float | None] | None = None) -> None:
        self.count = count
        self.default_rate = default_rate
        self.rates = dict(rates or {})
        """Scenario name -> its own `settings.pass_rate` (None: the default)."""
        self._scenarios: dict[str, _Scenario] = {}

    def add(self, result: ScenarioResult) -> None:
        """One run finished (or was not run: skipped)."""
        cost = result.cost.usd if result.cost is not None else None
        rate = self.rates.get(base_name(result.name))
        score = result.score.to_json() if result.score is not None else None
        passed = {check.name: check.passed for check in result.checks}
        self.add_run(result.name, result.path, result.status, result.usage, cost, result.duration_s, rate)
        self.add_score(result.name, score, passed)

    def add_entry(self, entry: Mapping[str, Any], rate: float | None) -> None:
        """One run's report.json entry (`merge` sums the runs of several shards)."""
        cost = entry.get("cost") or {}
        usage = Usage.from_json(entry.get("usage") or {})
        self.add_run(entry["name"], entry["path"], entry["status"], usage, cost.get("usd"), entry["duration_s"], rate)
        passed = {str(check.get("name")): bool(check.get("passed")) for check in entry.get("checks") or ()}
        self.add_score(entry["name"], entry.get("score"), passed)

    def add_score(self, name: str, score: Mapping[str, Any] | None, passed: Mapping[str, bool]) -> None:
        """A run's score block and its checks' pass, after `add_run` counted the run."""
        self._scenarios[base_name(name)].scores.add(score, passed)

    def add_run(
        self,
        name: str,
        path: str,
        status: str,
        usage: Usage,
        cost_usd: float | None,
        duration_s: float,
        rate: float | None,
    ) -> None:
        scenario_name = base_name(name)
        required = rate if rate is not None else (self.default_rate if self.default_rate is not None else 1.0)
        scenario = self._scenarios.setdefault(
            scenario_name, _Scenario(name=scenario_name, path=path, required=required)
        )
        scenario.statuses.append(status)
        scenario.usage = scenario.usage + usage
        scenario.duration_s += duration_s
        if cost_usd is not None:
            scenario.cost_usd = round((scenario.cost_usd or 0.0) + cost_usd, 8)

    def _entries(self) -> Iterable[dict[str, Any]]:
        for scenario in sorted(self._scenarios.values(), key=lambda item: (item.path, item.name)):
            counts = {status: scenario.statuses.count(status) for status in ("passed", "failed", "error", "skipped")}
            ran = len(scenario.statuses) - counts["skipped"]
            fraction = counts["passed"] / ran if ran else None
            low, high = wilson_interval(counts["passed"], ran)
            met = fraction is not None and fraction >= scenario.required
            verdict = "skipped" if not ran else "passed" if met else "error" if counts["error"] else "failed"
            yield {
                "id": f"{scenario.path}::{scenario.name}",
                "name": scenario.name,
                "path": scenario.path,
                "runs": ran,
                **counts,
                "pass_fraction": None if fraction is None else round(fraction, 4),
                "interval": [round(low, 4), round(high, 4)] if ran else None,
                "required_rate": scenario.required,
                "verdict": verdict,
                "flaky": 0 < counts["passed"] < ran,
                "usage": scenario.usage.to_json(),
                "cost_usd": scenario.cost_usd,
                "duration_s": round(scenario.duration_s, 4),
                "score": scenario.scores.score_json(),
                "judged": scenario.scores.judged_json(),
                "baseline": None,
            }

    def report(self) -> dict[str, Any]:
        """report.json's `repeats` block (`REPEATS_KEYS`, each scenario `REPEAT_SCENARIO_KEYS`)."""
        scenarios = list(self._entries())
        return {
            "count": self.count,
            "default_pass_rate": self.default_rate if self.default_rate is not None else 1.0,
            "confidence": 0.95,
            "flaky": [entry["name"] for entry in scenarios if entry["flaky"]],
            "baseline": None,
            "scenarios": scenarios,
        }

    def verdicts(self) -> dict[str, int]:
        """How many scenarios have each verdict: the counts the exit code follows."""
        counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        for entry in self._entries():
            counts[entry["verdict"]] += 1
        return counts


def merged_repeats(
    reports: Sequence[Mapping[str, Any]], scenarios: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """The `repeats` block of a merge of shards of one `--repeat` run: the verdicts over every shard's runs, each
    scenario needing the rate its shards reported (None when no input repeated)."""
    blocks = [report["repeats"] for report in reports if isinstance(report.get("repeats"), dict)]
    if not blocks:
        return None
    rates = {item["name"]: item["required_rate"] for block in blocks for item in block.get("scenarios", ())}
    tally = RepeatTally(max(int(block.get("count", 1)) for block in blocks), blocks[0].get("default_pass_rate"))
    for entry in scenarios:
        tally.add_entry(entry, rates.get(base_name(entry["name"])))
    return tally.report()
