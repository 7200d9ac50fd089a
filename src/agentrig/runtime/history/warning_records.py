"""Warnings as data: what the `warnings` machinery showed while a scenario or a prompt ran, one record per distinct
warning, counted (report.json's `warnings` on each scenario, a prompt's `--json` record and its session file).

    {"category": "DeprecatedModelWarning", "message": "Model 'gpt-4o-2024-08-06' is deprecated ...",
     "module": "pydantic_ai.models", "count": 2}

A record is its category's class name, its message, and the module the warning is attributed to as the `warnings`
machinery sees it (the `__name__` its filters match, never a file path: two machines give the same value). Two
warnings with the same three are one record, and `count` says how many times it was shown. A list of records is
sorted by category, message and module. Framework-free, like the rest of the canonical layer; the capture itself is
`runtime/engine/warning_capture.py`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentrig.errors import HistoryFormatError

__all__ = ["WARNING_KEYS", "WarningRecord", "describe_warning", "merge_warnings", "warnings_from_json"]

WARNING_KEYS = frozenset({"category", "message", "module", "count"})
"""Every key of one warning record in report.json, a prompt's `--json` record and a session file."""


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class WarningRecord:
    """One distinct warning, and how many times it was shown."""

    category: str
    """The warning's class name: `DeprecatedModelWarning`, `UserWarning`, `DeprecationWarning`."""
    message: str
    """The warning's text (`str()` of the warning)."""
    module: str
    """The module the warning is attributed to, as the `warnings` filters match it (`pydantic_ai.models`)."""
    count: int = 1
    """How many times it was shown (the filters' `default` action shows a warning once per place it is raised)."""

    @property
    def key(self) -> tuple[str, str, str]:
        """What makes two records the same warning."""
        return (self.category, self.message, self.module)

    def to_json(self) -> dict[str, Any]:
        return {"category": self.category, "message": self.message, "module": self.module, "count": self.count}


def merge_warnings(*groups: Iterable[WarningRecord]) -> tuple[WarningRecord, ...]:
    """The records of `groups` as one sorted list: records of the same warning become one, their counts summed."""
    counts: dict[tuple[str, str, str], int] = {}
    for group in groups:
        for record in group:
            counts[record.key] = counts.get(record.key, 0) + record.count
    return tuple(
        WarningRecord(category=category, message=message, module=module, count=count)
        for (category, message, module), count in sorted(counts.items())
    )


def warnings_from_json(data: object, *, where: str) -> tuple[WarningRecord, ...]:
    """The records of a JSON list (a session file's `warnings`); `HistoryFormatError` naming `where[N].key` for an
    entry of the wrong shape."""
    if not isinstance(data, list):
        raise HistoryFormatError(f"expected a list, got {data!r:.60}", field=where)
    records: list[WarningRecord] = []
    for index, entry in enumerate(data):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        if not isinstance(entry, dict):
            raise HistoryFormatError(f"expected an object, got {entry!r:.60}", field=f"{where}[{index}]")
        fields: dict[str, Any] = {}
        for key in ("category", "message", "module"):
            value = entry.get(key)  # pyright: ignore[reportUnknownMemberType]
            if not isinstance(value, str):
                raise HistoryFormatError(f"expected a string, got {value!r:.60}", field=f"{where}[{index}].{key}")
            fields[key] = value
        count = entry.get("count", 1)  # pyright: ignore[reportUnknownMemberType]
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise HistoryFormatError(
                f"expected a count of at least 1, got {count!r:.60}", field=f"{where}[{index}].count"
            )
        records.append(WarningRecord(**fields, count=count))
    return merge_warnings(records)


def describe_warning(record: Mapping[str, Any]) -> str:
    """One warning (a record's JSON) as one line: `DeprecatedModelWarning: <message> (pydantic_ai.models)`, and
    `(module; 3 times)` when it was shown more than once. A message of several lines is joined into one."""
    message = " ".join(str(record.get("message", "")).splitlines())
    count = record.get("count", 1)
    times = f"; {count} times" if isinstance(count, int) and count > 1 else ""
    return f"{record.get('category')}: {message} ({record.get('module')}{times})"
