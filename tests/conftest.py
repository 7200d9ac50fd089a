"""Test-wide settings: no banner, no real model request can leave the machine by accident, Hypothesis without
deadlines (on a shared 2-core machine an example's time says nothing about the code), and Ctrl-C as a terminal has it.

pydantic-ai's `ALLOW_MODEL_REQUESTS` guard is off for every test: a real provider model refuses to send a
request. Tests that talk to a real (loopback) provider opt out explicitly, with
`override_allow_model_requests(True)` (tests/providers/conftest.py does it for all of its tests).
"""

from __future__ import annotations

import os
import signal

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")  # before pydantic-ai is imported

# A shell without job control starts a background job (`pytest ... &` in a script) with SIGINT ignored, and every
# process it starts inherits that: the tests' real Ctrl-Cs to `agentrig` would then do nothing and the tests wait.
# The processes the tests start get SIGINT as from a terminal (a handled signal is reset at exec; an ignored one
# is not).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import pydantic_ai.models
import pytest
from hypothesis import settings

from agentrig.runtime.history.redaction import refresh_secrets

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
settings.register_profile("agentrig", deadline=None)
settings.load_profile("agentrig")


@pytest.fixture(autouse=True)
def fresh_secret_values() -> None:
    """Redaction reads the environment's key values once per run; a test that sets a key variable with
    `monkeypatch.setenv` must not see the values an earlier test left cached."""
    refresh_secrets()
