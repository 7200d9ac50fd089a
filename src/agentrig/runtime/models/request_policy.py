"""The retry policy and request timeout one scenario's requests get: its `settings.provider`, else the run's flags,
else the defaults. The scenario runner opens the scenario's settings around it (`using_scenario_settings`); the
retrying model resolves the policy for every request (`request_policy`), so scenarios sharing one model and one event
loop each get their own. Framework-free."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

from agentrig.runtime.models.provider_options import DEFAULT_REQUEST_TIMEOUT_S, ProviderOptions, RetryPolicy
from agentrig.scenarios.provider_settings import ProviderSettings

__all__ = ["RequestPolicy", "current_scenario_settings", "request_policy", "using_scenario_settings"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestPolicy:
    """How each request is retried, and how long one attempt may wait for its answer."""

    retry: RetryPolicy
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S
    timeout_source: str = "--request-timeout"
    """What set the request timeout, for messages: the flag, or `settings.provider.request_timeout`."""


def request_policy(
    options: ProviderOptions, scenario: ProviderSettings | None = None, *, base: RetryPolicy | None = None
) -> RequestPolicy:
    """The policy of a scenario with provider settings `scenario` in a run with `options` (`base`: the backoff
    constants, `RetryPolicy()` unless a test makes them shorter)."""
    retry = base or RetryPolicy()
    own = scenario or ProviderSettings()
    attempts = own.max_attempts or options.max_attempts
    if attempts is not None:
        retry = replace(retry, max_attempts=attempts)
    longest = own.max_retry_wait if own.max_retry_wait is not None else options.max_retry_wait_s
    if longest is not None:
        retry = replace(retry, max_wait_s=longest, max_delay_s=min(retry.max_delay_s, longest))
    if own.request_timeout is not None:
        return RequestPolicy(
            retry=retry, request_timeout_s=own.request_timeout, timeout_source="settings.provider.request_timeout"
        )
    return RequestPolicy(
        retry=retry,
        request_timeout_s=options.request_timeout_s or DEFAULT_REQUEST_TIMEOUT_S,
        timeout_source=f"{options.flag_prefix}request-timeout",
    )


_scenario: ContextVar[ProviderSettings | None] = ContextVar("agentrig_scenario_provider_settings", default=None)


def current_scenario_settings() -> ProviderSettings | None:
    """The `settings.provider` of the scenario running in this context, if it has any."""
    return _scenario.get()


@contextmanager
def using_scenario_settings(settings: ProviderSettings | None) -> Generator[None]:
    """Requests made in this context (and the tasks it starts) follow `settings` where it says anything."""
    token = _scenario.set(settings)
    try:
        yield
    finally:
        _scenario.reset(token)
