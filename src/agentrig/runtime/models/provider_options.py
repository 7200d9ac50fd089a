"""What a run asks of the provider layer: requests in flight, requests and tokens per minute, retries, timeouts.

Standard library only: the CLI, the pytest plugin and the suite build and check a `ProviderOptions` before anything
heavy is imported, and it travels to `-j N` workers by pickle. The provider layer reads it: `providers.build_model`
(the request timeout, the retry policy), `limiter` (concurrency, `--rpm`, `--tpm`, the retry budget).

    options = ProviderOptions(max_concurrency=16, rpm=120, max_attempts=5)
    check_provider_options(options)           # a UsageError naming the flag, before anything runs
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agentrig.errors import UsageError

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_REQUEST_TIMEOUT_S",
    "ProviderOptions",
    "RetryPolicy",
    "check_positive_seconds",
    "check_provider_options",
    "provider_modules",
]

DEFAULT_MAX_CONCURRENCY = 8
"""Requests in flight per provider when `--max-concurrency` is not given (inspect_ai's default is 10)."""

DEFAULT_REQUEST_TIMEOUT_S = 120.0
"""Seconds one request to a real model may go unanswered (`--request-timeout`). The SDKs wait 600 s, and a hung
request then held a scenario for half an hour over three attempts; two minutes covers a long non-streamed answer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How a model request that failed transiently (429, 5xx, no connection, no answer) is retried."""

    max_attempts: int = 3
    """Attempts in total, the first included (`--max-attempts`, `settings.provider.max_attempts`)."""
    base_delay_s: float = 0.5
    """Wait before the second attempt when the provider asked for none; doubled for each later one."""
    max_delay_s: float = 20.0
    """Upper bound of one computed (exponential) wait."""
    max_wait_s: float = 60.0
    """Upper bound of any one wait, `Retry-After` included (`--max-retry-wait`, `settings.provider.max_retry_wait`):
    a provider asking for 10 minutes gets this."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderOptions:
    """The provider layer's settings for one run (flags of `run`, `prompt`, `matrix` and the pytest plugin)."""

    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    """Requests in flight per provider, across every worker of the run (`--max-concurrency`)."""
    adaptive_max: int | None = None
    """`--adaptive-concurrency MAX`: the bound starts at `max_concurrency`, grows by one while the provider keeps up
    (a bound's worth of answers without a 429), up to MAX, and halves on every 429."""
    rpm: float | None = None
    """Requests per minute per provider, spaced evenly (`--rpm`); None: no limit."""
    tpm: int | None = None
    """Tokens (input and output) per minute per provider (`--tpm`); None: no limit."""
    max_attempts: int | None = None
    """Attempts per request (`--max-attempts`); None: the scenario's `settings.provider`, else 3."""
    max_retry_wait_s: float | None = None
    """Longest wait between two attempts (`--max-retry-wait`); None: the scenario's, else 60 s."""
    retry_budget: int | None = None
    """Retries the whole run may make, across workers (`--retry-budget`); None: no budget."""
    request_timeout_s: float | None = None
    """Seconds a request may go unanswered (`--request-timeout`); None: the scenario's, else 120 s."""
    flag_prefix: str = "--"
    """How the front end's flags begin, for messages that name one (`--agentrig-` in the pytest plugin)."""

    @property
    def scenario_width(self) -> int:
        """How many provider-bound scenarios a process runs at once: as many as requests may be in flight (a
        scenario between two requests runs its tools meanwhile; one waiting for a slot costs nothing)."""
        return max(self.max_concurrency, self.adaptive_max or 0)


def check_positive_seconds(value: float | None, flag: str) -> None:
    """A `UsageError` naming `flag` unless `value` is None or a finite number of seconds above 0."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise UsageError(f"{flag} must be a number of seconds above 0, got {value:g}")


def check_provider_options(options: ProviderOptions) -> None:
    """A `UsageError` naming the flag for a value that cannot work: `--rpm 0`, `--max-concurrency 0`, a negative
    budget, an adaptive ceiling below the starting bound."""
    if options.max_concurrency < 1:
        raise UsageError(f"--max-concurrency must be at least 1 request in flight, got {options.max_concurrency}")
    if options.adaptive_max is not None and options.adaptive_max < options.max_concurrency:
        raise UsageError(
            f"--adaptive-concurrency {options.adaptive_max} must be at least --max-concurrency "
            f"{options.max_concurrency}: the bound grows from --max-concurrency up to it"
        )
    if options.rpm is not None and not (math.isfinite(options.rpm) and options.rpm > 0):
        raise UsageError(f"--rpm must be a number of requests per minute above 0, got {options.rpm:g}")
    if options.tpm is not None and options.tpm < 1:
        raise UsageError(f"--tpm must be at least 1 token per minute, got {options.tpm}")
    if options.max_attempts is not None and options.max_attempts < 1:
        raise UsageError(f"--max-attempts must be at least 1 (1: no retry), got {options.max_attempts}")
    if options.max_retry_wait_s is not None and not (
        math.isfinite(options.max_retry_wait_s) and options.max_retry_wait_s >= 0
    ):
        raise UsageError(f"--max-retry-wait must be a number of seconds, 0 or more, got {options.max_retry_wait_s:g}")
    if options.retry_budget is not None and options.retry_budget < 0:
        raise UsageError(f"--retry-budget must be 0 or more retries, got {options.retry_budget}")
    check_positive_seconds(options.request_timeout_s, "--request-timeout")


_PROVIDER_MODULES = {
    "openai": ("openai", "pydantic_ai.providers.openai", "pydantic_ai.models.openai"),
    "anthropic": ("anthropic", "pydantic_ai.providers.anthropic", "pydantic_ai.models.anthropic"),
}
_OPENAI_KINDS = frozenset({"openai", "openai-chat", "openai-responses"})


def provider_modules(model: str | None) -> tuple[str, ...]:
    """The modules a run of `model` imports to talk to its provider (the SDK and pydantic-ai's model for it), for
    the `-j N` workers' forkserver to import once: a worker forked from it starts with the client imported."""
    if model is None:
        return ()
    kind = model.partition(":")[0]
    family = "openai" if kind in _OPENAI_KINDS else kind
    known = _PROVIDER_MODULES.get(family, ())
    return ("agentrig.runtime.models.providers", *known)
