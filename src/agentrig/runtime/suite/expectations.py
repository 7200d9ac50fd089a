"""Expectations -> Checks: what a scenario said must hold, compared with what the run produced.

Pure: reads `TurnRecord`s and a canonical history, returns `Check` values; no pydantic-ai. The only
side effect is `--update-golden`, which rewrites a golden file atomically.

When the run used a real model (`scripted=False`) the expectations that only a script can make true
(exact usage, golden history, exact tool-call sequences and ids, model-input checks, scripted errors)
are returned as passed checks with a `skipped_reason`, never as failures.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, get_args

from agentrig.runtime.history.canonical import JsonValue, Message, ToolCallPart
from agentrig.runtime.history.invariants import check_invariants
from agentrig.runtime.history.jsonio import write_atomic
from agentrig.runtime.history.run_records import Check, ToolCallStatusRecord, TurnRecord
from agentrig.runtime.history.tool_registry import ToolCallRegistry
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.wire import dumps_history
from agentrig.scenarios.model import (
    Bounds,
    CompactionExpectation,
    ErrorExpectation,
    InvariantName,
    OutputExpectation,
    Scenario,
    ScenarioExpectations,
    ToolCallMatcher,
    ToolCallsExpectation,
    TurnExpectations,
    UsageExpectation,
)

__all__ = ["ALL_INVARIANTS", "canonical_golden_bytes", "check_scenario", "check_turn", "unified_diff"]

ALL_INVARIANTS: tuple[str, ...] = get_args(InvariantName)
"""Every invariant name a scenario may list; `invariants: all` means these."""

SCRIPT_ONLY = "only a scripted model makes this exact; the run used a real model"
_USAGE_FIELDS = (
    "requests",
    "tool_calls",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "total_tokens",
)


class ScenarioSource(Protocol):
    """What the checker needs of a loaded scenario (`agentrig.scenarios.loader.LoadedScenario`)."""

    @property
    def scenario(self) -> Scenario: ...

    def resolve(self, relative: str) -> Path: ...


# --------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------


def unified_diff(expected: str, actual: str, *, expected_label: str = "expected", actual_label: str = "actual") -> str:
    """A unified diff of two texts, empty when they are equal."""
    lines = difflib.unified_diff(
        expected.splitlines(keepends=True),
        actual.splitlines(keepends=True),
        fromfile=expected_label,
        tofile=actual_label,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _as_tuple(value: tuple[str, ...] | str) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else value


def _skip(name: str, expected: JsonValue, reason: str = SCRIPT_ONLY) -> Check:
    return Check(name=name, passed=True, expected=expected, skipped_reason=reason)


def _args_dict(args: dict[str, JsonValue] | str) -> dict[str, JsonValue] | None:
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


# --------------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------------


def _check_output(expect: OutputExpectation, output: str | None, label: str) -> list[Check]:
    checks: list[Check] = []
    name = f"{label}: output"
    if output is None:
        requested = expect.model_dump(mode="json", exclude_defaults=True)
        return [Check(name=name, passed=False, expected=requested, actual=None, detail="the turn produced no output")]
    if expect.equals is not None:
        equal = output == expect.equals
        detail = "" if equal else unified_diff(expect.equals + "\n", output + "\n")
        checks.append(Check(name=f"{name}.equals", passed=equal, expected=expect.equals, actual=output, detail=detail))
    for needle in _as_tuple(expect.contains):
        checks.append(Check(name=f"{name}.contains", passed=needle in output, expected=needle, actual=output))
    for needle in _as_tuple(expect.not_contains):
        checks.append(Check(name=f"{name}.not_contains", passed=needle not in output, expected=needle, actual=output))
    if expect.regex is not None:
        try:
            found = re.search(expect.regex, output) is not None
            detail = ""
        except re.error as error:
            found, detail = False, f"invalid regular expression: {error}"
        checks.append(Check(name=f"{name}.regex", passed=found, expected=expect.regex, actual=output, detail=detail))
    if expect.json_schema is not None:
        checks.append(_check_json_schema(expect.json_schema, output, f"{name}.json_schema"))
    return checks


def _check_json_schema(schema: dict[str, JsonValue], output: str, name: str) -> Check:
    import jsonschema  # imported here: only scenarios with a json_schema expectation pay for it

    try:
        document = json.loads(output)
    except ValueError as error:
        return Check(name=name, passed=False, expected=schema, actual=output, detail=f"output is not JSON: {error}")
    try:
        jsonschema.validate(document, schema)
    except jsonschema.ValidationError as error:
        where = "/".join(str(p) for p in error.absolute_path) or "<root>"
        return Check(name=name, passed=False, expected=schema, actual=document, detail=f"at {where}: {error.message}")
    except jsonschema.SchemaError as error:
        return Check(
            name=name, passed=False, expected=schema, actual=document, detail=f"invalid schema: {error.message}"
        )
    return Check(name=name, passed=True, expected=schema, actual=document)


# --------------------------------------------------------------------------------------------
# tool calls
# --------------------------------------------------------------------------------------------


def _matches(matcher: ToolCallMatcher, call: ToolCallPart, *, compare_ids: bool) -> bool:
    if matcher.name != call.tool_name:
        return False
    if compare_ids and matcher.id is not None and matcher.id != call.tool_call_id:
        return False
    if matcher.args is None:
        return True
    actual = _args_dict(call.args)
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
            return [_skip(name, expected)]
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
                detail = f"no call matching {_matcher_json(matcher)} after the earlier matches (order: in_order)"
                return [Check(name=name, passed=False, expected=expected, actual=actual, detail=detail)]
            position += 1
        return [Check(name=name, passed=True, expected=expected, actual=actual)]
    unmatched = _match_any_order(expect.sequence, calls, compare_ids=scripted)
    detail = "" if unmatched is None else "no distinct call matches: " + ", ".join(str(expected[i]) for i in unmatched)
    return [Check(name=name, passed=unmatched is None, expected=expected, actual=actual, detail=detail)]


def _describe_first_mismatch(matchers: Sequence[ToolCallMatcher], calls: Sequence[ToolCallPart]) -> str:
    for index, (matcher, call) in enumerate(zip(matchers, calls, strict=False)):
        if not _matches(matcher, call, compare_ids=True):
            return f"call {index + 1}: expected {_matcher_json(matcher)}, got {_call_json(call)}"
    return f"expected {len(matchers)} calls, got {len(calls)}"


def _check_tool_calls(
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
            checks.append(_skip(check_name, status, "tool_call_ids are chosen by the model; the run used a real model"))
            continue
        record = statuses.get(call_id)
        actual_status = record.status if record is not None else None
        detail = "" if record is not None else f"no tool call {call_id!r} in the registry: {sorted(statuses)}"
        checks.append(
            Check(name=check_name, passed=actual_status == status, expected=status, actual=actual_status, detail=detail)
        )
    return checks


# --------------------------------------------------------------------------------------------
# usage, error, interruption, compaction
# --------------------------------------------------------------------------------------------


def _check_usage(expect: UsageExpectation, usage: Usage, label: str, *, scripted: bool) -> list[Check]:
    checks: list[Check] = []
    for field_name in _USAGE_FIELDS:
        wanted: int | Bounds | None = getattr(expect, field_name)
        if wanted is None:
            continue
        name = f"{label}: usage.{field_name}"
        actual: int = getattr(usage, field_name)
        if isinstance(wanted, Bounds):
            bounds = wanted.model_dump(mode="json", exclude_none=True)
            passed = (wanted.min is None or actual >= wanted.min) and (wanted.max is None or actual <= wanted.max)
            checks.append(Check(name=name, passed=passed, expected=bounds, actual=actual))
        elif not scripted:
            checks.append(_skip(name, wanted))
        else:
            detail = " (pydantic-ai estimated part of it: give every scripted step a usage)" if usage.estimated else ""
            checks.append(
                Check(name=name, passed=actual == wanted, expected=wanted, actual=actual, detail=detail.strip())
            )
    return checks


def _check_error(expect: ErrorExpectation | None, turn: TurnRecord, label: str, *, scripted: bool) -> list[Check]:
    name = f"{label}: error"
    actual = None if turn.error is None else {"kind": turn.error.kind, "message": turn.error.message}
    if expect is None:
        if turn.error is None:
            return []
        return [
            Check(
                name=name,
                passed=False,
                expected=None,
                actual=actual,
                detail="the turn failed and nothing expected an error",
            )
        ]
    expected = expect.model_dump(mode="json", exclude_none=True)
    if not scripted:
        return [_skip(name, expected, "the expected error comes from the script; the run used a real model")]
    if turn.error is None:
        return [
            Check(name=name, passed=False, expected=expected, actual=None, detail="the turn ended without an error")
        ]
    passed = turn.error.kind == expect.kind and (expect.contains is None or expect.contains in turn.error.message)
    return [Check(name=name, passed=passed, expected=expected, actual=actual)]


def _check_compaction(expect: CompactionExpectation, turn: TurnRecord, label: str) -> list[Check]:
    name = f"{label}: compaction"
    expected = expect.model_dump(mode="json", exclude_none=True)
    outcome = turn.compaction
    if outcome is None:
        return [Check(name=name, passed=False, expected=expected, actual=None, detail="no compaction check ran")]
    actual = {"status": outcome.status, "reason": outcome.reason, "compacted_messages": outcome.compacted_messages}
    passed = (
        outcome.status == expect.status
        and (expect.reason is None or outcome.reason == expect.reason)
        and (expect.compacted_messages is None or outcome.compacted_messages == expect.compacted_messages)
    )
    return [Check(name=name, passed=passed, expected=expected, actual=actual, detail=outcome.detail)]


# --------------------------------------------------------------------------------------------
# turns
# --------------------------------------------------------------------------------------------


def turn_label(turn: TurnRecord) -> str:
    """`turn 1` for the first turn: labels count from 1, like the YAML reader does."""
    return f"turn {turn.index + 1}"


def check_turn(
    expect: TurnExpectations,
    turn: TurnRecord,
    *,
    label: str,
    scripted: bool = True,
    error_expected_elsewhere: bool = False,
) -> list[Check]:
    """Every check of one turn's expectations, plus the script's model-input checks.

    A turn that ended in error fails unless `expect.error` (or, with `error_expected_elsewhere`, the
    scenario-level expectation for the last turn) expected it.
    """
    checks: list[Check] = []
    if expect.output is not None:
        checks.extend(_check_output(expect.output, turn.output, label))
    if expect.tool_calls is not None:
        statuses = {record.tool_call_id: record for record in turn.tool_statuses}
        checks.extend(_check_tool_calls(expect.tool_calls, turn.tool_calls, statuses, label, scripted=scripted))
    if expect.usage is not None:
        checks.extend(_check_usage(expect.usage, turn.usage, label, scripted=scripted))
    if expect.error is not None or not error_expected_elsewhere:
        checks.extend(_check_error(expect.error, turn, label, scripted=scripted))
    if expect.interrupted is not None:
        checks.append(
            Check(
                name=f"{label}: interrupted",
                passed=turn.interrupted == expect.interrupted,
                expected=expect.interrupted,
                actual=turn.interrupted,
            )
        )
    if expect.compaction is not None:
        checks.extend(_check_compaction(expect.compaction, turn, label))
    for model_check in turn.model_input_checks:
        # The engine names them `turn N, step M: ...`; add the label only when the name lacks it.
        name = model_check.name if model_check.name.startswith(label) else f"{label}: {model_check.name}"
        if scripted:
            checks.append(dataclasses.replace(model_check, name=name))
        else:
            checks.append(_skip(name, model_check.expected))
    return checks


# --------------------------------------------------------------------------------------------
# the scenario
# --------------------------------------------------------------------------------------------

InvariantChecker = Callable[[Sequence[Message], Any, Sequence[str] | None], Sequence[Any]]
"""`(history, registry, only) -> violations`; defaults to `agentrig.runtime.history.invariants.check_invariants`.
(Injectable so the checker's own wiring can be tested with planted violations.)"""


def strip_run_ids(history: Iterable[Message]) -> list[Message]:
    """The history without `run_id`s: they are random per run, so goldens and diffs ignore them."""
    return [message if message.run_id is None else dataclasses.replace(message, run_id=None) for message in history]


def canonical_golden_bytes(history: Iterable[Message]) -> bytes:
    """The exact bytes a golden file holds for this history: canonical, pretty, run_ids dropped."""
    return dumps_history(strip_run_ids(history), pretty=True)


def check_scenario(
    source: ScenarioSource,
    turns: Sequence[TurnRecord],
    history: Sequence[Message],
    *,
    scripted: bool = True,
    registry: Any = None,
    update_golden: bool = False,
    invariant_checker: InvariantChecker | None = None,
) -> list[Check]:
    """All checks of a scenario: every turn's expectations, then the scenario-level ones on the final state."""
    scenario = source.scenario
    expect = scenario.expect
    checks: list[Check] = []
    last_index = len(turns) - 1
    for index, turn in enumerate(turns):
        turn_expect = scenario.turns[turn.index].expect if turn.index < len(scenario.turns) else TurnExpectations()
        checks.extend(
            check_turn(
                turn_expect,
                turn,
                label=turn_label(turn),
                scripted=scripted,
                error_expected_elsewhere=index == last_index and expect.error is not None,
            )
        )
    if len(turns) < len(scenario.turns) and not any(turn.error for turn in turns):
        checks.append(
            Check(name="scenario: turns", passed=False, expected=len(scenario.turns), actual=len(turns),
                  detail="the run stopped before every turn ran")
        )  # fmt: skip
    checks.extend(_check_final_state(expect, turns, scripted=scripted))
    checks.extend(_check_invariants(expect, history, turns, registry, invariant_checker))
    if expect.golden is not None:
        golden_path = source.resolve(expect.golden)
        if scripted:
            checks.append(check_golden(golden_path, history, update=update_golden))
        else:
            checks.append(_skip("scenario: golden", str(golden_path)))
    return checks


def _check_final_state(expect: ScenarioExpectations, turns: Sequence[TurnRecord], *, scripted: bool) -> list[Check]:
    """Turn-style expectations written at scenario level: the last turn's output, error, interruption and
    compaction; every turn's tool calls and the total usage."""
    label = "scenario"
    checks: list[Check] = []
    last = turns[-1] if turns else None
    if expect.output is not None:
        checks.extend(_check_output(expect.output, last.output if last else None, label))
    if expect.tool_calls is not None:
        calls = [call for turn in turns for call in turn.tool_calls]
        statuses = {record.tool_call_id: record for turn in turns for record in turn.tool_statuses}
        checks.extend(_check_tool_calls(expect.tool_calls, calls, statuses, label, scripted=scripted))
    if expect.usage is not None:
        checks.extend(_check_usage(expect.usage, Usage.total(t.usage for t in turns), label, scripted=scripted))
    if expect.error is not None and last is not None:
        checks.extend(_check_error(expect.error, last, label, scripted=scripted))
    if expect.interrupted is not None:
        actual = last.interrupted if last is not None else False
        checks.append(
            Check(name=f"{label}: interrupted", passed=actual == expect.interrupted, expected=expect.interrupted,
                  actual=actual)
        )  # fmt: skip
    if expect.compaction is not None and last is not None:
        checks.extend(_check_compaction(expect.compaction, last, label))
    return checks


def _check_invariants(
    expect: ScenarioExpectations,
    history: Sequence[Message],
    turns: Sequence[TurnRecord],
    registry: Any,
    invariant_checker: InvariantChecker | None,
) -> list[Check]:
    """One check per invariant on the final history. `registry_matches_parts` uses the scenario-wide
    `registry` when the engine gives one; otherwise each turn's registry is rebuilt from its final
    statuses and checked against the messages that turn added (a request's registry only knows its turn)."""
    if expect.invariants == "none":
        return []
    names = ALL_INVARIANTS if expect.invariants == "all" else tuple(expect.invariants)
    checker = invariant_checker or _default_invariant_checker
    history_names = [name for name in names if name != "registry_matches_parts"]
    violations: list[tuple[str, Any]] = (
        [("", v) for v in checker(history, None, history_names)] if history_names else []
    )
    if "registry_matches_parts" in names and registry is not None:
        violations.extend(("", v) for v in checker(history, registry, ["registry_matches_parts"]))
    elif "registry_matches_parts" in names:
        for turn in turns:
            registry = rebuild_registry(turn)
            found = checker(turn.new_messages, registry, ["registry_matches_parts"])
            violations.extend((f"{turn_label(turn)}: ", v) for v in found)
    checks: list[Check] = []
    for name in names:
        found = [_describe_violation(prefix, v) for prefix, v in violations if getattr(v, "code", None) == name]
        checks.append(Check(name=f"scenario: invariant {name}", passed=not found, detail="\n".join(found)))
    unknown = [_describe_violation(prefix, v) for prefix, v in violations if getattr(v, "code", None) not in names]
    if unknown:
        checks.append(Check(name="scenario: invariant (other)", passed=False, detail="\n".join(unknown)))
    return checks


def _default_invariant_checker(history: Sequence[Message], registry: Any, only: Sequence[str] | None) -> Sequence[Any]:
    return check_invariants(history, registry=registry, only=only)


def rebuild_registry(turn: TurnRecord) -> ToolCallRegistry:
    """A `ToolCallRegistry` holding the turn's final statuses, reached by legal lifecycle moves."""
    registry = ToolCallRegistry()
    args = {call.tool_call_id: call.args for call in turn.tool_calls}
    for record in turn.tool_statuses:
        registry.register(record.tool_call_id, record.tool_name, args.get(record.tool_call_id, {}))
        if record.status in ("running", "completed"):
            registry.start(record.tool_call_id)
        if record.status == "completed":
            registry.complete(record.tool_call_id)
        elif record.status == "failed":
            registry.fail(record.tool_call_id, "failed")
        elif record.status == "cancelled":
            registry.cancel(record.tool_call_id, "cancelled")
    return registry


def _describe_violation(prefix: str, violation: Any) -> str:
    index = getattr(violation, "message_index", None)
    where = "registry" if index is None else f"message {index}"
    part = getattr(violation, "part_index", None)
    if part is not None:
        where += f", part {part}"
    return f"{prefix}{getattr(violation, 'code', '?')} at {where}: {getattr(violation, 'message', violation)}"


def check_golden(path: Path, history: Sequence[Message], *, update: bool) -> Check:
    """Compare the final history with the golden file byte for byte; with `update`, rewrite it (atomically)."""
    name = "scenario: golden"
    actual = canonical_golden_bytes(history)
    existing = path.read_bytes() if path.is_file() else None
    if update:
        if existing == actual:
            return Check(name=name, passed=True, expected=str(path), detail="golden unchanged")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, actual)
        return Check(
            name=name, passed=True, expected=str(path), detail=f"golden {'updated' if existing else 'written'}: {path}"
        )
    if existing is None:
        return Check(
            name=name,
            passed=False,
            expected=str(path),
            actual="no golden file",
            detail=f"golden file {path} is missing; run with --update-golden",
        )
    if existing == actual:
        return Check(name=name, passed=True, expected=str(path))
    detail = unified_diff(
        existing.decode("utf-8", errors="replace"),
        actual.decode("utf-8"),
        expected_label=str(path),
        actual_label="this run",
    )
    return Check(
        name=name,
        passed=False,
        expected=str(path),
        actual="a different history (diff below)",
        detail=detail + "(run with --update-golden to accept)",
    )
