"""Tool calls written as text: the parser behind fallback tool-call parsing (pure, no pydantic-ai).

Some models (small local ones, or providers without native tool calling) write a tool call into their text
instead of returning a structured call. When a response has no structured tool calls, the orchestrator asks
this module whether its text holds any, in one of two forms:

    <tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>

    ```json
    {"name": "bash", "arguments": {"command": "ls"}}
    ```

Each call gets a deterministic id, `fallback_<n>` (1-based, counted across the run), so histories of the
same scenario are identical on every run and every pydantic-ai version.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["FALLBACK_ID_PREFIX", "FallbackToolCall", "ParsedText", "parse_fallback_tool_calls"]

FALLBACK_ID_PREFIX = "fallback_"
"""Starts the id of every tool call parsed from text (`fallback_<n>`)."""

_TAGGED = re.compile(r"<tool_call>\s*(?P<body>.*?)\s*</tool_call>", re.DOTALL)
_FENCED = re.compile(r"```(?:json)?[ \t]*\n(?P<body>.*?)\n?```", re.DOTALL)


@dataclass(frozen=True, slots=True, kw_only=True)
class FallbackToolCall:
    """One tool call found in text."""

    tool_name: str
    """The `name` the model wrote."""
    args: dict[str, Any]
    """The `arguments` (or `args`/`parameters`) object; empty when the model gave none."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedText:
    """A text split into the tool calls it contains and whatever prose remains."""

    calls: tuple[FallbackToolCall, ...]
    """Tool calls in the order they appear."""
    remaining_text: str
    """The text with the tool-call blocks removed and surrounding whitespace stripped."""


def _as_call(body: str) -> FallbackToolCall | None:
    try:
        data: Any = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    name = data.get("name")
    if not isinstance(name, str) or not name:
        return None
    arguments: Any = next((data[key] for key in ("arguments", "args", "parameters") if key in data), {})
    if isinstance(arguments, str):  # some models double-encode the arguments
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return None
    return FallbackToolCall(tool_name=name, args=dict(arguments))


def parse_fallback_tool_calls(text: str) -> ParsedText:
    """Find tool calls written in `text`. `<tool_call>` blocks win; fenced JSON blocks are used only when there
    are none. A block that is not a JSON object with a string `name` is left in the text untouched."""
    for pattern in (_TAGGED, _FENCED):
        calls: list[FallbackToolCall] = []
        kept: list[str] = []
        position = 0
        for match in pattern.finditer(text):
            call = _as_call(match.group("body"))
            if call is None:
                continue
            calls.append(call)
            kept.append(text[position : match.start()])
            position = match.end()
        if calls:
            kept.append(text[position:])
            return ParsedText(calls=tuple(calls), remaining_text="".join(kept).strip())
    return ParsedText(calls=(), remaining_text=text)
