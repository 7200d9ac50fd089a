"""Which values changed between two JSON documents, by key: `tool_kind: null → "output"`, not only "values differ".

The two documents (a scenario's masked raw dump on the baseline and on another version) are walked side by side:
objects key by key (keys on one side only are the new and removed keys `compare` already names), lists item by
item, re-aligned with `difflib` where items were inserted or removed (a new message, a new part), so one inserted
item does not make every later one look changed. Each scalar that differs is counted under its key, as compact
JSON on both sides. Pure data work.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["MAX_CHANGES", "MAX_VALUE_TEXT", "ValueChange", "merged", "value_changes"]

MAX_VALUE_TEXT = 60
"""A value longer than this (as compact JSON) is cut, with `…`."""
MAX_CHANGES = 40
"""At most this many distinct changes are kept per document pair (the most frequent first)."""
SAME_ITEM_RATIO = 0.5
"""How alike (difflib's ratio of their JSON) an item and its changed form are at least."""
MAX_PAIRING = 10_000
"""Stretches with more pairs than this to weigh are paired in order (a bound on the time one diff takes)."""


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class ValueChange:
    """One key whose value went from one thing to another, and how often."""

    key: str
    """The key the value sits under (`tool_kind`); `(document)` for a top-level scalar."""
    before: str
    """The baseline's value, as compact JSON (`null`)."""
    after: str
    """This version's value, as compact JSON (`"output"`)."""
    count: int = 1
    """How many times that change occurs in the document."""

    def text(self) -> str:
        """`tool_kind: null → "output"`."""
        return f"{self.key}: {self.before} → {self.after}"


def _compact(value: Any) -> str:
    text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return text if len(text) <= MAX_VALUE_TEXT else text[: MAX_VALUE_TEXT - 1] + "…"


def _walk(before: Any, after: Any, key: str, found: Counter[tuple[str, str, str]]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for name in before.keys() & after.keys():
            _walk(before[name], after[name], str(name), found)
        return
    if isinstance(before, list) and isinstance(after, list):
        _walk_lists(before, after, key, found)
        return
    if before != after or type(before) is not type(after):
        found[(key, _compact(before), _compact(after))] += 1


def _walk_lists(before: list[Any], after: list[Any], key: str, found: Counter[tuple[str, str, str]]) -> None:
    if len(before) == len(after):
        for old, new in zip(before, after, strict=True):
            _walk(old, new, key, found)
        return
    texts = [orjson.dumps(item, option=orjson.OPT_SORT_KEYS) for item in before]
    other = [orjson.dumps(item, option=orjson.OPT_SORT_KEYS) for item in after]
    matcher = difflib.SequenceMatcher(None, texts, other, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":  # equal, or only inserted or removed: no value changed in place
            continue
        for i, j in _pairs(texts[i1:i2], other[j1:j2]):
            _walk(before[i1 + i], after[j1 + j], key, found)


def _pairs(before: list[bytes], after: list[bytes]) -> list[tuple[int, int]]:
    """Which items of a changed stretch are the same item changed: all of them in order when the two stretches are
    as long, else each earlier item with the most similar later one still free, in order (an inserted message
    beside a changed one is not paired with it)."""
    if len(before) == len(after) or len(before) * len(after) > MAX_PAIRING:
        return [(i, i) for i in range(min(len(before), len(after)))]
    pairs: list[tuple[int, int]] = []
    start = 0
    for i, old in enumerate(before):
        scored = [
            (difflib.SequenceMatcher(None, old, after[j], autojunk=False).ratio(), j) for j in range(start, len(after))
        ]
        if not scored:
            break
        ratio, j = max(scored, key=lambda item: (item[0], -item[1]))
        if ratio >= SAME_ITEM_RATIO:
            pairs.append((i, j))
            start = j + 1
    return pairs


def value_changes(before: Any, after: Any) -> tuple[ValueChange, ...]:
    """The values that differ between two documents, by key, the most frequent first (at most `MAX_CHANGES`)."""
    found: Counter[tuple[str, str, str]] = Counter()
    _walk(before, after, "(document)", found)
    ranked = sorted(found.items(), key=lambda item: (-item[1], item[0]))[:MAX_CHANGES]
    return tuple(ValueChange(key=key, before=old, after=new, count=count) for (key, old, new), count in ranked)


def merged(changes: Iterable[ValueChange]) -> Counter[str]:
    """How many documents show each change (its `text()`), for a summary over many scenarios."""
    return Counter(change.text() for change in changes)
