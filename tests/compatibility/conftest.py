"""The compatibility cases run offline: only FunctionModel answers, real providers are refused."""

from __future__ import annotations

import pydantic_ai.models
import pytest

from agentrig.runtime.models import pydantic_ai_compat


def pytest_report_header() -> str:
    """Name the pydantic-ai version under test in the session header (the cases run on every pinned one)."""
    return (
        f"pydantic-ai {pydantic_ai_compat.PYDANTIC_AI_VERSION_TEXT} "
        f"(retry shape: {pydantic_ai_compat.RETRY_SHAPE}, public repair_messages: "
        f"{pydantic_ai_compat.HAS_PUBLIC_REPAIR_MESSAGES})"
    )


@pytest.fixture(autouse=True)
def no_provider_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real model request fails the test instead of leaving the machine."""
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", False)
