"""Checks on the host's actions during a turn: steering deliveries, a cancellation's snapshot, pending calls.

Every steering message is checked whether or not the scenario lists it (`delivered_once`): it reaches the model
at most once per request, from the request that carried it on, is stored at most once, and, unless the turn was
cancelled, is delivered at all (a point that never occurred fails here, naming the message). The scenario's
`steering`, `cancelled` and `pending_calls` expectations are checked against the turn's records; a per-version
`stored` placement is matched against the pydantic-ai version the engine ran.
"""

from __future__ import annotations

from agentrig.runtime.checks.check_support import skip_check
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.cleanup import answered_tool_call_id
from agentrig.runtime.history.run_records import Check, TurnRecord
from agentrig.runtime.history.turn_controls import CancellationSnapshot, SteeringDelivery
from agentrig.scenarios.control_expectations import CancellationExpectation, SteeringExpectation, StoredPlacementWhen
from agentrig.scenarios.expectation_model import TurnExpectations
from agentrig.scenarios.version_spec import version_matches

__all__ = ["control_checks", "steering_delivery_checks"]


def steering_delivery_checks(turn: TurnRecord, label: str) -> list[Check]:
    """The built-in rule for every steering message of the turn (see the module docstring)."""
    checks: list[Check] = []
    for index, delivery in enumerate(turn.steering):
        counts = list(delivery.input_counts)
        first = next((i for i, count in enumerate(counts) if count), len(counts))
        problems: list[str] = []
        if any(count > 1 for count in counts):
            problems.append("a request's input held it more than once")
        if any(count != 1 for count in counts[first:]):
            problems.append("a later request's input lost it")
        if delivery.stored_count > 1:
            problems.append(f"the run's history stores it {delivery.stored_count} times")
        if delivery.request is None and not turn.interrupted:
            problems.append("it never reached the model: its steering point did not occur in the run")
        if delivery.request is not None and delivery.stored_count != 1:
            problems.append("it was delivered but the run's history does not store it")
        checks.append(
            Check(
                name=f"{label}: steering[{index}].delivered_once",
                passed=not problems,
                expected={"text": delivery.text, "per_request": "0 before delivery, then 1", "stored": 1},
                actual={"text": delivery.text, "per_request": counts, "stored": delivery.stored_count},
                detail="; ".join(problems),
            )
        )
    return checks


def control_checks(expect: TurnExpectations, turn: TurnRecord, label: str) -> list[Check]:
    """The scenario's `steering`, `cancelled` and `pending_calls` expectations for one turn."""
    checks: list[Check] = []
    for index, wanted in enumerate(expect.steering):
        checks.extend(_steering_checks(wanted, turn.steering, f"{label}: steering[{index}]"))
    if expect.cancelled is not None:
        checks.extend(_cancellation_checks(expect.cancelled, turn.cancellation, f"{label}: cancelled"))
    if expect.pending_calls is not None:
        checks.append(
            Check(
                name=f"{label}: pending_calls",
                passed=tuple(turn.pending_calls) == expect.pending_calls,
                expected=list(expect.pending_calls),
                actual=list(turn.pending_calls),
            )
        )
    return checks


def _steering_checks(wanted: SteeringExpectation, deliveries: tuple[SteeringDelivery, ...], name: str) -> list[Check]:
    delivery = next((d for d in deliveries if d.text == wanted.text), None)
    if delivery is None:
        known = [d.text for d in deliveries]
        return [Check(name=name, passed=False, expected=wanted.text, actual=known, detail="no such steering message")]
    checks: list[Check] = []
    if wanted.request is not None:
        checks.append(
            Check(
                name=f"{name}.request",
                passed=delivery.request == wanted.request,
                expected=wanted.request,
                actual=delivery.request,
            )
        )
    checks.append(
        Check(
            name=f"{name}.pending",
            passed=(delivery.request is None) == wanted.pending,
            expected=wanted.pending,
            actual=delivery.request is None,
        )
    )
    if wanted.stored is not None:
        checks.append(_stored_check(wanted.stored, delivery, f"{name}.stored"))
    return checks


def _stored_check(stored: str | tuple[StoredPlacementWhen, ...], delivery: SteeringDelivery, name: str) -> Check:
    version = delivery.framework_version
    if isinstance(stored, str):
        expected, detail = stored, ""
    elif version is None:
        return skip_check(name, [s.model_dump(mode="json") for s in stored], "the engine is not pydantic-ai")
    else:
        chosen = next((s for s in stored if version_matches(s.when_pydantic_ai, version)), None)
        shown = ".".join(map(str, version))
        if chosen is None:
            return Check(
                name=name,
                passed=False,
                expected=[s.model_dump(mode="json") for s in stored],
                actual=delivery.stored_as,
                detail=f"no when_pydantic_ai matches pydantic-ai {shown}",
            )
        expected, detail = chosen.placement, f"pydantic-ai {shown}: when_pydantic_ai {chosen.when_pydantic_ai!r}"
    return Check(
        name=name, passed=delivery.stored_as == expected, expected=expected, actual=delivery.stored_as, detail=detail
    )


def _result_ids(messages: tuple[Message, ...]) -> list[str]:
    """The calls the messages answer, in order."""
    answered = (
        answered_tool_call_id(part) for message in messages if message.kind == "request" for part in message.parts
    )
    return [call_id for call_id in answered if call_id is not None]


def _cancellation_checks(
    wanted: CancellationExpectation, snapshot: CancellationSnapshot | None, name: str
) -> list[Check]:
    expected = wanted.model_dump(mode="json", exclude_none=True)
    if snapshot is None:
        return [
            Check(
                name=name,
                passed=False,
                expected=expected,
                actual=None,
                detail="the turn was not cancelled at a cancel point",
            )
        ]
    checks: list[Check] = []
    results = _result_ids(snapshot.messages)
    calls = [call.tool_call_id for message in snapshot.messages for call in message.tool_calls]
    unresolved = [call_id for call_id in calls if call_id not in results]
    if wanted.kept_results is not None:
        checks.append(
            Check(
                name=f"{name}.kept_results",
                passed=results == list(wanted.kept_results),
                expected=list(wanted.kept_results),
                actual=results,
            )
        )
    if wanted.unresolved_calls is not None:
        checks.append(
            Check(
                name=f"{name}.unresolved_calls",
                passed=unresolved == list(wanted.unresolved_calls),
                expected=list(wanted.unresolved_calls),
                actual=unresolved,
            )
        )
    if wanted.partial_text is not None:
        partial = next((m for m in reversed(snapshot.messages) if m.kind == "response"), None)
        if not snapshot.streamed:
            checks.append(
                skip_check(
                    f"{name}.partial_text",
                    wanted.partial_text,
                    "a plain (not streamed) request never returns a partial response",
                )
            )
        else:
            actual = partial.text if partial is not None and partial.state == "interrupted" else None
            checks.append(
                Check(
                    name=f"{name}.partial_text",
                    passed=actual == wanted.partial_text,
                    expected=wanted.partial_text,
                    actual=actual,
                )
            )
    for field_name in ("requests", "input_tokens", "output_tokens"):
        value = getattr(wanted, field_name)
        if value is not None:
            actual_value = getattr(snapshot, field_name)
            checks.append(
                Check(name=f"{name}.{field_name}", passed=actual_value == value, expected=value, actual=actual_value)
            )
    return checks
