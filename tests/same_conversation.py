"""Histories compared as goldens, diffs and recordings compare them: without the values pydantic-ai draws per run.

A history.json keeps the conversation id and run ids pydantic-ai drew for its run (an application may key on them);
two runs of one conversation, a recording and its replay, differ there by design and nowhere else
(`agentrig.runtime.history.per_run`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentrig.runtime.history.per_run import message_json_without_per_run_values

__all__ = ["compared_messages"]


def compared_messages(history: dict[str, Any] | Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of a history file's JSON (or of its `messages` list), without their per-run values."""
    messages: Sequence[dict[str, Any]] = history["messages"] if isinstance(history, dict) else history
    return [message_json_without_per_run_values(message) for message in messages]
