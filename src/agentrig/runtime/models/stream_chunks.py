"""How a scripted response is cut into stream deltas, framework-free (both engines' scripts stream this way).

- text and thoughts: up to three chunks cut at word boundaries (`word_chunks`);
- tool-call arguments: JSON fragments of about a third of the arguments, none valid JSON on its own
  (`json_fragments`, `fragment_size`), so a consumer that parses early is caught.
"""

from __future__ import annotations

import json
import re
from itertools import pairwise
from typing import Any

__all__ = ["arguments_text", "fragment_size", "json_fragments", "word_chunks"]

_WORD = re.compile(r"\s+|\S+\s*")
_FRAGMENT_SIZE = 8
"""Characters per argument fragment (before growing one that would be valid JSON on its own), at least."""
_ARGUMENT_FRAGMENTS = 3
"""Fragments a call's arguments are cut into by default (fewer when they are short)."""
_TEXT_CHUNKS = 3
"""Deltas a text or thought is cut into by default: several, so joining is exercised, but few, since every
delta costs pydantic-ai's stream machinery a pass (one per word made streamed runs 1.35x as slow as plain)."""


def word_chunks(text: str, most: int = _TEXT_CHUNKS) -> list[str]:
    """`text` cut at word boundaries (after a word's trailing whitespace) into at most `most` chunks of about
    as many words each; joins back to `text`."""
    words: list[str] = _WORD.findall(text)
    if len(words) <= 1:
        return [text]
    count = min(most, len(words))
    bounds = [round(index * len(words) / count) for index in range(count + 1)]
    return ["".join(words[start:end]) for start, end in pairwise(bounds)]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def json_fragments(arguments: str, size: int = _FRAGMENT_SIZE) -> list[str]:
    """`arguments` cut into fragments of about `size` characters, none of them valid JSON on its own
    (a fragment that would be, like `123` or `"x"`, grows until it is not). Joins back to `arguments`.

    Arguments of fewer than two characters stay whole: nothing shorter can be cut."""
    if len(arguments) < 2:
        return [arguments]
    fragments: list[str] = []
    start = 0
    while start < len(arguments):
        end = min(start + size, len(arguments))
        while end < len(arguments) and _is_json(arguments[start:end]):
            end += 1
        fragments.append(arguments[start:end])
        start = end
    if len(fragments) > 1 and _is_json(fragments[-1]):
        fragments[-2:] = [fragments[-2] + fragments[-1]]
    if len(fragments) == 1 and len(arguments) >= 2:
        middle = len(arguments) // 2  # a whole JSON value: two halves of a JSON text are never valid alone
        fragments = [arguments[:middle], arguments[middle:]]
    return fragments


def fragment_size(arguments: str) -> int:
    """About a third of the arguments, and never under `_FRAGMENT_SIZE`: a few fragments per call, as the text."""
    return max(_FRAGMENT_SIZE, -(-len(arguments) // _ARGUMENT_FRAGMENTS))


def arguments_text(args: Any) -> str:
    if args is None:
        return ""
    if isinstance(args, str):
        return args
    return json.dumps(args, ensure_ascii=False)
