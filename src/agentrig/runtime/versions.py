"""The pinned pydantic-ai versions, packaged with agentrig (an installed agentrig has no pyproject.toml to read).

The source of truth is `[tool.agentrig] pydantic-ai-versions` in pyproject.toml; tests/test_version_pins.py fails
when this copy drifts from it. `agentrig matrix` uses the list as its default `--versions`.
"""

from __future__ import annotations

__all__ = ["PYDANTIC_AI_VERSIONS", "SUPPORTED_FLOOR"]

PYDANTIC_AI_VERSIONS: tuple[str, ...] = ("2.38.0", "2.40.0", "2.59.0", "2.60.0", "2.68.0", "2.78.0")
"""Oldest first: the supported floor, ..., the newest release the suite was proven on."""

SUPPORTED_FLOOR: str = PYDANTIC_AI_VERSIONS[0]
"""The oldest pydantic-ai agentrig supports (the floor of its dependency on pydantic-ai-slim)."""
