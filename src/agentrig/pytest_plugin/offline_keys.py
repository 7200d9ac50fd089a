"""`agentrig_placeholder_keys = true`: a session's test modules import the way agentrig imports an agent module
for a scripted run, with placeholder provider keys.

Most agent modules name their model at import (`Agent("openai:gpt-5")`), and pydantic-ai builds the provider
right there, which fails without the provider's API key: a test module doing
`from pydantic_ai_examples.bank_support import support_agent` cannot even be collected on a machine without one,
though no test of it sends a request (`TestModel`, a scripted scenario). With the ini option, every provider key
variable that is unset (`deps.PROVIDER_KEY_VARIABLES`) holds a placeholder from the first hook that sees the ini
(before the project's conftest.py files are imported) until collection ends; then the placeholders are removed,
and a client built meanwhile keeps its placeholder, which no provider accepts. A key that is set is never touched,
and with `--agentrig-model` (a real model) nothing is done.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import pytest

__all__ = ["INI_NAME", "lift_placeholder_keys", "set_placeholder_keys"]

INI_NAME = "agentrig_placeholder_keys"

_HELD = pytest.StashKey[AbstractContextManager[None]]()


def set_placeholder_keys(config: pytest.Config) -> None:
    """Set the placeholders when the ini asks for them (and no real model is given)."""
    if not config.getini(INI_NAME) or getattr(config.known_args_namespace, "agentrig_model", None):
        return
    from agentrig.runtime.engine.pydantic_ai_engine.deps import offline_import

    held = offline_import()
    held.__enter__()
    config.stash[_HELD] = held


def lift_placeholder_keys(config: pytest.Config) -> None:
    """Remove the placeholders (those still holding their placeholder value)."""
    held = config.stash.get(_HELD, None)
    if held is not None:
        del config.stash[_HELD]
        held.__exit__(None, None, None)
