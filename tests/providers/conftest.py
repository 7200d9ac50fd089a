"""Fixtures for provider tests: a loopback server, model requests allowed, retries that do not wait."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import pytest
from pydantic_ai.models import override_allow_model_requests

from agentrig.runtime.models import providers
from tests.providers.loopback import LoopbackServer, Reply

ServerFactory = Callable[..., LoopbackServer]


@pytest.fixture(autouse=True)
def allow_model_requests() -> Iterator[None]:
    """Provider tests make real HTTP requests, but only to 127.0.0.1."""
    with override_allow_model_requests(True):
        yield


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backoff in milliseconds, so retry tests never sleep long."""
    monkeypatch.setattr(providers, "DEFAULT_RETRY_POLICY", providers.RetryPolicy(base_delay_s=0.001, max_delay_s=0.01))


@pytest.fixture(autouse=True)
def no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's own keys or default model."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "AGENTRIG_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def loopback() -> Iterator[ServerFactory]:
    """Start loopback servers; each is stopped at the end of the test."""
    servers: list[LoopbackServer] = []

    def start(replies: Iterable[Reply] = (), **options: object) -> LoopbackServer:
        server = LoopbackServer(replies, **options)  # pyright: ignore[reportArgumentType]
        servers.append(server.__enter__())
        return server

    yield start
    for server in servers:
        server.close()
