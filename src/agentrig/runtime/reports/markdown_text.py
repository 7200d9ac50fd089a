"""Text from a run made safe inside summary.md: what a model, a tool, a provider or a (tampered) report says is shown
as the text it is, never as markdown or HTML of its own (GitHub renders summary.md on the job's page, and raw HTML
there would draw images, links or a broken table).

    inline(text)        plain text in a sentence or a table cell: one line, markdown and HTML characters escaped
    code(text)          a code span that no backtick in `text` can close, on one line (`|` escaped in a table cell)
    fence(lines)        the backtick fence for a code block that no line of `lines` can close
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["code", "fence", "inline"]

# CommonMark lets any ASCII punctuation be escaped with a backslash; these are the ones that start markup or HTML,
# or end a table cell.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
_LINE_BREAKS = re.compile(r"[\r\n]+")
_BACKTICKS = re.compile(r"`+")


def _one_line(text: str) -> str:
    return _LINE_BREAKS.sub(" ", text)


def inline(text: object) -> str:
    """`text` as literal inline markdown on one line."""
    return _SPECIAL.sub(r"\\\1", _one_line(str(text)))


def code(text: object, *, in_table: bool = False) -> str:
    """`text` as a code span on one line, delimited by more backticks than its longest run. `in_table`: `|` escaped
    (a table cell ends at a bare `|` even inside a code span, GitHub's table extension, which alone reads `\\|` there;
    elsewhere a code span shows a backslash as it is)."""
    content = _one_line(str(text))
    if in_table:
        content = content.replace("|", "\\|")
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    ticks = "`" * (longest + 1)
    padded = f" {content} " if content.startswith("`") or content.endswith("`") or longest else content
    return f"{ticks}{padded}{ticks}"


def fence(lines: Iterable[str]) -> str:
    """A backtick fence longer than any run of backticks in `lines` (at least three), so none can close it."""
    longest = max((len(run) for line in lines for run in _BACKTICKS.findall(line)), default=0)
    return "`" * max(3, longest + 1)
