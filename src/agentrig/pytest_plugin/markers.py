"""Which scenario tags become pytest markers: a tag is a marker (`-m smoke`, `--strict-markers` clean) only when it
names no marker that pytest, another plugin or a conftest.py registers.

A marker registered by code may be acted on: pytest-timeout reads a `timeout` marker's argument and crashes the
session (INTERNALERROR) on a `timeout` tag, which has none; pytest's `skip` would skip the scenario; `flaky`,
`vcr` and a conftest's `slow` (with its `--runslow`) act likewise. So only two kinds of names become markers:
those agentrig registers itself (no one else registered them), and those the ini file's own `markers` lines
register (the user's labels, shared with their other tests). Whatever a tag is, `-k TAG` matches it.

The ini file's markers are read by `pytest_configure` (tryfirst, so before any other plugin's or conftest's
`pytest_configure` adds its own lines): everything registered later is someone else's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest

__all__ = ["BEHAVING_MARKERS", "TagMarkers"]

BEHAVING_MARKERS = frozenset({"skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings"})
"""pytest's own markers, which do something to a test: never a scenario's marker, even if an ini lists them."""

_MARKER_NAME = re.compile(r"^[A-Za-z_][\w.+\-]*$")
"""A tag that can be a marker: a name `-m` expressions accept and `markers` ini lines can register."""

_KEYWORDS = frozenset({"and", "or", "not", "True", "False", "None"})
"""Words of a `-m` expression, never marker names."""

TAG_DESCRIPTION = "agentrig scenario tag"


def _names(lines: Iterable[str]) -> set[str]:
    return {line.split(":")[0].split("(")[0].strip() for line in lines}


class TagMarkers:
    """One session's rule for tags; built in `pytest_configure` before other plugins register their markers."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.users = _names(config.getini("markers"))
        """The ini file's own markers: the user's labels."""
        self.ours: set[str] = set()
        """The tags agentrig registered as markers."""
        self._seen_lines = -1
        self._foreign: set[str] = set()

    def _others(self) -> set[str]:
        """The markers registered by pytest, plugins and conftests (a conftest may register one mid-collection)."""
        lines: list[str] = self.config.getini("markers")
        if len(lines) != self._seen_lines:
            self._seen_lines = len(lines)
            self._foreign = _names(line for line in lines if TAG_DESCRIPTION not in line) - self.users
        return self._foreign

    def is_marker(self, tag: str) -> bool:
        """Whether `tag` is applied as a marker to its scenario items (registered now if it is a new name)."""
        if tag in self.ours:
            return True
        if tag in BEHAVING_MARKERS or tag in _KEYWORDS or not _MARKER_NAME.match(tag) or tag in self._others():
            return False
        if tag not in self.users:
            self.config.addinivalue_line("markers", f"{tag}: {TAG_DESCRIPTION}")
            self._seen_lines += 1
            self.ours.add(tag)
        return True
