"""How a scenario's requests went on the wire: attempts, retries and waits (`usage.json` and `report.json`'s
`attempts`, docs/providers.md). Framework-free, like the rest of the canonical layer.

A scripted or replayed scenario sends nothing to a provider and has none (`attempts: null`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentrig.errors import HistoryFormatError

__all__ = ["ProviderAttempts"]

_COUNTS = ("requests", "attempts", "retries")
_SECONDS = ("retry_wait_s", "queue_wait_s")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderAttempts:
    """One scenario's (or one prompt's) requests to a real provider, as the provider layer made them."""

    requests: int = 0
    """Model requests (each answered once, or failed for good)."""
    attempts: int = 0
    """HTTP requests sent for them: the first try of each, and every retry."""
    retries: int = 0
    """Attempts that were retries (`attempts - requests` unless a request was given up before it was sent)."""
    retry_wait_s: float = 0.0
    """Seconds slept between a failed attempt and the next (the provider's `Retry-After`, or backoff)."""
    queue_wait_s: float = 0.0
    """Seconds the requests waited for the run-wide limiter: a slot (`--max-concurrency`), their turn under `--rpm`
    or `--tpm`, or the pause that follows a 429."""
    failed: dict[str, int] = field(default_factory=dict[str, int])
    """Failed attempts by cause: the HTTP status (`"429"`, `"503"`), `"connection"` or `"timeout"` (no answer)."""

    def __add__(self, other: ProviderAttempts) -> ProviderAttempts:
        failed = dict(self.failed)
        for cause, count in other.failed.items():
            failed[cause] = failed.get(cause, 0) + count
        return ProviderAttempts(
            requests=self.requests + other.requests,
            attempts=self.attempts + other.attempts,
            retries=self.retries + other.retries,
            retry_wait_s=round(self.retry_wait_s + other.retry_wait_s, 3),
            queue_wait_s=round(self.queue_wait_s + other.queue_wait_s, 3),
            failed=dict(sorted(failed.items())),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "attempts": self.attempts,
            "retries": self.retries,
            "retry_wait_s": self.retry_wait_s,
            "queue_wait_s": self.queue_wait_s,
            "failed": dict(self.failed),
        }

    @staticmethod
    def from_json(data: Mapping[str, Any], *, where: str = "attempts") -> ProviderAttempts:
        """From stored JSON (`to_json`); a wrong value is a `HistoryFormatError` naming the field."""
        counts: dict[str, int] = {}
        for key in _COUNTS:
            value = data.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise HistoryFormatError(f"expected a non-negative integer, got {value!r}", field=f"{where}.{key}")
            counts[key] = value
        seconds: dict[str, float] = {}
        for key in _SECONDS:
            value = data.get(key, 0.0)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise HistoryFormatError(f"expected a non-negative number, got {value!r}", field=f"{where}.{key}")
            seconds[key] = float(value)
        failed = data.get("failed", {})
        if not isinstance(failed, Mapping) or not all(
            isinstance(count, int) and not isinstance(count, bool) and count >= 0 for count in failed.values()
        ):
            raise HistoryFormatError("expected an object of non-negative counts", field=f"{where}.failed")
        return ProviderAttempts(
            requests=counts["requests"],
            attempts=counts["attempts"],
            retries=counts["retries"],
            retry_wait_s=seconds["retry_wait_s"],
            queue_wait_s=seconds["queue_wait_s"],
            failed={str(cause): int(count) for cause, count in failed.items()},
        )
