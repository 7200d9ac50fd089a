"""What a replay holds where its source recorded nothing: a pydantic-ai dump does not keep a failed tool's error, so
the scenario scaffolded from it fails the call with a placeholder (`endings.UNKNOWN_FAILURE`), and its replay's
history holds that placeholder where the source run's history holds the real error text.

`agentrig diff` compares the two with only that text set aside: each failed result whose content is the
placeholder, on either side, matches the failed result of the same call at the same place on the other side, whatever
its text; everything else (the call, its tool, its outcome, every other message) must still be equal. The count of
texts set aside is said beside the verdict, so an exact replay with a named gap is never taken for a full one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agentrig.runtime.history.canonical import Message, Part, ToolReturnPart
from agentrig.runtime.scaffold.endings import UNKNOWN_FAILURE

__all__ = ["gap_note", "set_aside_unrecorded_errors"]


def _placeholder(part: Part) -> bool:
    """A failed result scaffold's `fail` rule wrote (`tool 'NAME' ... : <UNKNOWN_FAILURE>`, raised or scripted)."""
    return (
        isinstance(part, ToolReturnPart)
        and part.outcome == "failed"
        and isinstance(part.content, str)
        and part.content.endswith(f": {UNKNOWN_FAILURE}")
    )


def _same_call(first: Part, second: Part) -> bool:
    return (
        isinstance(first, ToolReturnPart)
        and isinstance(second, ToolReturnPart)
        and first.tool_call_id == second.tool_call_id
        and first.tool_name == second.tool_name
        and first.outcome == second.outcome == "failed"
    )


def set_aside_unrecorded_errors(
    first: Sequence[Message], second: Sequence[Message]
) -> tuple[list[Message], list[Message], int]:
    """Both histories with each placeholder's counterpart given the placeholder's text, and how many were set aside
    (the placeholders that met a different real text)."""
    left, right = list(first), list(second)
    count = 0
    for index, (a, b) in enumerate(zip(left, right, strict=False)):
        if a.kind != b.kind or len(a.parts) != len(b.parts):
            continue
        parts_a, parts_b = list(a.parts), list(b.parts)
        for number, (part_a, part_b) in enumerate(zip(parts_a, parts_b, strict=True)):
            if not isinstance(part_a, ToolReturnPart) or not isinstance(part_b, ToolReturnPart):
                continue
            if not _same_call(part_a, part_b) or part_a == part_b:
                continue
            if _placeholder(part_b):
                parts_a[number] = replace(part_a, content=part_b.content)
            elif _placeholder(part_a):
                parts_b[number] = replace(part_b, content=part_a.content)
            else:
                continue
            count += 1
        left[index], right[index] = a.with_parts(parts_a), b.with_parts(parts_b)
    return left, right, count


def gap_note(count: int) -> str:
    """The line `agentrig diff` adds when it set texts aside."""
    texts = "text" if count == 1 else "texts"
    return f"{count} tool error {texts} not recorded in the source (a pydantic-ai dump keeps none): set aside\n"
