"""What a scenario expects of its UI turns' answers (`expect.ui` per turn, `expect.ui_events` for the scenario).

- per turn: the HTTP status (200 unless the turn says otherwise: a request the adapter refused when the scenario
  did not expect it fails), events in order (`events`, each a JSON subset of one event), events that must not
  appear (`not_events`) and text in a refused request's answer body (`body_contains`);
- for the scenario: every UI turn's events compared with a golden file, ids and timestamps masked
  (`history.ui_exchange.masked_events`), and the fields the scenario says differ between versions taken out of it
  and held, on the installed versions, to the variant that names them.

The golden holds neither the status (checked per turn, where a version difference is stated as `when_pydantic_ai`)
nor a refusal's body: a 422's body quotes pydantic's own documentation URL, whose version is not pydantic-ai's
(`body_contains` checks what matters in it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentrig.runtime.checks.history_checks import check_golden_bytes
from agentrig.runtime.checks.output_checks import is_subset
from agentrig.runtime.history.canonical import JsonValue
from agentrig.runtime.history.run_records import Check, TurnRecord
from agentrig.runtime.history.ui_exchange import UiExchange, masked_events
from agentrig.runtime.runfolder import jsonio
from agentrig.scenarios.ui_model import UiAnswerExpectation, UiEventFields, UiEventsGolden
from agentrig.scenarios.version_spec import VersionTuple, version_matches

__all__ = ["ui_golden_checks", "ui_turn_checks"]

OK = 200

_CONDITIONS = (("when_pydantic_ai", "pydantic-ai"), ("when_ag_ui_protocol", "ag-ui-protocol"))
"""Each variant condition and the installed package it is matched against."""


def _as_version(text: str) -> VersionTuple:
    numbers = [int(piece) if piece.isdigit() else 0 for piece in text.split(".")[:3]]
    numbers += [0] * (3 - len(numbers))
    return numbers[0], numbers[1], numbers[2]


def _types(events: Sequence[JsonValue]) -> list[JsonValue]:
    return [event.get("type") if isinstance(event, dict) else event for event in events]


def ui_turn_checks(expect: UiAnswerExpectation | None, turn: TurnRecord, label: str) -> list[Check]:
    """The turn's `expect.ui` checks; a UI turn without one must have run (status 200)."""
    exchange = turn.ui
    if exchange is None:
        if expect is None:
            return []
        return [Check(name=f"{label}: ui", passed=False, expected="a UI turn", actual="no UI request in this turn")]
    wanted = expect if expect is not None else UiAnswerExpectation()
    checks = [_status_check(wanted, exchange, label)]
    checks.extend(_ordered_events(wanted.events, exchange, label))
    for unwanted in wanted.not_events:
        found = [event for event in exchange.events if is_subset(unwanted, event)]
        checks.append(Check(name=f"{label}: ui.not_events", passed=not found, expected=unwanted, actual=found))
    texts = (wanted.body_contains,) if isinstance(wanted.body_contains, str) else wanted.body_contains
    for text in texts:
        checks.append(
            Check(name=f"{label}: ui.body_contains", passed=text in exchange.body, expected=text,
                  actual=exchange.body[:500])
        )  # fmt: skip
    return checks


def _status_check(wanted: UiAnswerExpectation, exchange: UiExchange, label: str) -> Check:
    name = f"{label}: ui.status"
    installed = exchange.version_of("pydantic-ai") or "0"
    status: int | None
    if isinstance(wanted.status, tuple):
        variants = wanted.status
        status = next((v.status for v in variants if version_matches(v.when_pydantic_ai, _as_version(installed))), None)
        if status is None:
            actual = f"pydantic-ai {installed}"
            return Check(name=name, passed=False, expected="a status for this version", actual=actual)
    else:
        status = wanted.status if wanted.status is not None else OK
    detail = exchange.body[:500] if exchange.status != status else ""
    return Check(name=name, passed=exchange.status == status, expected=status, actual=exchange.status, detail=detail)


def _ordered_events(wanted: Sequence[dict[str, Any]], exchange: UiExchange, label: str) -> list[Check]:
    checks: list[Check] = []
    position = 0
    for matcher in wanted:
        found = next((i for i in range(position, len(exchange.events)) if is_subset(matcher, exchange.events[i])), None)
        if found is None:
            earlier = any(is_subset(matcher, event) for event in exchange.events[:position])
            detail = "it appears, but before the event matched before it" if earlier else "no such event"
            checks.append(
                Check(name=f"{label}: ui.events", passed=False, expected=matcher,
                      actual=_types(exchange.events), detail=detail)
            )  # fmt: skip
            continue
        checks.append(Check(name=f"{label}: ui.events", passed=True, expected=matcher, actual=exchange.events[found]))
        position = found + 1
    return checks


def _variant(golden: UiEventsGolden, exchange: UiExchange) -> UiEventFields | None:
    """The first variant whose conditions all hold for the versions that made `exchange`."""
    for variant in golden.versions:
        holds = True
        for attribute, package in _CONDITIONS:
            spec: str | None = getattr(variant, attribute)
            installed = exchange.version_of(package)
            if spec is not None and (installed is None or not version_matches(spec, _as_version(installed))):
                holds = False
        if holds:
            return variant
    return None


def _stated_fields(golden: UiEventsGolden) -> dict[str, set[str]]:
    stated: dict[str, set[str]] = {}
    for variant in golden.versions:
        for event_type, fields in variant.fields.items():
            stated.setdefault(event_type, set()).update(fields)
    return stated


def _split(events: Sequence[JsonValue], stated: Mapping[str, set[str]]) -> tuple[list[JsonValue], list[JsonValue]]:
    """The events without the stated fields (for the golden), and each event's stated fields (for the variant)."""
    kept: list[JsonValue] = []
    varying: list[JsonValue] = []
    for event in events:
        names = stated.get(str(event.get("type"))) if isinstance(event, dict) else None
        if not names or not isinstance(event, dict):
            kept.append(event)
            continue
        kept.append({key: value for key, value in event.items() if key not in names})
        varying.append({"type": event["type"], **{key: value for key, value in event.items() if key in names}})
    return kept, varying


def ui_golden_checks(golden: UiEventsGolden, turns: Sequence[TurnRecord], path: Path, *, update: bool) -> list[Check]:
    """The golden comparison, then one check per UI turn of the fields its versions state."""
    stated = _stated_fields(golden)
    document: list[JsonValue] = []
    checks: list[Check] = []
    for turn in turns:
        exchange = turn.ui
        if exchange is None:
            continue
        kept, varying = _split(masked_events(exchange.protocol, exchange.events), stated)
        document.append({"turn": turn.index + 1, "events": kept})
        if not golden.versions:
            continue
        variant = _variant(golden, exchange)
        name = f"turn {turn.index + 1}: ui_events.versions"
        installed = ", ".join(f"{package} {version}" for package, version in exchange.versions)
        if variant is None:
            checks.append(Check(name=name, passed=False, expected="a variant for these versions", actual=installed))
            continue
        expected = [
            {"type": event["type"], **variant.fields.get(str(event["type"]), {})}
            for event in varying
            if isinstance(event, dict)
        ]
        checks.append(Check(name=name, passed=expected == varying, expected=expected, actual=varying, detail=installed))
    actual = jsonio.dumps(document, pretty=True) + b"\n"
    golden_check = check_golden_bytes(path, actual, update=update, name="scenario: ui_events golden", what="answer")
    return [golden_check, *checks]
