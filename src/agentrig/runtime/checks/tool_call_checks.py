"""`tool_calls` expectations: used / not_used, counts, registry statuses, and sequences matched exactly,
in order, or in any order (each matcher to a distinct call)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from agentrig.runtime.checks.check_support import as_json, skip_check
from agentrig.runtime.history.canonical import JsonValue, ToolCallPart
from agentrig.runtime.history.run_records import Check, ToolCallStatusRecord
from agentrig.scenarios.model import ToolCallMatcher, ToolCallsExpectation

__all__ = ["args_dict", "check_tool_calls"]


def args_dict(args: dict[str, JsonValue] | str) -> dict[str, JsonValue] | None:
    """Tool-call args as a dict; a raw string is parsed when it holds a JSON object, else None."""
    if isinstance(args, dict):
        return args
    try:
        parsed = json.loads(args) if args.strip() else {}
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _call_json(call: ToolCallPart) -> dict[str, JsonValue]:
    return {"id": call.tool_call_id, "name": call.tool_name, "args": call.args}


def _matcher_json(matcher: ToolCallMatcher) -> dict[str, JsonValue]:
    return matcher.model_dump(mode="json", exclude_defaults=True)


def _matches(matcher: ToolCallMatcher, call: ToolCallPart, *, compare_ids: bool) -> bool:
    if matcher.name != call.tool_name:
        return False
    if compare_ids and matcher.id is not None and matcher.id != call.tool_call_id:
        return False
    if matcher.args is None:
        return True
    actual = args_dict(call.args)
    if actual is None:
        return False
    if matcher.args_match == "exact":
        return actual == matcher.args
    return all(key in actual and actual[key] == value for key, value in matcher.args.items())


def _match_any_order(
    matchers: Sequence[ToolCallMatcher], calls: Sequence[ToolCallPart], *, compare_ids: bool
) -> list[int] | None:
    """Each matcher matched to a distinct call (bipartite matching); the unmatched matcher indexes, or None."""
    owner: dict[int, int] = {}  # call index -> matcher index

    def assign(matcher_index: int, seen: set[int]) -> bool:
        for call_index, call in enumerate(calls):
            if call_index in seen or not _matches(matchers[matcher_index], call, compare_ids=compare_ids):
                continue
            seen.add(call_index)
            if call_index not in owner or assign(owner[call_index], seen):
                owner[call_index] = matcher_index
                return True
        return False

    unmatched = [index for index in range(len(matchers)) if not assign(index, set())]
    return unmatched or None


def _check_sequence(
    expect: ToolCallsExpectation, calls: Sequence[ToolCallPart], name: str, *, scripted: bool
) -> list[Check]:
    expected = [_matcher_json(m) for m in expect.sequence]
    actual = [_call_json(c) for c in calls]
    if expect.order == "exact":
        if not scripted:
            return [skip_check(name, expected)]
        passed = len(calls) == len(expect.sequence) and all(
            _matches(m, c, compare_ids=True) for m, c in zip(expect.sequence, calls, strict=False)
        )
        detail = "" if passed else _describe_first_mismatch(expect.sequence, calls)
        return [Check(name=name, passed=passed, expected=expected, actual=actual, detail=detail)]
    if expect.order == "in_order":
        position = 0
        for matcher in expect.sequence:
            while position < len(calls) and not _matches(matcher, calls[position], compare_ids=scripted):
                position += 1
            if position == len(calls):
                wanted = as_json(_matcher_json(matcher))
                detail = f"no call matching {wanted} after the earlier matches (order: in_order)"
                return [Check(name=name, passed=False, expected=expected, actual=actual, detail=detail)]
            position += 1
        return [Check(name=name, passed=True, expected=expected, actual=actual)]
    unmatched = _match_any_order(expect.sequence, calls, compare_ids=scripted)
    missing = ", ".join(as_json(expected[i]) for i in unmatched or ())
    detail = "" if unmatched is None else f"no distinct call matches: {missing}"
    return [Check(name=name, passed=unmatched is None, expected=expected, actual=actual, detail=detail)]


def _describe_first_mismatch(matchers: Sequence[ToolCallMatcher], calls: Sequence[ToolCallPart]) -> str:
    for index, (matcher, call) in enumerate(zip(matchers, calls, strict=False)):
        if not _matches(matcher, call, compare_ids=True):
            return f"call {index + 1}: expected {as_json(_matcher_json(matcher))}, got {as_json(_call_json(call))}"
    return f"expected {len(matchers)} calls, got {len(calls)}"


def check_tool_calls(
    expect: ToolCallsExpectation,
    calls: Sequence[ToolCallPart],
    statuses: Mapping[str, ToolCallStatusRecord],
    label: str,
    *,
    scripted: bool,
) -> list[Check]:
    name = f"{label}: tool_calls"
    names = [c.tool_name for c in calls]
    checks: list[Check] = []
    for tool in expect.used:
        checks.append(Check(name=f"{name}.used", passed=tool in names, expected=tool, actual=names))
    for tool in expect.not_used:
        checks.append(Check(name=f"{name}.not_used", passed=tool not in names, expected=tool, actual=names))
    if expect.sequence:
        checks.extend(_check_sequence(expect, calls, f"{name}.sequence", scripted=scripted))
    for tool, count in expect.counts.items():
        actual_count = names.count(tool)
        checks.append(
            Check(name=f"{name}.counts[{tool}]", passed=actual_count == count, expected=count, actual=actual_count)
        )
    for call_id, status in expect.status.items():
        check_name = f"{name}.status[{call_id}]"
        if not scripted:
            reason = "tool_call_ids are chosen by the model; the run used a real model"
            checks.append(skip_check(check_name, status, reason))
            continue
        record = statuses.get(call_id)
        actual_status = record.status if record is not None else None
        known = as_json(sorted(statuses))
        detail = "" if record is not None else f"no tool call {as_json(call_id)} in the registry: {known}"
        checks.append(
            Check(name=check_name, passed=actual_status == status, expected=status, actual=actual_status, detail=detail)
        )
    return checks
