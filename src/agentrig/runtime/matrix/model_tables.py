"""The parts of the compatibility page that differ when its columns are models (`agentrig matrix --models`), not
pydantic-ai versions: the evidence boundary, and what each model's run cost (status, tokens, money, seconds)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from agentrig.runtime.matrix.compare import ScenarioComparison, VersionOutput
from agentrig.runtime.reports.totals import format_usd

__all__ = ["MODEL_EVIDENCE_BOUNDARY", "metrics_cell", "models_table", "scenario_metrics_table"]

MODEL_EVIDENCE_BOUNDARY = (
    "Each column is one model: the same scenarios ran with `agentrig run --model MODEL` in this environment (one "
    "pydantic-ai version), live against the provider or replayed from that model's recordings (`--record-mode`). A "
    "pass means that the scenario's expectations that hold for a real model held on that run; expectations that only "
    "hold for scripts are skipped. A real model is not deterministic: one run per scenario is a sample, not a proof "
    "(`--repeat N` in the run arguments gives pass fractions). Costs are genai-prices' (or `--prices`) list prices "
    "for the tokens each run used; latency is each scenario's wall time, provider and network included."
)


def _seconds(value: Any) -> str:
    return f"{value:.2f} s" if isinstance(value, int | float) else "—"


def _money(value: Any) -> str:
    return format_usd(value) if isinstance(value, int | float) else "no price"


def models_table(versions: Sequence[VersionOutput], baseline: str) -> list[str]:
    """One row per model: statuses, requests, tokens, cost and time of its whole run."""
    header = ["model", "passed", "failed", "error", "skipped", "requests", "tokens in / out", "cost", "time", "note"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    for output in versions:
        label = f"`{output.version}` (baseline)" if output.version == baseline else f"`{output.version}`"
        counts = Counter(output.statuses.values())
        totals: Mapping[str, Any] = output.totals or {}
        seconds = sum(float(metric.get("duration_s") or 0) for metric in output.metrics.values())
        note = "" if output.error is None else f"agentrig run failed (exit {output.exit_code})"
        if not note and totals.get("cost_note") and totals.get("cost_usd") is None:
            note = str(totals["cost_note"])
        row = [
            label,
            *(str(counts[name]) for name in ("passed", "failed", "error", "skipped")),
            str(totals.get("requests", "—")),
            f"{totals.get('input_tokens', 0):,} / {totals.get('output_tokens', 0):,}" if totals else "—",
            _money(totals.get("cost_usd")),
            _seconds(seconds) if output.metrics else "—",
            note,
        ]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def metrics_cell(status: str, metric: Mapping[str, Any] | None) -> str:
    """One scenario on one model: `pass · 1,234 tok · $0.0012 · 1.20 s`."""
    if metric is None:
        return status
    tokens = int(metric.get("input_tokens") or 0) + int(metric.get("output_tokens") or 0)
    return f"{status} · {tokens:,} tok · {_money(metric.get('cost_usd'))} · {_seconds(metric.get('duration_s'))}"


def scenario_metrics_table(
    scenarios: Sequence[ScenarioComparison], versions: Sequence[VersionOutput], cell: Any
) -> list[str]:
    """The scenarios, a column per model: status, tokens, cost and time; then whether the history differs."""
    labels = [output.version for output in versions]
    by_label = {output.version: output for output in versions}
    header = ["scenario", *(f"`{label}`" for label in labels), "canonical history vs baseline"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    for item in scenarios:
        cells = [metrics_cell(cell(item.statuses[label]), by_label[label].metrics.get(item.name)) for label in labels]
        changed = "identical" if not item.canonical_differs else "**differs**: " + ", ".join(item.canonical_differs)
        lines.append("| " + " | ".join([f"`{item.name}`", *cells, changed]) + " |")
    return lines
