"""The plugin's provider options (`--agentrig-max-concurrency`, `--agentrig-rpm`, ...): `agentrig run`'s flags under
the plugin's prefix, and one limiter for the whole session, pytest-xdist workers included.

pytest runs a process's items one after another, so a session's requests in flight are bounded across its xdist
workers: the controller serves the limiter (`models.limiter_service`) and hands its address to each worker
(`pytest_configure_node`, pytest-xdist's hook), as `agentrig run -j N` does for its workers. Standard library and
pytest only at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from agentrig.runtime.models.limiter_service import LimiterAddress, LimiterService
    from agentrig.runtime.models.provider_options import ProviderOptions

__all__ = [
    "XdistLimiter",
    "add_provider_options",
    "plugin_names",
    "provider_options",
    "turn_timeout",
    "worker_limiter_address",
]

# option name -> (type, metavar, help): the `agentrig run` flag of the same name, see docs/providers.md
_OPTIONS: dict[str, tuple[type, str, str]] = {
    "max-concurrency": (int, "N", "Requests in flight per provider, across -n workers (default 8)."),
    "adaptive-concurrency": (int, "MAX", "Grow the bound up to MAX while the provider keeps up; halve it on 429."),
    "rpm": (float, "N", "Requests per minute per provider, spaced evenly, across -n workers."),
    "tpm": (int, "N", "Tokens per minute per provider, across -n workers."),
    "max-attempts": (int, "N", "Attempts per request on a 429, 5xx, lost connection or no answer (default 3)."),
    "max-retry-wait": (float, "SECONDS", "Longest wait between two attempts, Retry-After included (default 60)."),
    "retry-budget": (int, "N", "Retries the whole session may make, across -n workers."),
    "request-timeout": (float, "SECONDS", "How long one request may go unanswered (default 120)."),
    "timeout": (float, "SECONDS", "Seconds per turn for scenarios whose settings.timeout says nothing."),
}
_WORKER_INPUT = "agentrig_limiter"


def add_provider_options(group: Any) -> None:
    """Add `--agentrig-<flag>` for each provider flag of `agentrig run`."""
    for name, (kind, metavar, help_text) in _OPTIONS.items():
        group.addoption(f"--agentrig-{name}", type=kind, metavar=metavar, help=help_text)


def _option(config: pytest.Config, name: str) -> Any:
    return config.getoption(f"agentrig_{name.replace('-', '_')}")


def provider_options(config: pytest.Config) -> ProviderOptions:
    """The session's options, checked: a bad value is a usage error naming the plugin's option."""
    from agentrig.errors import UsageError
    from agentrig.runtime.models.provider_options import (
        DEFAULT_MAX_CONCURRENCY,
        ProviderOptions,
        check_provider_options,
    )

    concurrency = _option(config, "max-concurrency")
    options = ProviderOptions(
        max_concurrency=DEFAULT_MAX_CONCURRENCY if concurrency is None else concurrency,
        adaptive_max=_option(config, "adaptive-concurrency"),
        rpm=_option(config, "rpm"),
        tpm=_option(config, "tpm"),
        max_attempts=_option(config, "max-attempts"),
        max_retry_wait_s=_option(config, "max-retry-wait"),
        retry_budget=_option(config, "retry-budget"),
        request_timeout_s=_option(config, "request-timeout"),
        flag_prefix="--agentrig-",
    )
    try:
        check_provider_options(options)
    except UsageError as error:
        raise pytest.UsageError(plugin_names(error.message)) from None
    return options


def plugin_names(message: str) -> str:
    """A message naming `agentrig run`'s provider flags, in the plugin's option names."""
    for name in _OPTIONS:
        message = message.replace(f"--{name}", f"--agentrig-{name}")
    return message


def turn_timeout(config: pytest.Config) -> float | None:
    """`--agentrig-timeout`, checked."""
    from agentrig.errors import UsageError
    from agentrig.runtime.models.provider_options import check_positive_seconds

    value: float | None = _option(config, "timeout")
    try:
        check_positive_seconds(value, "--timeout")
    except UsageError as error:
        raise pytest.UsageError(plugin_names(error.message)) from None
    return value


def worker_limiter_address(config: pytest.Config) -> LimiterAddress | None:
    """In a pytest-xdist worker of a session that talks to a provider: where the controller's limiter listens."""
    given = getattr(config, "workerinput", {}).get(_WORKER_INPUT)
    if given is None:
        return None
    from agentrig.runtime.models.limiter_service import LimiterAddress

    address, key = given
    return LimiterAddress(address, bytes.fromhex(key))


class XdistLimiter:
    """On the controller of an xdist session against a real model: serves the session's limiter to the workers."""

    def __init__(self, options: ProviderOptions) -> None:
        from agentrig.runtime.models.limiter import LimiterCore
        from agentrig.runtime.models.limiter_service import LimiterService

        self.service: LimiterService = LimiterService(LimiterCore(options))

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        address = self.service.address
        node.workerinput[_WORKER_INPUT] = (address.address, address.authkey.hex())

    def pytest_unconfigure(self) -> None:
        self.service.close()
