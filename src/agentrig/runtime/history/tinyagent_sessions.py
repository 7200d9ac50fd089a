"""tunacode session files and tinyagent usage: reading them into agentrig's session shape.

tunacode (0.2.x, on tinyagent) saves a session as one JSON object: `version` 1, `session_id`,
`project_id`, `created_at`, `last_modified`, `working_directory`, `selected_skill_names`,
`current_model`, `session_total_usage` (tinyagent usage: `input`, `output`, `cache_read`,
`cache_write`, `total_tokens` and a `cost` object), `thoughts`, `messages` (tinyagent message
dicts) and `compaction` (null, or `summary`, `compacted_message_count`, `tokens_before`,
`tokens_after`, `compaction_count`, `previous_summary`, `last_compacted_at`).

`normalize_session_json` rewrites such an object into agentrig's session shape before
`sessions.session_from_json` reads it: usage names mapped (requests and tool calls counted from the
messages), the compaction keys renamed, and the cost kept as the extra key `session_total_cost`, so
`tinyagent_export` can write it back. The messages stay tinyagent dicts: the wire reader converts them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.tinyagent_format import looks_like_tinyagent
from agentrig.runtime.history.usage import Usage

__all__ = [
    "COST_KEY",
    "is_tinyagent_session",
    "normalize_session_json",
    "usage_from_tinyagent",
    "usage_of_messages",
    "usage_to_tinyagent",
]

COST_KEY = "session_total_cost"
"""The extra session key that keeps tinyagent's `session_total_usage.cost` (agentrig tracks no cost)."""

ZERO_COST: Mapping[str, float] = {"input": 0.0, "output": 0.0, "cache_read": 0.0, "cache_write": 0.0, "total": 0.0}

# tunacode's compaction keys -> agentrig's.
_COMPACTION_KEYS = {"compaction_count": "count", "last_compacted_at": "created_at"}


def _count(data: Mapping[str, Any], key: str, where: str) -> int:
    value = data.get(key, 0)
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)  # tunacode writes ints; a JSON writer may have turned one into 3.0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise HistoryFormatError(f"expected a non-negative integer, got {value!r:.40}", field=f"{where}.{key}")
    return value


def usage_from_tinyagent(
    data: Mapping[str, Any], *, requests: int = 0, tool_calls: int = 0, where: str = "usage"
) -> Usage:
    """agentrig's `Usage` from a tinyagent usage object: `input`, `output`, `cache_read`, `cache_write`.

    `total_tokens` and `cost` have no counterpart: agentrig derives the total and tracks no cost.
    """
    return Usage(
        requests=requests,
        tool_calls=tool_calls,
        input_tokens=_count(data, "input", where),
        output_tokens=_count(data, "output", where),
        cache_read_tokens=_count(data, "cache_read", where),
        cache_write_tokens=_count(data, "cache_write", where),
    )


def usage_to_tinyagent(usage: Usage, *, cost: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A tinyagent usage object, complete as tunacode's `UsageMetrics.from_dict` requires; zero cost unless given."""
    return {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "cache_read": usage.cache_read_tokens,
        "cache_write": usage.cache_write_tokens,
        "total_tokens": usage.total_tokens,
        "cost": dict(cost if cost is not None else ZERO_COST),
    }


def usage_of_messages(items: Sequence[Any], *, field: str = "messages") -> Usage:
    """Usage summed over tinyagent messages: a request per assistant message, a tool call per tool result."""
    total = Usage()
    for index, item in enumerate(items):
        if type(item) is not dict:
            continue
        if item.get("role") == "tool_result":
            total = total + Usage(tool_calls=1)
        elif item.get("role") == "assistant":
            usage = item.get("usage")
            if usage is not None and type(usage) is not dict:
                raise HistoryFormatError("expected an object", field=f"{field}[{index}].usage")
            total = total + usage_from_tinyagent(usage or {}, requests=1, where=f"{field}[{index}].usage")
    return total


def _is_tinyagent_usage(usage: object) -> bool:
    return type(usage) is dict and "input_tokens" not in usage and ("input" in usage or "cost" in usage)


def is_tinyagent_session(data: Mapping[str, Any]) -> bool:
    """Whether a session object was written by tunacode: tinyagent messages or tinyagent usage names."""
    return looks_like_tinyagent(data.get("messages")) or _is_tinyagent_usage(data.get("session_total_usage"))


def normalize_session_json(data: Mapping[str, Any], *, source: str | Path | None = None) -> dict[str, Any]:
    """A tunacode session object in agentrig's session shape (messages left as they are); other keys kept."""
    result = dict(data)
    messages = data.get("messages")
    try:
        counted = usage_of_messages(messages) if type(messages) is list else Usage()
        usage = data.get("session_total_usage")
        if _is_tinyagent_usage(usage):
            assert isinstance(usage, dict)
            tokens = usage_from_tinyagent(
                usage, requests=counted.requests, tool_calls=counted.tool_calls, where="session_total_usage"
            )
            result["session_total_usage"] = tokens.to_json()
            if "cost" in usage:
                result[COST_KEY] = usage["cost"]
    except HistoryFormatError as error:
        raise HistoryFormatError(error.reason, path=source, field=error.field) from None
    compaction = data.get("compaction")
    if type(compaction) is dict:
        result["compaction"] = {_COMPACTION_KEYS.get(key, key): value for key, value in compaction.items()}
    return result
