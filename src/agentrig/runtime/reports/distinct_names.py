"""Scenarios whose names redaction changed, kept apart: two scenarios never become one in a report.

A scenario's name, file or id can hold text that redaction replaces (a name that is an API key, or holds a
secret value from the environment). Both `sk-abc123...` and `sk-xyz987...` would read `[REDACTED]`, and a report,
a merge or the page would take them for one scenario (clicking one opened the other: issue 31). Each scenario whose
identifiers redaction changed gets a numbered marker instead, the same in all of its identifiers: `[REDACTED-1]`,
`[REDACTED-2]`, ... in report order. What was redacted stays redacted; only the markers differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentrig.runtime.history.redaction import REDACTED

__all__ = ["IDENTIFIERS", "DistinctNames"]

IDENTIFIERS = ("id", "name", "path", "output_dir")
"""The entry keys that tell one scenario from another."""


class DistinctNames:
    """Numbers the redaction markers in the identifiers of each scenario whose identifiers redaction changed."""

    def __init__(self) -> None:
        self._count = 0

    def apply(self, original: Mapping[str, Any], redacted: dict[str, Any]) -> dict[str, Any]:
        """`redacted` (the redacted copy of `original`), its changed identifiers given this scenario's marker."""
        changed = [
            key
            for key in IDENTIFIERS
            if isinstance(redacted.get(key), str) and redacted[key] != original.get(key) and REDACTED in redacted[key]
        ]
        if not changed:
            return redacted
        self._count += 1
        marker = f"[REDACTED-{self._count}]"
        return {**redacted, **{key: str(redacted[key]).replace(REDACTED, marker) for key in changed}}
