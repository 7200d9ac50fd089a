"""The fields of the installed pydantic-ai's message and part classes, held against the canonical form's list.

`history/field_inventory.py` says, framework-free, what the canonical form does with every field it knows. This
module walks the installed `pydantic_ai.messages` (the two message classes, every class of the request and
response part unions with their typed subclasses, the capability part kinds, `RetryInfo` and `ModelRequestAttempt`)
and says, for each dataclass field, which rule applies, or that none does. tests/history/test_field_inventory.py
fails on a field with no rule; `agentrig matrix` runs `inventory_json()` in each environment and its page names
the fields a version adds that the canonical form does not carry.

    python -c "from agentrig.runtime.models.message_fields import inventory_json; print(inventory_json())"
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic_ai import messages as _messages

from agentrig.runtime.history.field_inventory import FieldRule, rule_for
from agentrig.runtime.models.pydantic_ai_compat import PYDANTIC_AI_VERSION_TEXT
from agentrig.runtime.runfolder import jsonio

__all__ = ["FieldEntry", "inventory", "inventory_json", "message_classes"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldEntry:
    """One field of one pydantic-ai class, and the canonical form's rule for it (None: on neither list)."""

    owner: str
    """The owner as pydantic-ai's JSON names it: `request`, `response`, a part kind, `retry`, `failed-attempt`."""
    class_name: str
    """The class that declares it, e.g. `ToolReturnPart`."""
    field: str
    """The dataclass field."""
    rule: FieldRule | None
    """What the canonical form does with it."""


def _union_members(annotation: Any) -> Iterator[type]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        yield from _union_members(typing.get_args(annotation)[0])
    elif origin is typing.Union or origin is types.UnionType:
        for member in typing.get_args(annotation):
            yield from _union_members(member)
    elif isinstance(annotation, type):
        yield annotation


def _stored(cls: type) -> bool:
    """A class whose instances a history can hold: pydantic-ai's own, except the private ones other modules build
    while preparing a request and never store (2.78's `_RenderedCapabilityBody`, `_FrameworkNote` in `models`)."""
    module = cls.__module__
    return module.startswith("pydantic_ai") and (module == _messages.__name__ or not cls.__name__.startswith("_"))


def _with_subclasses(cls: type) -> Iterator[type]:
    yield cls
    for subclass in cls.__subclasses__():
        if _stored(subclass):
            yield from _with_subclasses(subclass)


def _part_kind(cls: type) -> str | None:
    for field in dataclasses.fields(cls):
        if field.name == "part_kind" and isinstance(field.default, str):
            return field.default
    return None


def message_classes() -> list[tuple[str, type]]:
    """(owner, class) for every pydantic-ai class whose fields a history holds, of the installed version."""
    found: list[tuple[str, type]] = [("request", _messages.ModelRequest), ("response", _messages.ModelResponse)]
    module = vars(_messages)
    for union in ("ModelRequestPart", "ModelResponsePart"):
        for member in _union_members(module[union]):
            for cls in _with_subclasses(member):
                kind = _part_kind(cls) if dataclasses.is_dataclass(cls) else None
                if kind is not None and (kind, cls) not in found:
                    found.append((kind, cls))
    for name, owner in (("RetryInfo", "retry"), ("ModelRequestAttempt", "failed-attempt")):
        if name in module:  # 2.60+ and 2.59+
            found.append((owner, module[name]))
    return found


def inventory() -> list[FieldEntry]:
    """Every field of every class `message_classes` names, with its rule (private `_` fields left out)."""
    entries: list[FieldEntry] = []
    seen: set[tuple[str, str]] = set()
    for owner, cls in message_classes():
        for field in dataclasses.fields(cls):
            if field.name.startswith("_") or (owner, field.name) in seen:
                continue
            seen.add((owner, field.name))
            entries.append(
                FieldEntry(owner=owner, class_name=cls.__name__, field=field.name, rule=rule_for(owner, field.name))
            )
    return entries


def inventory_json() -> str:
    """The inventory as JSON, for `agentrig matrix` to read from each environment it builds."""
    entries = inventory()
    document = {
        "pydantic_ai": PYDANTIC_AI_VERSION_TEXT,
        "fields": [
            {
                "owner": entry.owner,
                "class": entry.class_name,
                "field": entry.field,
                "how": entry.rule.how,
                "carried": entry.rule.how in ("carried", "verbatim"),
                "reason": entry.rule.note,
            }
            for entry in entries
            if entry.rule is not None
        ],
        "unknown": [
            {"owner": entry.owner, "class": entry.class_name, "field": entry.field}
            for entry in entries
            if entry.rule is None
        ],
    }
    return jsonio.dumps(document).decode()
