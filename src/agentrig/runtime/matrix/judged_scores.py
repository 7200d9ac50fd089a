"""Each judged check's score per model (`agentrig matrix --models`): read from a model's report.json, shown as a
table of compatibility.md and kept in compatibility.json (`versions[].judged`).

Under `--repeat N` a check's runs are its report's `repeats` block's (`judged`: its pass rate with its 95% Wilson
interval, and its scores' distribution); a run without repeats gives each check its one verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["judged_cell", "judged_scores", "judged_table"]


def judged_scores(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Scenario name -> judged check name -> `{runs, passed, pass_fraction, interval, score}` (`interval` null for
    one run, `score` the scores' `mean`, `min`, `max` ...)."""
    repeats = report.get("repeats")
    if isinstance(repeats, Mapping) and isinstance(repeats.get("scenarios"), list):  # pyright: ignore[reportUnknownMemberType]
        return {
            str(entry["name"]): dict(entry.get("judged") or {})
            for entry in repeats["scenarios"]  # pyright: ignore[reportUnknownVariableType]
            if entry.get("judged")  # pyright: ignore[reportUnknownMemberType]
        }
    found: dict[str, dict[str, Any]] = {}
    for entry in report.get("scenarios") or ():
        score = entry.get("score")
        if not isinstance(score, Mapping):
            continue
        passed = {str(check.get("name")): bool(check.get("passed")) for check in entry.get("checks") or ()}
        checks: dict[str, Any] = {}
        for name, value in (score.get("judged") or {}).items():  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            number = float(value) if isinstance(value, int | float) else 0.0  # no verdict scores 0
            ok = passed.get(str(name), False)  # pyright: ignore[reportUnknownArgumentType]
            checks[str(name)] = {  # pyright: ignore[reportUnknownArgumentType]
                "runs": 1,
                "passed": int(ok),
                "pass_fraction": float(ok),
                "interval": None,
                "score": {"runs": 1, "mean": number, "min": number, "median": number, "max": number, "stdev": 0.0},
            }
        found[str(entry["name"])] = checks
    return found


def _number(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "—"


def judged_cell(check: Mapping[str, Any] | None) -> str:
    """One judged check on one model: `0.97 · pass`, or over repeats `0.86 (0.2-1.00) · 9/10 passed, 95% CI 60%-98%`."""
    if check is None:
        return "—"
    score: Mapping[str, Any] = check.get("score") or {}
    if check.get("runs") == 1 or check.get("interval") is None:
        return f"{_number(score.get('mean'))} · {'pass' if check.get('passed') else '**fail**'}"
    low, high = check["interval"]
    spread = f"{_number(score.get('min'))}-{_number(score.get('max'))}"
    rate = f"{check['passed']}/{check['runs']} passed, 95% CI {low:.0%}-{high:.0%}"
    return f"{_number(score.get('mean'))} ({spread}) · {rate}"


def judged_table(labels: Sequence[str], judged: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """compatibility.md's judged checks: a row per scenario and judged check, a column per model (`judged`: model ->
    `judged_scores`); [] when no model's run has one."""
    rows: dict[tuple[str, str], None] = {}
    for label in labels:
        for scenario, checks in (judged.get(label) or {}).items():
            for name in checks:
                rows[(scenario, name)] = None
    if not rows:
        return []
    header = ["scenario", "judged check", *(f"`{label}`" for label in labels)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    for scenario, name in sorted(rows):
        cells = [judged_cell(((judged.get(label) or {}).get(scenario) or {}).get(name)) for label in labels]
        lines.append("| " + " | ".join([f"`{scenario}`", name, *cells]) + " |")
    return lines
