"""A scenario's limits on what its run spent: `max_latency_s`, `max_cost_usd` and `max_requests`, checked against
the measured wall time, the priced cost and the request count of the run (a real model's or a script's).

Each is an ordinary check whose `expected` is the limit and whose `actual` is the measured value; a failure says
both in its detail (`max_cost_usd: 0.031 > 0.02`), so report.json, junit.xml, summary.md and report.html show it
as they show any check."""

from __future__ import annotations

from agentrig.runtime.history.run_records import Check, Cost
from agentrig.runtime.history.usage import Usage
from agentrig.scenarios.model import ScenarioExpectations

__all__ = ["limit_checks"]


def limit_checks(
    expect: ScenarioExpectations, *, duration_s: float, usage: Usage, cost: Cost | None, scripted: bool
) -> list[Check]:
    """The scenario's limit checks, in a fixed order (latency, cost, requests); none for a limit not given."""
    checks: list[Check] = []
    if expect.max_latency_s is not None:
        # Milliseconds: the wall time's noise is far above a microsecond, and the report stays readable.
        checks.append(_at_most("max_latency_s", round(duration_s, 3), expect.max_latency_s))
    if expect.max_cost_usd is not None:
        checks.append(_cost_check(expect.max_cost_usd, cost, scripted=scripted))
    if expect.max_requests is not None:
        checks.append(_at_most("max_requests", usage.requests, expect.max_requests))
    return checks


def _cost_check(limit: float, cost: Cost | None, *, scripted: bool) -> Check:
    usd = cost.usd if cost is not None else None
    if usd is None and scripted:
        usd = 0.0  # a script sends nothing to a provider: there is nothing to pay
    if usd is None:
        # A real model without a price: the limit cannot be shown to hold, and a gate must not pass on a blank.
        note = cost.note if cost is not None and cost.note else "the run has no price"
        return Check(
            name="scenario: max_cost_usd",
            passed=False,
            expected=limit,
            actual=None,
            detail=f"max_cost_usd: {note}; give the model a price with --prices",
        )
    return _at_most("max_cost_usd", usd, limit)


def _at_most(field: str, measured: float, limit: float) -> Check:
    passed = measured <= limit
    return Check(
        name=f"scenario: {field}",
        passed=passed,
        expected=limit,
        actual=measured,
        detail="" if passed else f"{field}: {_number(measured)} > {_number(limit)}",
    )


def _number(value: float) -> str:
    """A measured value as a person reads it: no exponent for a small cost, no trailing zeros."""
    if isinstance(value, int):
        return str(value)
    return f"{value:.8f}".rstrip("0").rstrip(".") or "0"
