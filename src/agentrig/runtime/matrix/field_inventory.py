"""Which fields of pydantic-ai's messages the canonical form does not carry, per version: what an upgrade adds unseen.

Inside each environment, agentrig's own field inventory (`agentrig.runtime.models.message_fields.inventory_json`)
lists the fields of the installed `pydantic_ai.messages` classes: each one carried by the canonical form or not (and
why not), plus the fields on neither of agentrig's lists (`unknown`). It prints JSON:

    {"pydantic_ai": "2.78.0",
     "fields": [{"owner": "response", "class": "ModelResponse", "field": "duration", "how": "per-run",
                 "carried": false, "reason": "how long the request took"}, ...],
     "unknown": [{"owner": "tool-call", "class": "ToolCallPart", "field": "ui_visibility"}]}

`owner` (pydantic-ai's JSON name of the message or part), `field` and `carried` are required; `class`, `how` and
`reason` are shown when given. A field is the same field on two versions when owner and name agree.

The report names, for each version, the fields not carried that the baseline's list does not have, and every
unknown field. An environment whose agentrig has no inventory (an older agentrig) says so instead.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "INVENTORY_SCRIPT",
    "FieldEntry",
    "FieldInventory",
    "new_fields_not_carried",
    "parse_inventory",
    "read_inventory",
]

INVENTORY_SCRIPT = "from agentrig.runtime.models.message_fields import inventory_json; print(inventory_json())"
"""Run by an environment's own interpreter; prints the inventory's JSON."""


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class FieldEntry:
    """One field of a pydantic-ai message class."""

    owner: str
    """What it belongs to, as pydantic-ai's JSON names it (`response`, `tool-call`)."""
    field: str
    """The field's name."""
    class_name: str = ""
    """The class that declares it (`ModelResponse`); "" when the inventory does not say."""
    carried: bool = False
    """True when the canonical form keeps it."""
    how: str = ""
    """What the canonical form does with it (`per-run`, `derived`, `not carried`); "" when not said."""
    reason: str = ""
    """Why, in a few words (`how long the request took`)."""

    def name(self) -> str:
        """`ModelResponse.duration` (`response.duration` without a class)."""
        return f"{self.class_name or self.owner}.{self.field}"

    def text(self) -> str:
        """`ModelResponse.duration (per-run: how long the request took)`."""
        detail = ": ".join(part for part in (self.how, self.reason) if part)
        return self.name() + (f" ({detail})" if detail else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "owner": self.owner,
            "class": self.class_name,
            "field": self.field,
            "carried": self.carried,
            "how": self.how,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldInventory:
    """One environment's inventory, or why there is none."""

    pydantic_ai: str | None = None
    """The pydantic-ai version the inventory was taken on."""
    fields: tuple[FieldEntry, ...] = ()
    """Every field on agentrig's lists, carried or not."""
    unknown: tuple[FieldEntry, ...] = ()
    """Fields of the installed classes on neither of agentrig's lists."""
    error: str | None = None
    """Set when the inventory could not be taken: why."""


def _entries(items: Any, where: str, *, full: bool) -> tuple[FieldEntry, ...]:
    if not isinstance(items, list):
        raise ValueError(f"{where}: expected a list")
    entries: list[FieldEntry] = []
    for number, item in enumerate(items):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("owner"), str)
            or not isinstance(item.get("field"), str)
        ):
            raise ValueError(f"{where}[{number}]: expected an object with owner and field")
        carried = item.get("carried", False) if full else False
        if full and not isinstance(carried, bool):
            raise ValueError(f"{where}[{number}].carried: expected true or false")
        entries.append(
            FieldEntry(
                owner=item["owner"],
                field=item["field"],
                class_name=str(item.get("class") or ""),
                carried=bool(carried),
                how=str(item.get("how") or ""),
                reason=str(item.get("reason") or ""),
            )
        )
    return tuple(sorted(entries))


def parse_inventory(text: str) -> FieldInventory:
    """The inventory's JSON read; a ValueError names what is wrong with it."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ValueError(f"not JSON ({error})") from None
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    version = data.get("pydantic_ai")
    return FieldInventory(
        pydantic_ai=str(version) if version is not None else None,
        fields=_entries(data.get("fields", []), "fields", full=True),
        unknown=_entries(data.get("unknown", []), "unknown", full=False),
    )


def read_inventory(env_python: Path, env: Mapping[str, str]) -> FieldInventory:
    """The inventory taken inside an environment; `error` set when it cannot be taken."""
    try:
        completed = subprocess.run(
            [str(env_python), "-c", INVENTORY_SCRIPT], capture_output=True, text=True, env=dict(env), timeout=300
        )
    except (OSError, subprocess.SubprocessError) as error:
        return FieldInventory(error=f"cannot run {env_python}: {error}")
    if completed.returncode != 0:
        lines = [line for line in (completed.stderr or completed.stdout).strip().splitlines() if line.strip()]
        return FieldInventory(error=f"exit {completed.returncode}: {lines[-1].strip() if lines else 'no output'}")
    output = [line for line in completed.stdout.splitlines() if line.strip()]
    try:
        return parse_inventory(output[-1] if output else "")
    except ValueError as error:
        return FieldInventory(error=f"its JSON cannot be read: {error}")


def new_fields_not_carried(baseline: FieldInventory, other: FieldInventory) -> tuple[FieldEntry, ...]:
    """The fields `other` does not carry that the baseline's list lacks (all of them when the baseline has none)."""
    known = {(entry.owner, entry.field) for entry in baseline.fields}
    return tuple(entry for entry in other.fields if not entry.carried and (entry.owner, entry.field) not in known)
