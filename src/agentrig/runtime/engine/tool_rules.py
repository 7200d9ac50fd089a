"""The canned outcomes of YAML tools, shared by both engines: which `results` rule answers a call.

The rules are tried in order; the first whose `when` is a subset of the arguments and whose `call` matches
the call's 1-based ordinal (counted per tool over the whole scenario) is used. No framework is imported here.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentrig.scenarios.model import OutputValidatorRule, ToolResult, ToolSpec

__all__ = ["ToolCallCounts", "can_defer", "describe_args", "json_contains", "matching_output_rule", "matching_result"]


@dataclass(slots=True, kw_only=True)
class ToolCallCounts:
    """How many times each YAML tool has been called in the scenario (the run's `deps`)."""

    counts: Counter[str] = field(default_factory=Counter[str])
    """Calls so far, by tool name."""
    output_validations: int = 0
    """Outputs the output validator has judged so far (`output.validators` rules match by this ordinal)."""
    asked_approval: dict[str, int] = field(default_factory=dict[str, int])
    """Calls that asked the host for approval (`ask_approval`), by tool_call_id: their ordinal, which the approved
    call keeps when the resumed run calls the tool again."""

    def next_ordinal(self, tool_name: str, tool_call_id: str | None = None) -> int:
        """Count one more call of `tool_name` and return its 1-based ordinal; a call approved after it asked keeps
        the ordinal it had."""
        if tool_call_id is not None and tool_call_id in self.asked_approval:
            return self.asked_approval.pop(tool_call_id)
        self.counts[tool_name] += 1
        return self.counts[tool_name]

    def next_output_validation(self) -> int:
        """Count one more output judged by the output validator and return its 1-based ordinal."""
        self.output_validations += 1
        return self.output_validations


def can_defer(tools: Mapping[str, ToolSpec]) -> bool:
    """Whether any tool may defer a call or ask for approval (the agent then needs `DeferredToolRequests` among its
    output types)."""
    return any(result.defer or result.ask_approval for spec in tools.values() for result in spec.results)


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


def json_contains(expected: Any, actual: Any) -> bool:
    """A mapping: every key of `expected` is in `actual` with a value it contains, recursively; a list: the same
    length, element by element; anything else: equal, as JSON compares (`true` is not `1`)."""
    if isinstance(expected, Mapping):
        wanted: Mapping[str, Any] = expected
        return isinstance(actual, Mapping) and all(
            key in actual and json_contains(value, actual[key]) for key, value in wanted.items()
        )
    if isinstance(expected, list):
        items: list[Any] = expected
        return (
            isinstance(actual, list)
            and len(actual) == len(items)  # pyright: ignore[reportUnknownArgumentType]
            and all(json_contains(e, a) for e, a in zip(items, actual, strict=True))  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        )
    return expected == actual and isinstance(expected, bool) == isinstance(actual, bool)


def matching_output_rule(
    rules: Sequence[OutputValidatorRule], value: Any, text: str, ordinal: int
) -> OutputValidatorRule | None:
    """The first output-validator rule that matches an output (its JSON `value`, its `text`, its ordinal)."""
    for rule in rules:
        if rule.call is not None and rule.call != ordinal:
            continue
        if "when" in rule.model_fields_set and not json_contains(rule.when, value):
            continue
        if rule.contains is not None and rule.contains not in text:
            continue
        return rule
    return None


def describe_args(args: Mapping[str, Any]) -> str:
    text = json.dumps(dict(args), sort_keys=True, default=str)
    return text if len(text) <= 200 else text[:197] + "..."
