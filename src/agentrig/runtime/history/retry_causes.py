"""Why a retry was asked for: the cause pydantic-ai 2.60+ records on it, and the cause its content implies.

pydantic-ai 2.60 added `RetryInfo.cause` to a retry (`ToolReturnPart(outcome='retried').retry`,
`RetryFeedbackPart.retry`), and it changes what the model is sent: a `no_output` retry is rendered in the system
voice, a `validation_error` in a validation-errors tag, any other in a feedback tag (2.78 `messages.py`). Earlier
releases record no cause, yet write the same content for the same reason. So the canonical form keeps a cause only
where the content does not already imply it (`implied_cause`): a retry of any release reads the same, its goldens
stay identical on every pin, and the way back to 2.60+ restores the cause pydantic-ai wrote.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NO_OUTPUT_TEXTS", "implied_cause", "stored_cause"]


def _no_output_texts() -> frozenset[str]:
    # pydantic-ai 2.78 `_NO_OUTPUT_FEEDBACK_TEXTS`: "Please " + the alternatives the agent loop offers, in its order,
    # joined by " or " (every release since 2.38 writes these same texts for a response with nothing usable).
    slots: tuple[tuple[str, ...], ...] = (
        ("return text",),
        ("include your response in a tool call", "call a tool"),
        ("return an image",),
    )
    texts: set[str] = set()

    def walk(slot: int, chosen: tuple[str, ...]) -> None:
        if slot == len(slots):
            texts.add(f"Please {' or '.join(chosen)}.")
            return
        walk(slot + 1, chosen)
        for alternative in slots[slot]:
            walk(slot + 1, (*chosen, alternative))

    walk(0, ())
    return frozenset(texts)


NO_OUTPUT_TEXTS: frozenset[str] = _no_output_texts()
"""The fixed texts of a retry asking for output after a response with nothing usable."""

_UNKNOWN_TOOL_PREFIX = "Unknown tool name: "
"""How pydantic-ai words a call to a tool it does not have (`tool_manager.py`, 2.38 to 2.78)."""


def implied_cause(content: object, *, tool_bound: bool) -> str:
    """The cause a retry with this content has unless it says otherwise."""
    if isinstance(content, list):
        return "validation_error"
    if isinstance(content, str):
        if tool_bound and content.startswith(_UNKNOWN_TOOL_PREFIX):
            return "unknown_tool"
        if not tool_bound and content in NO_OUTPUT_TEXTS:
            return "no_output"
    return "model_retry"


def stored_cause(retry: Any, content: object, *, tool_bound: bool) -> str | None:
    """The cause the canonical form keeps for pydantic-ai's `retry` object (a dict or None): None when the content
    implies it, or when there is none (a release before 2.60)."""
    if type(retry) is not dict:
        return None
    cause = retry.get("cause")
    if type(cause) is not str or cause == implied_cause(content, tool_bound=tool_bound):
        return None
    return cause
