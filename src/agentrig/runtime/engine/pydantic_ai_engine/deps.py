"""The agent's deps for one scenario, and loading agents offline.

Deps: a scenario (or `agentrig run --deps`) names `module:attribute` of a zero-argument callable. It may be
sync or async; what it returns is the deps, unless it is a (sync or async) context manager, which is entered
and whose value is the deps. Its exit runs when the scenario ends, so a database connection or an
`httpx.AsyncClient` with a mock transport lives exactly as long as the scenario.

Offline loading: most agents name their model at import (`Agent("openai:gpt-4o")`), and pydantic-ai builds
the provider right there, which fails without the provider's API key. In a scripted run the agent's model
is never used (the script replaces it, and `ALLOW_MODEL_REQUESTS` refuses any model that is not scripted),
so the import runs with placeholder keys for the providers whose key is unset. The placeholders are
removed from the environment as soon as the import is done; a client built during the import keeps its
placeholder, which no request can ever use in a scripted run.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Generator, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager, AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any

from agentrig.errors import ScenarioError
from agentrig.runtime.engine.module_loading import resolve_attribute

__all__ = ["OFFLINE_PLACEHOLDER", "PROVIDER_KEY_VARIABLES", "enter_deps", "offline_import"]

OFFLINE_PLACEHOLDER = "agentrig-offline-placeholder"
"""The value of every provider key set while an agent module is imported for a scripted run."""

PROVIDER_KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "CO_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "XAI_API_KEY",
    "CEREBRAS_API_KEY",
    "FIREWORKS_API_KEY",
    "TOGETHER_API_KEY",
    "HF_TOKEN",
    "MOONSHOTAI_API_KEY",
    "GITHUB_API_KEY",
    "HEROKU_INFERENCE_KEY",
    "NEBIUS_API_KEY",
    "OVHCLOUD_API_KEY",
    "ALIBABA_API_KEY",
    "SAMBANOVA_API_KEY",
    "PYDANTIC_AI_GATEWAY_API_KEY",
    "VERCEL_AI_GATEWAY_API_KEY",
    "AZURE_OPENAI_API_KEY",
)
"""Environment variables pydantic-ai's providers read their API key from (the ones agents commonly name)."""


@contextmanager
def offline_import(enabled: bool = True) -> Generator[None]:
    """Import agent modules with placeholder provider keys (only those unset), removed again afterwards."""
    if not enabled:
        yield
        return
    added = [name for name in PROVIDER_KEY_VARIABLES if not os.environ.get(name)]
    for name in added:
        os.environ[name] = OFFLINE_PLACEHOLDER
    try:
        yield
    finally:
        for name in added:
            if os.environ.get(name) == OFFLINE_PLACEHOLDER:
                del os.environ[name]


async def enter_deps(
    spec: str,
    stack: AsyncExitStack,
    *,
    search_paths: Sequence[Path] = (),
    scenario_path: Path | str | None = None,
    line: int | None = None,
    offline: bool = True,
) -> Any:
    """Build the deps `spec` names; a context manager is entered on `stack` (its exit runs with the stack's)."""
    field = "deps" if line is not None else "--deps"

    def fail(message: str) -> ScenarioError:
        return ScenarioError(message, path=scenario_path, line=line, field=field)  # the field is said once, by it

    with offline_import(offline):
        target = resolve_attribute(spec, search_paths=search_paths, fail=fail)
    if not callable(target):
        raise fail(f"{spec!r} is a {type(target).__name__}, not a callable returning the deps")
    try:
        value: Any = target()
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, AbstractAsyncContextManager) or hasattr(value, "__aenter__"):
            return await stack.enter_async_context(value)
        if isinstance(value, AbstractContextManager) or hasattr(value, "__enter__"):
            return stack.enter_context(value)
    except TypeError as error:
        raise fail(f"calling {spec!r} failed: {error}") from None
    except ScenarioError:
        raise
    except Exception as error:  # the user's deps builder may raise anything
        raise fail(f"building the deps with {spec!r} failed: {type(error).__name__}: {error}") from None
    return value
