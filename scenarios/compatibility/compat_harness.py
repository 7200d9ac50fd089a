"""pydantic-ai-harness capabilities the harness scenarios attach by `module:attribute` (`requires: [harness]`).

Imported only when the scenario runs, after `requires` found pydantic-ai-harness installed (each pin resolves its
own release: 0.30 beside pydantic-ai 2.38, 0.31 beside 2.40, 0.59 and 0.60 beside 2.59 and 2.60, 0.36 beside 2.68).
"""

from __future__ import annotations

from typing import Any

from pydantic_ai_harness import ToolOutputLimits
from pydantic_ai_harness.tool_output_limits import Band, Truncate, TruncationStrategy


def truncate_tool_output() -> Any:
    """ToolOutputLimits as a capability factory: a tool result of 100 characters or more keeps its first 40."""
    return ToolOutputLimits(bands=[Band(over=100, action=Truncate(strategy=TruncationStrategy.head, max_chars=40))])
