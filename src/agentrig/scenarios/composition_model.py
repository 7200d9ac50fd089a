"""What a scenario composes into every run of its agent: the optional extras it may require (`Scenario.requires`,
`Scenario.capabilities` and `Scenario.history_processors` are in `model.py`)."""

from __future__ import annotations

from typing import Literal

__all__ = ["EXTRAS", "Extra"]


Extra = Literal["ag-ui", "vercel-ai", "harness"]

EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "ag-ui": (("ag_ui", "starlette"), "pip install 'pydantic-ai-slim[ag-ui]'"),
    "vercel-ai": (("starlette",), "pip install 'pydantic-ai-slim[ui]'"),
    "harness": (("pydantic_ai_harness",), "pip install pydantic-ai-harness"),
}
"""Each optional extra: the modules that must be importable, and how to install them."""
