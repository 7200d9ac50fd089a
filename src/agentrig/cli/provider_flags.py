"""The provider layer's flags, declared once for `run`, `prompt` and `matrix` (docs/providers.md).

Each is an `Annotated` type a command puts in its signature; `provider_options` turns the values into the runtime's
`ProviderOptions` and `as_arguments` back into `agentrig run` arguments (what `matrix` passes on). Values are checked
by `models.provider_options.check_provider_options`, one line naming the flag, not by click's ranges (three lines).
Standard library and typer only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from agentrig.runtime.models.provider_options import ProviderOptions

__all__ = [
    "AdaptiveConcurrency",
    "MaxAttempts",
    "MaxConcurrency",
    "MaxRetryWait",
    "RequestTimeout",
    "RetryBudget",
    "Rpm",
    "Tpm",
    "TurnTimeout",
    "as_arguments",
    "provider_options",
]

MaxConcurrency = Annotated[
    int,
    typer.Option(
        "--max-concurrency",
        metavar="N",
        help="Requests in flight per provider, across every -j worker (scenarios run side by side, N at a time in "
        "each process). Real models only.",
    ),
]
AdaptiveConcurrency = Annotated[
    int | None,
    typer.Option(
        "--adaptive-concurrency",
        metavar="MAX",
        help="Grow the bound from --max-concurrency up to MAX while the provider keeps up; halve it on every 429.",
        show_default=False,
    ),
]
Rpm = Annotated[
    float | None,
    typer.Option(
        "--rpm",
        metavar="N",
        help="Requests per minute per provider, spaced evenly, across workers.",
        show_default=False,
    ),
]
Tpm = Annotated[
    int | None,
    typer.Option(
        "--tpm",
        metavar="N",
        help="Tokens (input + output) per minute per provider, across workers.",
        show_default=False,
    ),
]
MaxAttempts = Annotated[
    int | None,
    typer.Option(
        "--max-attempts",
        metavar="N",
        help="Attempts per request on a 429, 5xx, lost connection or no answer (1: no retry). [default: 3, or the "
        "scenario's settings.provider]",
        show_default=False,
    ),
]
MaxRetryWait = Annotated[
    float | None,
    typer.Option(
        "--max-retry-wait",
        metavar="SECONDS",
        help="Longest wait between two attempts, Retry-After included. [default: 60]",
        show_default=False,
    ),
]
RetryBudget = Annotated[
    int | None,
    typer.Option(
        "--retry-budget",
        metavar="N",
        help="Retries the whole run may make, across workers; past it a failure is final. [default: no budget]",
        show_default=False,
    ),
]
RequestTimeout = Annotated[
    float | None,
    typer.Option(
        "--request-timeout",
        metavar="SECONDS",
        help="How long one request may go unanswered before it counts as failed (and is retried). [default: 120]",
        show_default=False,
    ),
]
TurnTimeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        help="Seconds per turn for scenarios whose settings.timeout says nothing; the scenario is bounded by a "
        "timeout per turn and one more.",
        show_default=False,
    ),
]


def provider_options(
    *,
    max_concurrency: int | None = None,
    adaptive_concurrency: int | None = None,
    rpm: float | None = None,
    tpm: int | None = None,
    max_attempts: int | None = None,
    max_retry_wait: float | None = None,
    retry_budget: int | None = None,
    request_timeout: float | None = None,
) -> ProviderOptions:
    """The flags as `ProviderOptions`, checked (a `UsageError` naming the flag for `--rpm 0` and the like)."""
    from agentrig.runtime.models.provider_options import (
        DEFAULT_MAX_CONCURRENCY,
        ProviderOptions,
        check_provider_options,
    )

    options = ProviderOptions(
        max_concurrency=DEFAULT_MAX_CONCURRENCY if max_concurrency is None else max_concurrency,
        adaptive_max=adaptive_concurrency,
        rpm=rpm,
        tpm=tpm,
        max_attempts=max_attempts,
        max_retry_wait_s=max_retry_wait,
        retry_budget=retry_budget,
        request_timeout_s=request_timeout,
    )
    check_provider_options(options)
    return options


def as_arguments(options: ProviderOptions, *, timeout: float | None = None) -> tuple[str, ...]:
    """`agentrig run` arguments that give a run these options (what was not given stays unsaid)."""
    from agentrig.runtime.models.provider_options import DEFAULT_MAX_CONCURRENCY

    pairs: list[tuple[str, object | None]] = [
        ("--max-concurrency", None if options.max_concurrency == DEFAULT_MAX_CONCURRENCY else options.max_concurrency),
        ("--adaptive-concurrency", options.adaptive_max),
        ("--rpm", options.rpm),
        ("--tpm", options.tpm),
        ("--max-attempts", options.max_attempts),
        ("--max-retry-wait", options.max_retry_wait_s),
        ("--retry-budget", options.retry_budget),
        ("--request-timeout", options.request_timeout_s),
        ("--timeout", timeout),
    ]
    arguments: list[str] = []
    for flag, value in pairs:
        if value is not None:
            arguments += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return tuple(arguments)
