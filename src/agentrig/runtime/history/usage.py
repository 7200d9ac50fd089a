"""Normalized token usage: one value for every supported pydantic-ai version and for stored JSON.

Exposes the pydantic-ai 2.x names (`input_tokens`, `output_tokens`, `cache_read_tokens`,
`cache_write_tokens`, `requests`, `tool_calls`) and the removal contract's seed names
(`request_tokens`, `response_tokens`, `cached_tokens`) as derived properties, so code written
against either keeps working. Built by duck typing from pydantic-ai's `RequestUsage`/`RunUsage`
(any version) without importing pydantic-ai.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentrig.errors import HistoryFormatError

# Stored JSON may use the names of pydantic-ai < 1.0 (`request_tokens`, `response_tokens`) or the
# seed contract's `cached_tokens`; pydantic-ai itself still accepts the first two as aliases on load.
_JSON_ALIASES: dict[str, str] = {
    "request_tokens": "input_tokens",
    "response_tokens": "output_tokens",
    "cached_tokens": "cache_read_tokens",
}
_COUNTERS = ("requests", "tool_calls", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token usage of one request, one turn or a whole session."""

    requests: int = 0
    """Model requests made."""
    tool_calls: int = 0
    """Function tool calls that ran and returned (pydantic-ai's count; not retried, failed, deferred or output
    tool calls)."""
    input_tokens: int = 0
    """Tokens sent to the model (seed name: `request_tokens`)."""
    output_tokens: int = 0
    """Tokens the model wrote (seed name: `response_tokens`)."""
    cache_read_tokens: int = 0
    """Input tokens served from the provider's cache (seed name: `cached_tokens`)."""
    cache_write_tokens: int = 0
    """Input tokens written to the provider's cache."""
    estimated: bool = False
    """True when pydantic-ai estimated any part of it (FunctionModel without explicit usage)."""

    # --- the removal contract's names (update_usage() expects these) ---
    @property
    def request_tokens(self) -> int:
        return self.input_tokens

    @property
    def response_tokens(self) -> int:
        return self.output_tokens

    @property
    def cached_tokens(self) -> int:
        return self.cache_read_tokens

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            requests=self.requests + other.requests,
            tool_calls=self.tool_calls + other.tool_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            estimated=self.estimated or other.estimated,
        )

    @staticmethod
    def total(usages: Iterable[Usage]) -> Usage:
        """The sum of several usages."""
        result = Usage()
        for usage in usages:
            result = result + usage
        return result

    @staticmethod
    def from_object(value: Any, *, estimated: bool = False) -> Usage:
        """From a pydantic-ai `RequestUsage` (counts as one request) or `RunUsage`, of any supported version."""
        # RequestUsage.requests is a property that is always 1; RunUsage.requests is a field.
        return Usage(
            requests=int(getattr(value, "requests", 0) or 0),
            tool_calls=int(getattr(value, "tool_calls", 0) or 0),
            input_tokens=int(getattr(value, "input_tokens", 0) or 0),
            output_tokens=int(getattr(value, "output_tokens", 0) or 0),
            cache_read_tokens=int(getattr(value, "cache_read_tokens", 0) or 0),
            cache_write_tokens=int(getattr(value, "cache_write_tokens", 0) or 0),
            estimated=estimated,
        )

    @staticmethod
    def from_json(data: Mapping[str, Any], *, where: str = "usage") -> Usage:
        """From stored JSON, accepting old names. Unknown keys (pydantic-ai adds some per release) are ignored."""
        values: dict[str, int] = {}
        for key, raw in data.items():
            name = _JSON_ALIASES.get(key, key)
            if name not in _COUNTERS or (key != name and name in data):
                continue  # unknown key, or an old alias shadowed by the 2.x name written beside it
            if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
                raise HistoryFormatError(f"expected a non-negative integer, got {raw!r}", field=f"{where}.{key}")
            values[name] = raw
        estimated = data.get("estimated", False)
        if not isinstance(estimated, bool):  # bool("false") is True: never guess a flag from another type
            raise HistoryFormatError(f"expected true or false, got {estimated!r}", field=f"{where}.estimated")
        return Usage(estimated=estimated, **values)

    def to_json(self) -> dict[str, Any]:
        """The stored form: 2.x names, the seed names alongside, and the estimate flag."""
        return {
            "requests": self.requests,
            "tool_calls": self.tool_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "total_tokens": self.total_tokens,
            "request_tokens": self.request_tokens,
            "response_tokens": self.response_tokens,
            "cached_tokens": self.cached_tokens,
            "estimated": self.estimated,
        }
