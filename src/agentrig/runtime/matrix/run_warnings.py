"""The warnings a scenario showed on each version (report.json's `warnings`), and those new against the baseline.

A deprecation pydantic-ai starts to raise is the first sign of a break to come: the matrix names, beside a version,
each warning a scenario showed there that the same scenario did not show on the baseline. A record is
`{"category", "message", "module", "count"}` (runtime/history/warning_records.py); two records are the same
warning when category, message and module agree. A report written before warnings were recorded has no key: none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["SeenWarning", "new_warnings", "scenario_warnings"]


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class SeenWarning:
    """One distinct warning a scenario showed."""

    category: str
    """The warning's class name (`DeprecatedModelWarning`)."""
    message: str
    """Its text."""
    module: str
    """The module it is attributed to (`pydantic_ai.providers`)."""
    count: int = 1
    """How many times it was shown."""

    @property
    def key(self) -> tuple[str, str, str]:
        """What makes two records the same warning."""
        return (self.category, self.message, self.module)

    def text(self) -> str:
        """`DeprecatedModelWarning (pydantic_ai.providers): the message`."""
        return f"{self.category} ({self.module}): {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"category": self.category, "message": self.message, "module": self.module, "count": self.count}


def scenario_warnings(entry: Mapping[str, Any]) -> tuple[SeenWarning, ...]:
    """The warnings of one report.json entry (none when the key is absent); a record without the three strings is
    a ValueError (the report is not one agentrig wrote)."""
    records = entry.get("warnings")
    if records is None:
        return ()
    if not isinstance(records, list):
        raise ValueError(f"scenario {entry.get('name')!r}: warnings: expected a list")
    found: list[SeenWarning] = []
    for number, record in enumerate(records):
        if not isinstance(record, dict) or not all(
            isinstance(record.get(key), str) for key in ("category", "message", "module")
        ):
            raise ValueError(
                f"scenario {entry.get('name')!r}: warnings[{number}]: expected category, message and module"
            )
        count = record.get("count", 1)
        found.append(
            SeenWarning(
                category=record["category"],
                message=record["message"],
                module=record["module"],
                count=count if isinstance(count, int) else 1,
            )
        )
    return tuple(sorted(found))


def new_warnings(baseline: tuple[SeenWarning, ...], other: tuple[SeenWarning, ...]) -> tuple[SeenWarning, ...]:
    """The warnings of `other` that `baseline` does not have (same category, message and module)."""
    known = {warning.key for warning in baseline}
    return tuple(warning for warning in other if warning.key not in known)
