"""A run's totals: requests, tokens by kind and cost in money, summed over its scenarios' report entries.

    totals = RunTotals()
    totals.add(entry)        # a scenario's report.json entry (or just its "usage", "cost" and "status")
    totals.to_json()         # report.json's "totals" block (TOTALS_KEYS)

Built from JSON entries, so a run, a merge and the pytest plugin all sum the same way. A scenario without a price
is counted as such (`unpriced`, with the first reason), never as 0: `cost_usd` is the sum of the priced scenarios,
and null when none was priced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentrig.runtime.history.provider_attempts import ProviderAttempts

__all__ = [
    "COST_KEYS",
    "TOKEN_COUNTERS",
    "TOTALS_KEYS",
    "RunTotals",
    "accounting_lines",
    "cost_json",
    "describe_cost",
    "describe_repeat",
    "describe_totals",
    "describe_warnings",
    "format_usd",
    "score_lines",
    "totals_properties",
]

TOKEN_COUNTERS = ("requests", "tool_calls", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
TOTALS_KEYS = frozenset(
    {
        *TOKEN_COUNTERS,
        "total_tokens",
        "attempts",
        "scenarios_run",
        "cost_usd",
        "spent_usd",
        "priced",
        "unpriced",
        "cost_note",
        "max_cost_usd",
        "max_cost_overshoot_usd",
        "not_run_for_budget",
        "warnings",
        "scenarios_warned",
    }
)
"""Every key of report.json's `totals` (`attempts`: the provider layer's attempts, retries and waits summed over the
scenarios that sent requests; null when none did, as in a scripted run; `warnings`: the scenarios' warnings, each
counted as often as it was shown, and `scenarios_warned`: how many scenarios showed any)."""
COST_KEYS = frozenset({"usd", "spent_usd", "model", "priced_by", "note"})
"""Every key of a scenario's `cost` in report.json."""


def cost_json(cost: Any) -> dict[str, Any] | None:
    """A `run_records.Cost` as report.json writes it (None: nothing priced it)."""
    if cost is None:
        return None
    return {
        "usd": cost.usd,
        "spent_usd": cost.spent_usd,
        "model": cost.model,
        "priced_by": cost.priced_by,
        "note": cost.note,
    }


def describe_cost(cost: Mapping[str, Any] | None) -> str:
    """A scenario's cost for a table cell: `$0.0123`, or why there is none."""
    if cost is None:
        return "—"
    if cost.get("usd") is None:
        return "no price" if cost.get("model") else "—"
    return format_usd(cost["usd"])


def format_usd(amount: float) -> str:
    """`$0.0123`: four significant decimals below a cent, two above."""
    return f"${amount:.2f}" if amount >= 1 else f"${amount:.4f}" if amount >= 0.0001 else f"${amount:.6f}"


class RunTotals:
    """Sums report entries into the `totals` block."""

    def __init__(self, *, max_cost_usd: float | None = None) -> None:
        self.counters = dict.fromkeys(TOKEN_COUNTERS, 0)
        self.scenarios_run = 0
        self.cost_usd: float | None = None
        self.spent_usd: float | None = None
        self.priced = 0
        self.unpriced = 0
        self.notes: list[str] = []
        self.max_cost_usd = max_cost_usd
        self.not_run_for_budget = 0
        self.attempts: ProviderAttempts | None = None
        self.warnings = 0
        self.scenarios_warned = 0

    def add(self, entry: Mapping[str, Any]) -> None:
        """One scenario's entry (`usage`, `attempts`, `cost`, `status`, `warnings`)."""
        if entry.get("status") != "skipped":
            self.scenarios_run += 1
        shown = _warnings_shown(entry.get("warnings"))
        if shown:
            self.warnings += shown
            self.scenarios_warned += 1
        attempts = entry.get("attempts")
        if isinstance(attempts, Mapping):
            counted = ProviderAttempts.from_json(attempts)
            self.attempts = counted if self.attempts is None else self.attempts + counted
        usage = entry.get("usage") or {}
        for name in TOKEN_COUNTERS:
            value = usage.get(name, 0)
            self.counters[name] += value if isinstance(value, int) and not isinstance(value, bool) else 0
        cost = entry.get("cost")
        if not isinstance(cost, Mapping):
            return
        usd, spent = cost.get("usd"), cost.get("spent_usd")
        if isinstance(usd, int | float) and not isinstance(usd, bool):
            self.priced += 1
            self.cost_usd = round((self.cost_usd or 0.0) + usd, 8)
            if isinstance(spent, int | float) and not isinstance(spent, bool):
                self.spent_usd = round((self.spent_usd or 0.0) + spent, 8)
        elif entry.get("status") != "skipped":
            note = cost.get("note")
            if cost.get("model") is not None:
                self.unpriced += 1
            if isinstance(note, str) and note not in self.notes:
                self.notes.append(note)

    def add_all(self, entries: Iterable[Mapping[str, Any]]) -> RunTotals:
        for entry in entries:
            self.add(entry)
        return self

    @property
    def overshoot_usd(self) -> float | None:
        """How far the live spend went past `--max-cost` (0.0 within it; None without a budget): at most one
        request's price per request in flight (`models.spend_gate`)."""
        if self.max_cost_usd is None:
            return None
        return round(max(0.0, (self.spent_usd or 0.0) - self.max_cost_usd), 8)

    def to_json(self) -> dict[str, Any]:
        return {
            **self.counters,
            "total_tokens": self.counters["input_tokens"] + self.counters["output_tokens"],
            "attempts": self.attempts.to_json() if self.attempts is not None else None,
            "scenarios_run": self.scenarios_run,
            "cost_usd": self.cost_usd,
            "spent_usd": self.spent_usd,
            "priced": self.priced,
            "unpriced": self.unpriced,
            "cost_note": "; ".join(self.notes) if self.notes else None,
            "max_cost_usd": self.max_cost_usd,
            "max_cost_overshoot_usd": self.overshoot_usd,
            "not_run_for_budget": self.not_run_for_budget,
            "warnings": self.warnings,
            "scenarios_warned": self.scenarios_warned,
        }


def _warnings_shown(records: object) -> int:
    """How many times a report entry's warnings were shown (a record without a count was shown once)."""
    if not isinstance(records, list):
        return 0
    counts = (record.get("count", 1) if isinstance(record, Mapping) else 0 for record in records)  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
    return sum(count for count in counts if isinstance(count, int) and not isinstance(count, bool))


def describe_warnings(totals: Mapping[str, Any]) -> str | None:
    """`3 shown in 2 scenarios` (None when there were none)."""
    shown, scenarios = totals.get("warnings") or 0, totals.get("scenarios_warned") or 0
    if not shown:
        return None
    return f"{shown} shown in {scenarios} scenario{'s' if scenarios != 1 else ''}"


def describe_totals(totals: Mapping[str, Any]) -> str:
    """One line: requests, tokens and cost (`42 requests, 12,345 tokens in / 2,345 out, $0.0312`)."""
    line = f"{totals['requests']} requests, {totals['input_tokens']:,} tokens in / {totals['output_tokens']:,} out" + (
        f" ({totals['cache_read_tokens']:,} cached)" if totals.get("cache_read_tokens") else ""
    )
    if totals.get("cost_usd") is not None:
        line += f", {format_usd(totals['cost_usd'])}"
        if totals.get("spent_usd") is not None and totals["spent_usd"] != totals["cost_usd"]:
            line += f" ({format_usd(totals['spent_usd'])} spent live)"
        if totals.get("unpriced"):
            line += f" + {totals['unpriced']} unpriced"
    attempts = totals.get("attempts")
    if isinstance(attempts, Mapping) and attempts.get("retries"):
        line += (
            f"; {attempts['retries']} retried ({attempts['attempts']} attempts, {attempts['retry_wait_s']:g} s waited)"
        )
    if totals.get("cost_note"):
        line += f"; {totals['cost_note']}"
    if totals.get("max_cost_usd") is not None:
        spent = format_usd(totals.get("spent_usd") or 0.0)
        line += f"; --max-cost budget {format_usd(totals['max_cost_usd'])}, {spent} spent"
        if totals.get("max_cost_overshoot_usd"):
            line += f", over by {format_usd(totals['max_cost_overshoot_usd'])}"
        if totals.get("not_run_for_budget"):
            line += f": {totals['not_run_for_budget']} scenarios not run"
    return line


def describe_repeat(entry: Mapping[str, Any]) -> str:
    """One scenario over its repeats: `weather: 4/5 passed (80%, 95% CI 38-96%), needs 80%: passed, flaky`."""
    if not entry["runs"]:
        return f"{entry['name']}: no run ran ({entry['skipped']} skipped)"
    low, high = entry["interval"]
    fraction = entry["pass_fraction"]
    line = (
        f"{entry['name']}: {entry['passed']}/{entry['runs']} passed ({fraction:.0%}, 95% CI {low:.0%}-{high:.0%}), "
        f"needs {entry['required_rate']:.0%}: {entry['verdict']}"
    )
    return line + (", flaky" if entry["flaky"] else "")


def _distribution(score: Mapping[str, Any]) -> str:
    return f"mean {score['mean']:.2f} (min {score['min']:.2f}, median {score['median']:.2f}, max {score['max']:.2f})"


def _change(change: Mapping[str, Any]) -> str:
    """`vs baseline 100% (95% CI 72%-100%): pass rate -70 pts, score -0.38, intervals apart`."""
    if change.get("pass_fraction") is None:
        return "vs baseline: no run ran there"
    low, high = change["interval"]
    line = f"vs baseline {change['pass_fraction']:.0%} (95% CI {low:.0%}-{high:.0%}): "
    line += f"pass rate {round(change['pass_rate_delta'] * 100):+d} pts"
    if change.get("score_delta") is not None:
        line += f", score {change['score_delta']:+.2f}"
    return line + (", intervals overlap" if change.get("intervals_overlap") else ", intervals apart")


def score_lines(entry: Mapping[str, Any]) -> list[str]:
    """A repeated scenario's score and its judged checks over the runs, and its change against the baseline run."""
    lines: list[str] = []
    if entry.get("score"):
        threshold = entry["score"].get("threshold")
        needs = f", min_score {threshold:g}" if threshold is not None else ""
        lines.append(f"score {_distribution(entry['score'])}{needs}")
    change = entry.get("baseline")
    if change:
        lines.append(_change(change))
    for name, check in (entry.get("judged") or {}).items():
        low, high = check["interval"]
        rate = f"{check['passed']}/{check['runs']} passed (95% CI {low:.0%}-{high:.0%})"
        line = f"{name}: {rate}, score {_distribution(check['score'])}"
        before = (change or {}).get("judged", {}).get(name)
        lines.append(line + (f"; {_change(before)}" if before else ""))
    return lines


def accounting_lines(totals: Mapping[str, Any] | None, repeats: Mapping[str, Any] | None) -> list[str]:
    """What a run's totals and repeats say, for the terminal: `totals: ...`, then one line per repeated scenario."""
    lines: list[str] = []
    # A scripted run's totals are its script's: said in report.json, not on the terminal.
    if totals is not None and (totals.get("priced") or totals.get("unpriced") or totals.get("not_run_for_budget")):
        lines.append(f"totals: {describe_totals(totals)}")
    warned = describe_warnings(totals) if totals is not None else None
    if warned is not None:
        lines.append(f"warnings: {warned}")
    if repeats is not None:
        lines.append(f"repeats: each scenario {repeats['count']} times")
        if repeats.get("baseline"):
            lines.append(f"baseline: {repeats['baseline']}")
        for entry in repeats["scenarios"]:
            lines.append(f"  {describe_repeat(entry)}")
            lines += [f"    {line}" for line in score_lines(entry)]
        if repeats["flaky"]:
            lines.append(f"flaky: {', '.join(repeats['flaky'])}")
    return lines


def totals_properties(totals: Mapping[str, Any] | None, repeats: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """junit.xml's run properties for the totals: requests, tokens, cost (only what the run has)."""
    if totals is None:
        return []
    names = ("requests", "input_tokens", "output_tokens", "cache_read_tokens", "cost_usd", "spent_usd")
    properties = [(f"total_{name}", str(totals[name])) for name in names if totals.get(name) is not None]
    attempts = totals.get("attempts")
    if isinstance(attempts, Mapping):
        properties += [(f"total_{name}", str(attempts[name])) for name in ("attempts", "retries") if name in attempts]
    if totals.get("cost_note"):
        properties.append(("cost_note", str(totals["cost_note"])))
    if totals.get("not_run_for_budget"):
        properties.append(("not_run_for_budget", str(totals["not_run_for_budget"])))
    if totals.get("warnings"):
        properties.append(("total_warnings", str(totals["warnings"])))
    if repeats is not None:
        properties.append(("repeat", str(repeats["count"])))
        properties.append(("flaky", ", ".join(repeats["flaky"])))
    return properties
