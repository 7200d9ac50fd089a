"""What a UI-protocol adapter answered one UI turn (`ui:`): its HTTP status and its encoded events, as data.

Framework-free: the pydantic-ai engine fills it in (`engine/pydantic_ai_engine/ui_turn.py`), the checks judge it
(`checks/ui_checks.py`) and the run writes it (`ui_answers.json`). `masked_events` is the one rule for the values an
adapter makes up on every run (message ids, timestamps): replaced by placeholders numbered by first appearance, so
two fields holding one id still show it, and a golden file holds the same bytes on every run and version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentrig.runtime.history.canonical import JsonValue

__all__ = ["GENERATED_ID_FIELDS", "UiExchange", "masked_events"]

GENERATED_ID_FIELDS: Mapping[str, frozenset[str]] = {
    # AG-UI: the adapter makes up a message id per text message and per tool result (`messageId`, referred to by
    # `parentMessageId`, and by `entityId` of 2.63+'s REASONING_ENCRYPTED_VALUE); thread, run and tool call ids come
    # from the request or the model.
    "ag-ui": frozenset({"messageId", "parentMessageId", "entityId"}),
    # Vercel AI: the `id` of each text and reasoning part, and the `messageId` of `start` when the adapter sends one.
    "vercel-ai": frozenset({"id", "messageId"}),
}
"""Per protocol, the fields whose values the adapter generates: masked as `<id-N>`."""

_TIMESTAMP_FIELDS = frozenset({"timestamp"})
"""Masked as `<timestamp>` wherever they appear (AG-UI events, Vercel AI's message metadata)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UiExchange:
    """One UI turn's request as the adapter answered it."""

    protocol: str
    """`ag-ui` or `vercel-ai`."""
    status: int
    """The HTTP status: 200 when the request ran, else the adapter's refusal (422, 415, 500)."""
    events: tuple[JsonValue, ...] = ()
    """The encoded events, each decoded from its `data:` line (the protocol's own field names), in order."""
    body: str = ""
    """A refused request's answer body (e.g. the 422's validation errors); empty when it ran."""
    versions: tuple[tuple[str, str], ...] = ()
    """The installed versions that shape the answer: `("pydantic-ai", "2.68.0")`, `("ag-ui-protocol", "1.0.0")`."""

    def version_of(self, package: str) -> str | None:
        """The installed version of `package` when the answer was made (None when not recorded)."""
        return dict(self.versions).get(package)

    def to_json(self, *, turn: int) -> dict[str, JsonValue]:
        """The answer as `ui_answers.json` holds it (unmasked: what the adapter really sent)."""
        return {
            "turn": turn,
            "protocol": self.protocol,
            "status": self.status,
            "events": list(self.events),
            "body": self.body,
            "versions": dict(self.versions),
        }


def masked_events(protocol: str, events: Sequence[JsonValue]) -> list[JsonValue]:
    """`events` with the generated ids and the timestamps replaced by placeholders (see the module docstring)."""
    id_fields = GENERATED_ID_FIELDS.get(protocol, frozenset())
    numbers: dict[str, str] = {}

    def mask(value: Any, key: str | None) -> Any:
        if isinstance(value, dict):
            mapping: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
            return {name: mask(item, name) for name, item in mapping.items()}
        if isinstance(value, list):
            items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
            return [mask(item, None) for item in items]
        if key in _TIMESTAMP_FIELDS and value is not None:
            return "<timestamp>"
        if key in id_fields and isinstance(value, str):
            return numbers.setdefault(value, f"<id-{len(numbers) + 1}>")
        return value

    return [mask(event, None) for event in events]
