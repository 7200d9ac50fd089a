"""Per-run values, masked before two versions' files are compared: what differs between any two runs of one version.

Two runs of the same scenario on the same pydantic-ai version differ only in values drawn afresh on every run:
clocks (`timestamp`, 2.78's `request_timestamp` and `duration` on every response), ids (`run_id`,
`conversation_id`, `provider_response_id`, 2.78's capability `record_id`), and call ids pydantic-ai generates.
Masking only a list of today's keys leaves the next release's new clock or id unmasked, and every raw-dump diff
then differs between two runs of one version (2.78 did exactly that). So the rule is general, and has three parts:

- keys known to be per run (`NAMED_PER_RUN_KEYS`);
- keys whose name says they hold a clock reading or a duration (`PER_RUN_KEY_NAME`: `*_timestamp`, `*_at`,
  `duration`, `*_duration`, `elapsed`, `latency`, with an optional unit suffix);
- any string, under any key, whose whole value has the shape of a per-run value (`PER_RUN_SHAPES`): an ISO 8601
  date-time or duration, a UUID (optionally prefixed, `pyd_ai_<hex>`, `msg_<uuid>`), 32 hex digits, a ULID.

A masked value becomes `<per-run>`; a null stays null (a key that gains a value is a real change). `mask` also
says which keys it masked, so the report can name them. Pure data work: no pydantic-ai, no files.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MASK", "NAMED_PER_RUN_KEYS", "PER_RUN_KEY_NAME", "PER_RUN_SHAPES", "is_per_run_key", "mask"]

MASK = "<per-run>"
"""What a per-run value reads as after masking."""

NAMED_PER_RUN_KEYS = frozenset(
    {
        "timestamp",
        "created_at",
        "request_timestamp",  # pydantic-ai 2.78+: ModelResponse.request_timestamp
        "duration",  # pydantic-ai 2.78+: ModelResponse.duration
        "run_id",
        "conversation_id",  # pydantic-ai 2.54+
        "provider_response_id",
        "record_id",  # pydantic-ai 2.78+: a capability part's uuid7
        "capability_id",  # pydantic-ai 2.78+: the run id of the capability that enqueued a part
    }
)
"""Keys whose values are drawn afresh on every run, whatever they look like."""

PER_RUN_KEY_NAME = re.compile(
    r"(?:^|_)(?:timestamp|at|duration|elapsed|latency)(?:_(?:s|ms|us|ns|seconds|secs|millis))?$"
)
"""Key names that say the value is a clock reading or a duration (`started_at`, `duration_ms`, `latency_s`)."""

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
PER_RUN_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "an ISO 8601 date-time",
        re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"),
    ),
    (
        "an ISO 8601 duration",
        re.compile(r"-?P(?=\d|T\d)(?:\d+Y)?(?:\d+M)?(?:\d+W)?(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?"),
    ),
    ("a UUID", re.compile(rf"(?:urn:uuid:)?(?:[A-Za-z][A-Za-z0-9]*[_-])*{_UUID}")),
    # pydantic-ai's generated tool call ids are `pyd_ai_<uuid4 hex>`.
    ("32 hex digits, optionally prefixed (`pyd_ai_…`)", re.compile(r"(?:[A-Za-z][A-Za-z0-9]*[_-])*[0-9a-f]{32}")),
    ("a ULID", re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")),
)
"""Shapes of a whole string value that only a clock or a random source produces."""


def is_per_run_key(key: str) -> bool:
    """True when a key's values are per run by its name alone."""
    return key in NAMED_PER_RUN_KEYS or PER_RUN_KEY_NAME.search(key) is not None


def _per_run_string(value: str) -> bool:
    return len(value) <= 80 and any(pattern.fullmatch(value) for _, pattern in PER_RUN_SHAPES)


def mask(value: Any, masked_keys: set[str] | None = None) -> Any:
    """`value` with its per-run values replaced by `MASK`; the keys masked are added to `masked_keys` (a string in
    a list counts under the list's key)."""
    found: set[str] = masked_keys if masked_keys is not None else set()
    return _mask(value, "", found)


def _mask(value: Any, key: str, found: set[str]) -> Any:
    if isinstance(value, dict):
        result: dict[str, Any] = {}
        for name, item in value.items():
            if item is not None and is_per_run_key(name) and not isinstance(item, dict | list):
                result[name] = MASK
                found.add(name)
            else:
                result[name] = _mask(item, name, found)
        return result
    if isinstance(value, list):
        return [_mask(item, key, found) for item in value]
    if isinstance(value, str) and _per_run_string(value):
        if key:
            found.add(key)
        return MASK
    return value
