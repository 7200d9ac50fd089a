"""The plugin's tests run pytest inside pytest (`pytester`, in-process). pytester removes the modules an inner
session imported when it ends; PyYAML's C parser keeps building nodes of the `yaml.nodes` it first saw, so a
second inner session with a re-imported `yaml` would build nodes of classes the new module does not know. The
modules the plugin loads are imported here, once, for every inner session to share (and pydantic-ai with them)."""

from __future__ import annotations

import yaml  # noqa: F401  # pyright: ignore[reportUnusedImport]

import agentrig.runtime.engine.pydantic_ai_engine.scenario_execution  # pyright: ignore[reportUnusedImport]
import agentrig.runtime.suite.single  # pyright: ignore[reportUnusedImport]
import agentrig.scenarios.loader  # noqa: F401  # pyright: ignore[reportUnusedImport]
