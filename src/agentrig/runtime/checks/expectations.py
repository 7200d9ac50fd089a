"""Expectations -> Checks: what a scenario said must hold, compared with what the run produced.

Pure: reads `TurnRecord`s and a canonical history, returns `Check` values; no pydantic-ai. The only
side effect is `--update-golden`, which rewrites a golden file atomically.

When the run used a real model (`scripted=False`) the expectations that only a script can make true
(exact usage, golden history, exact tool-call sequences and ids, model-input checks, scripted errors)
are returned as passed checks with a `skipped_reason`, never as failures.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from agentrig.runtime.checks.approval_checks import approval_args_checks
from agentrig.runtime.checks.check_support import as_tuple, skip_check, unified_diff
from agentrig.runtime.checks.control_checks import control_checks, steering_delivery_checks
from agentrig.runtime.checks.history_checks import (
    InvariantChecker,
    check_golden,
    check_invariant_expectations,
    turn_label,
)
from agentrig.runtime.checks.output_checks import check_structured_output
from agentrig.runtime.checks.tool_call_checks import check_tool_calls
from agentrig.runtime.checks.ui_checks import ui_golden_checks, ui_turn_checks
from agentrig.runtime.checks.unknown_tool_checks import SubAgentHistory, unknown_tool_checks
from agentrig.runtime.history.canonical import JsonValue, Message
from agentrig.runtime.history.run_records import Check, TurnRecord
from agentrig.runtime.history.usage import Usage
from agentrig.scenarios.model import (
    Bounds,
    CompactionExpectation,
    ErrorExpectation,
    OutputExpectation,
    Scenario,
    ScenarioExpectations,
    TurnExpectations,
    UsageExpectation,
)

__all__ = ["check_scenario", "check_turn"]

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
    for needle in as_tuple(expect.contains):
        checks.append(Check(name=f"{name}.contains", passed=needle in output, expected=needle, actual=output))
    for needle in as_tuple(expect.not_contains):
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
            checks.append(skip_check(name, wanted))
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
        return [skip_check(name, expected, "the expected error comes from the script; the run used a real model")]
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
        if turn.output is not None:
            checks.extend(check_structured_output(expect.output, turn, label))
    if expect.tool_calls is not None:
        statuses = {record.tool_call_id: record for record in turn.tool_statuses}
        checks.extend(check_tool_calls(expect.tool_calls, turn.tool_calls, statuses, label, scripted=scripted))
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
    checks.extend(steering_delivery_checks(turn, label))
    checks.extend(control_checks(expect, turn, label))
    checks.extend(ui_turn_checks(expect.ui, turn, label))
    for model_check in turn.model_input_checks:
        # The engine names them `turn N, step M: ...`; add the label only when the name lacks it.
        name = model_check.name if model_check.name.startswith(label) else f"{label}: {model_check.name}"
        if scripted:
            checks.append(dataclasses.replace(model_check, name=name))
        else:
            checks.append(skip_check(name, model_check.expected))
    return checks


# --------------------------------------------------------------------------------------------
# the scenario
# --------------------------------------------------------------------------------------------


def check_scenario(
    source: ScenarioSource,
    turns: Sequence[TurnRecord],
    history: Sequence[Message],
    *,
    scripted: bool = True,
    registry: Any = None,
    update_golden: bool = False,
    invariant_checker: InvariantChecker | None = None,
    subagent_runs: Sequence[SubAgentHistory] = (),
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
    checks.extend(check_invariant_expectations(expect, history, turns, registry, invariant_checker))
    checks.extend(unknown_tool_checks(scenario, history, scripted=scripted, subagent_runs=subagent_runs))
    checks.extend(approval_args_checks(scenario, turns))
    if expect.golden is not None:
        golden_path = source.resolve(expect.golden)
        if scripted:
            checks.append(check_golden(golden_path, history, update=update_golden))
        else:
            checks.append(skip_check("scenario: golden", str(golden_path)))
    if expect.ui_events is not None:
        ui_path = source.resolve(expect.ui_events.golden)
        if scripted:
            checks.extend(ui_golden_checks(expect.ui_events, turns, ui_path, update=update_golden))
        else:
            checks.append(skip_check("scenario: ui_events golden", str(ui_path)))
    return checks


def _check_final_state(expect: ScenarioExpectations, turns: Sequence[TurnRecord], *, scripted: bool) -> list[Check]:
    """Turn-style expectations written at scenario level: the last turn's output, error, interruption and
    compaction; every turn's tool calls and the total usage."""
    label = "scenario"
    checks: list[Check] = []
    last = turns[-1] if turns else None
    if expect.output is not None:
        checks.extend(_check_output(expect.output, last.output if last else None, label))
        if last is not None and last.output is not None:
            checks.extend(check_structured_output(expect.output, last, label))
    if expect.tool_calls is not None:
        calls = [call for turn in turns for call in turn.tool_calls]
        statuses = {record.tool_call_id: record for turn in turns for record in turn.tool_statuses}
        checks.extend(check_tool_calls(expect.tool_calls, calls, statuses, label, scripted=scripted))
    if expect.usage is not None:
        checks.extend(_check_usage(expect.usage, Usage.total(t.usage for t in turns), label, scripted=scripted))
    if expect.ui is not None and last is not None:
        checks.extend(ui_turn_checks(expect.ui, last, label))
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
    if last is not None:
        checks.extend(control_checks(expect, last, label))
    return checks
