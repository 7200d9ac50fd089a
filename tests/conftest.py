"""Test-wide settings: no banner, and no real model request can leave the machine by accident."""

from __future__ import annotations

import os

import pytest

from agentrig.runtime.history.redaction import refresh_secrets

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")


@pytest.fixture(autouse=True)
def fresh_secret_values() -> None:
    """Redaction reads the environment's key values once per run; a test that sets a key variable with
    `monkeypatch.setenv` must not see the values an earlier test left cached."""
    refresh_secrets()
