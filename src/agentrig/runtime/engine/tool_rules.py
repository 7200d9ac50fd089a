"""The canned outcomes of YAML tools, shared by both engines: which `results` rule answers a call.

The rules are tried in order; the first whose `when` is a subset of the arguments and whose `call` matches
the call's 1-based ordinal (counted per tool over the whole scenario) is used. No framework is imported here.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentrig.scenarios.model import ToolResult, ToolSpec

__all__ = ["ToolCallCounts", "can_defer", "describe_args", "matching_result"]


@dataclass(slots=True, kw_only=True)
class ToolCallCounts:
    """How many times each YAML tool has been called in the scenario (the run's `deps`)."""

    counts: Counter[str] = field(default_factory=Counter[str])
    """Calls so far, by tool name."""

    def next_ordinal(self, tool_name: str) -> int:
        """Count one more call of `tool_name` and return its 1-based ordinal."""
        self.counts[tool_name] += 1
        return self.counts[tool_name]


def can_defer(tools: Mapping[str, ToolSpec]) -> bool:
    """Whether any tool may defer a call (the agent then needs `DeferredToolRequests` among its output types)."""
    return any(result.defer for spec in tools.values() for result in spec.results)


def _is_subset(expected: Mapping[str, Any], args: Mapping[str, Any]) -> bool:
    return all(key in args and args[key] == value for key, value in expected.items())


def matching_result(spec: ToolSpec, args: Mapping[str, Any], ordinal: int) -> ToolResult | None:
    """The first rule of `spec` that matches a call with these args and this ordinal."""
    for result in spec.results:
        if result.call is not None and result.call != ordinal:
            continue
        if result.when is not None and not _is_subset(result.when, args):
            continue
        return result
    return None


def describe_args(args: Mapping[str, Any]) -> str:
    text = json.dumps(dict(args), sort_keys=True, default=str)
    return text if len(text) <= 200 else text[:197] + "..."
