"""Optional integrations: the UI adapters (Vercel AI, AG-UI) and pydantic-ai-harness.

Evidence boundary: these are import checks plus the published dependency metadata of the installed core, not
integration with sessions, authorization or streaming. Each import check is skipped, with the reason, when its
extra is not installed (the nox sessions install them all: `pins()`); the metadata checks always run.
"""

from __future__ import annotations

import importlib
import importlib.util
from importlib.metadata import PackageNotFoundError, requires, version

import pytest

from agentrig.runtime.models import pydantic_ai_compat


def needs(*modules: str) -> None:
    """Skip the calling test unless every module is importable (an optional extra is installed)."""
    missing = [module for module in modules if importlib.util.find_spec(module) is None]
    if missing:
        pytest.skip(f"optional extra not installed: {', '.join(missing)}")


def extra_requirements(extra: str) -> list[str]:
    """The requirements the installed pydantic-ai-slim declares for one extra, without the marker."""
    declared = requires("pydantic_ai_slim") or []
    return sorted(
        requirement.split(";")[0].replace(" ", "")
        for requirement in declared
        if f"extra == '{extra}'" in requirement or f'extra == "{extra}"' in requirement
    )


# What each pinned version's wheel declares for the ag-ui extra: 2.59 and 2.60 cap ag-ui-protocol below 1.0,
# 2.38, 2.40 and 2.68 do not (read from the installed metadata of each).
AG_UI_PROTOCOL_REQUIREMENT = {
    (2, 38, 0): "ag-ui-protocol>=0.1.10",
    (2, 40, 0): "ag-ui-protocol>=0.1.10",
    (2, 59, 0): "ag-ui-protocol<1,>=0.1.10",
    (2, 60, 0): "ag-ui-protocol<1,>=0.1.10",
    (2, 68, 0): "ag-ui-protocol>=0.1.10",
}


def test_ui_extras_are_declared_with_the_documented_requirements() -> None:
    assert extra_requirements("ui") == ["starlette>=0.46.2"]
    ag_ui = extra_requirements("ag-ui")
    assert "starlette>=0.46.2" in ag_ui
    (protocol,) = [requirement for requirement in ag_ui if requirement.startswith("ag-ui-protocol")]
    assert ">=0.1.10" in protocol  # the floor the contract documents, on every version
    expected = AG_UI_PROTOCOL_REQUIREMENT.get(pydantic_ai_compat.PYDANTIC_AI_VERSION)
    if expected is not None:  # a pinned version: its exact declaration
        assert protocol == expected


def test_vercel_ai_adapter_imports() -> None:
    needs("starlette")
    module = importlib.import_module("pydantic_ai.ui.vercel_ai")
    assert "VercelAIAdapter" in vars(module)


def test_ag_ui_adapter_and_event_stream_import() -> None:
    needs("starlette", "ag_ui")
    module = importlib.import_module("pydantic_ai.ui.ag_ui")
    assert {"AGUIAdapter", "AGUIEventStream"} <= set(vars(module))
    adapter = vars(module)["AGUIAdapter"]
    assert callable(getattr(adapter, "build_run_input", None))


def test_harness_imports_on_the_installed_core() -> None:
    needs("pydantic_ai_harness")
    try:
        harness_version = version("pydantic-ai-harness")
    except PackageNotFoundError:  # pragma: no cover - find_spec found the module, so the dist is there
        pytest.fail("pydantic_ai_harness is importable but has no distribution metadata")
    harness = importlib.import_module("pydantic_ai_harness")
    # The contract names these three; no behaviour-equivalence claim is made. The package exports them
    # lazily (a module __getattr__), so each is resolved, which imports its submodule against this core.
    context = f"pydantic-ai-harness {harness_version} on pydantic-ai {pydantic_ai_compat.PYDANTIC_AI_VERSION_TEXT}"
    for name in ("SummarizingCompaction", "Memory", "StepPersistence"):
        assert name in harness.__all__, f"{context} does not export {name}"
        assert isinstance(getattr(harness, name), type), f"{context}: {name} is not a class"
