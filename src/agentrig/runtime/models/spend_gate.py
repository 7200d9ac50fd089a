"""`--max-cost` request by request: the run-wide gate every live request passes before it is sent.

    gate = SpendGate(max_cost_usd=0.05)      # in the run's process, inside its `LimiterCore`
    if gate.reserve():                       # before a request goes: False once the budget is spent
        ...                                  # the request
        gate.settle(0.0042)                  # its price once answered (0.0 when it failed unanswered)

A request is admitted while what the run spent, plus an estimate for each request admitted and not yet answered
(the dearest request seen so far), stays under the budget. So the run stops sending as soon as the budget is known to
be spent, even inside a scenario that started while it lasted (`suite.budget` only decides which scenarios start).

The bound: when the last request was admitted, the spend was under the budget; everything spent after that came
from requests then in flight. So the run spends less than the budget plus one request's price per request in flight
(at most `--max-concurrency` of them), and by no more than the dearest request when every request costs the same.
"""

from __future__ import annotations

import threading

__all__ = ["SpendGate"]


class SpendGate:
    """The run's spend against its budget; thread-safe. Without a budget every request is admitted."""

    def __init__(self, max_cost_usd: float | None = None) -> None:
        self.max_cost_usd = max_cost_usd
        self.spent_usd = 0.0
        """What the answered requests cost, every process's."""
        self.in_flight = 0
        """Requests admitted and not yet settled."""
        self.dearest_usd = 0.0
        """The highest price of one request so far: the estimate reserved for each request in flight."""
        self.refused = 0
        self._lock = threading.Lock()

    @property
    def budgeted(self) -> bool:
        return self.max_cost_usd is not None

    def reserve(self) -> bool:
        """Admit one request (settle it later), or refuse it: the budget is spent, or will be by those in flight."""
        with self._lock:
            if self.max_cost_usd is not None and (
                self.spent_usd + self.in_flight * self.dearest_usd >= self.max_cost_usd
            ):
                self.refused += 1
                return False
            self.in_flight += 1
            return True

    def settle(self, usd: float) -> None:
        """An admitted request is over: what it cost (0.0 unanswered, or its worker gone)."""
        with self._lock:
            self.in_flight = max(0, self.in_flight - 1)
            self.spent_usd += usd
            self.dearest_usd = max(self.dearest_usd, usd)
