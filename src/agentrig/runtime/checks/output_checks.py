"""Checks on a structured output: its JSON, exactly or in part, and its type.

A structured (non-str) output is recorded as JSON plus its type name (`TurnRecord.output_json`,
`output_type`); a str output has no JSON of its own, so these checks parse its text. `type` matches the
recorded name exactly or by its last dotted component (`SupportOutput` matches `bank.SupportOutput`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentrig.runtime.history.canonical import JsonValue
from agentrig.runtime.history.run_records import Check, TurnRecord
from agentrig.scenarios.model import OutputExpectation

__all__ = ["check_structured_output", "is_subset", "output_document"]


def output_document(turn: TurnRecord | None) -> tuple[bool, JsonValue, str]:
    """(found, the output as JSON, why not): a structured output's JSON, or a str output parsed as JSON."""
    if turn is None or turn.output is None:
        return False, None, "the turn produced no output"
    if turn.output_json is not None:
        return True, turn.output_json, ""
    try:
        return True, json.loads(turn.output), ""
    except ValueError as error:
        return False, None, f"output is not JSON: {error}"


def is_subset(expected: Any, actual: Any) -> bool:
    """Mappings: every expected key present with a matching value; lists: same length, element by element."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return False
        actual_map: Mapping[Any, Any] = actual
        return all(key in actual_map and is_subset(value, actual_map[key]) for key, value in expected.items())
    if isinstance(expected, Sequence) and not isinstance(expected, str):
        if not isinstance(actual, Sequence) or isinstance(actual, str) or len(actual) != len(expected):
            return False
        return all(is_subset(e, a) for e, a in zip(expected, actual, strict=True))
    if _is_number(expected) and _is_number(actual):
        return expected == actual  # 2 matches 2.0, as JSON does not tell them apart
    return type(expected) is type(actual) and expected == actual  # True must not match 1


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_structured_output(expect: OutputExpectation, turn: TurnRecord | None, label: str) -> list[Check]:
    """The `json_equals`, `json_subset` and `type` checks of an output expectation."""
    checks: list[Check] = []
    name = f"{label}: output"
    wanted_fields = expect.model_fields_set
    if "json_equals" in wanted_fields or "json_subset" in wanted_fields:
        found, document, why = output_document(turn)
        for field, compare in (("json_equals", _equal), ("json_subset", is_subset)):
            if field not in wanted_fields:
                continue
            expected = getattr(expect, field)
            if not found:
                checks.append(Check(name=f"{name}.{field}", passed=False, expected=expected, actual=None, detail=why))
                continue
            checks.append(
                Check(name=f"{name}.{field}", passed=compare(expected, document), expected=expected, actual=document)
            )
    if expect.type is not None:
        actual = turn.output_type if turn is not None else None
        passed = actual is not None and (actual == expect.type or actual.rsplit(".", 1)[-1] == expect.type)
        checks.append(Check(name=f"{name}.type", passed=passed, expected=expect.type, actual=actual))
    return checks


def _equal(expected: Any, actual: Any) -> bool:
    return is_subset(expected, actual) and is_subset(actual, expected)
