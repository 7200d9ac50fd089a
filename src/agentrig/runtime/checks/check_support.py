"""Small pieces every expectation checker shares: skipped checks, diffs."""

from __future__ import annotations

import difflib

from agentrig.runtime.history.canonical import JsonValue
from agentrig.runtime.history.redaction import redact
from agentrig.runtime.history.run_records import Check
from agentrig.runtime.runfolder import jsonio

__all__ = ["SCRIPT_ONLY", "as_json", "as_tuple", "skip_check", "unified_diff"]

SCRIPT_ONLY = "only a scripted model makes this exact; the run used a real model"
"""Why an expectation is skipped on a real model's run."""


def unified_diff(expected: str, actual: str, *, expected_label: str = "expected", actual_label: str = "actual") -> str:
    """A unified diff of two texts, empty when they are equal; API keys are redacted in both texts first.

    Redacting the diff afterwards is too late for a key of several lines (a PEM key): the diff puts each of its
    lines on a line of its own, behind a `+` or `-`, and the key as a whole is in none of them."""
    lines = difflib.unified_diff(
        redact(expected).splitlines(keepends=True),
        redact(actual).splitlines(keepends=True),
        fromfile=expected_label,
        tofile=actual_label,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def as_json(value: object) -> str:
    """`value` as compact JSON text, for a check's detail: what report.json holds and a reader can paste, never a
    Python repr (`{'a': None}` is no JSON; `{"a":null}` is)."""
    return jsonio.dumps(value).decode("utf-8")


def as_tuple(value: tuple[str, ...] | str) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else value


def skip_check(name: str, expected: JsonValue, reason: str = SCRIPT_ONLY) -> Check:
    return Check(name=name, passed=True, expected=expected, skipped_reason=reason)
