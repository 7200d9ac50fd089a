"""A scenario's own provider settings (`settings.provider`): how its requests to a real model are retried and how long
each may go unanswered. They apply only against a real model (`--model`); a scripted run sends no request."""

from __future__ import annotations

from pydantic import Field

from agentrig.scenarios._strict import Strict

__all__ = ["ProviderSettings"]


class ProviderSettings(Strict):
    """Requests to a real model for this scenario; each field, when given, wins over the flag of `agentrig run`."""

    max_attempts: int | None = Field(default=None, ge=1)
    """Attempts per request, the first included (1: no retry); default `--max-attempts`, else 3."""
    max_retry_wait: float | None = Field(default=None, ge=0)
    """Longest wait in seconds between two attempts, a provider's `Retry-After` included; default `--max-retry-wait`,
    else 60."""
    request_timeout: float | None = Field(default=None, gt=0)
    """Seconds one request may go unanswered before it counts as failed (and is retried); default
    `--request-timeout`, else 120."""
