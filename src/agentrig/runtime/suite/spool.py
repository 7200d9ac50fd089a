"""A list that keeps its first items in memory and the rest, pickled, in an anonymous temporary file.

    spool = Spool[ScenarioResult]()
    index = spool.append(result)      # held while fewer than `in_memory` items are; pickled to disk after
    spool[index]                      # the item itself, or a fresh copy read back from the file

A run holds what it cannot stream (each loaded scenario until its turn, each result until the reports are
written) here: a run of thousands of scenarios costs the memory of `in_memory` of them, and a run of the usual
size never pays for pickling. The file has no name (it is gone when closed, or when the process dies).
"""

from __future__ import annotations

import pickle
import tempfile
import weakref
from collections.abc import Sequence
from typing import IO, Generic, NamedTuple, TypeVar, overload

__all__ = ["IN_MEMORY", "Spool", "SpoolView"]

T = TypeVar("T")

IN_MEMORY = 1000
"""Items a spool holds before it writes to disk. A loaded scenario is about 16 KB of objects and 2.7 KB pickled,
a result about 5 KB and 1.5 KB; pickling one and reading it back costs 0.1-0.15 ms, 1-2% of a scripted scenario."""


class _OnDisk(NamedTuple):
    """Where a spooled item's pickle is in the spool's file."""

    offset: int
    length: int


class Spool(Generic[T]):
    """Append-only; items come back by the index `append` returned. Not thread-safe.

    Spooling only saves memory, so it never fails a run: an item that cannot be pickled, or a temporary file that
    cannot be created or written (no usable temporary directory, a full disk), keeps the item in memory instead."""

    def __init__(self, *, in_memory: int | None = None) -> None:
        self._in_memory = IN_MEMORY if in_memory is None else in_memory
        self._items: list[T | _OnDisk] = []
        self._held = 0
        self._file: IO[bytes] | None = None
        self._end = 0

    def __len__(self) -> int:
        return len(self._items)

    def append(self, item: T) -> int:
        """Keep `item`; its index."""
        kept: T | _OnDisk = item
        if self._held >= self._in_memory:
            kept = self._spooled(item) or item
        if kept is item:
            self._held += 1
        self._items.append(kept)
        return len(self._items) - 1

    def _spooled(self, item: T) -> _OnDisk | None:
        try:
            data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
            if self._file is None:
                self._file = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the spool, closed by close())
                # Closed with the spool, and not left to the garbage collector's warning about an open file.
                weakref.finalize(self, self._file.close)
            self._file.seek(self._end)
            self._file.write(data)
        except Exception:  # unpicklable, or no disk to spool to: held in memory, as a short run holds everything
            return None
        place = _OnDisk(self._end, len(data))
        self._end += len(data)
        return place

    def __getitem__(self, index: int) -> T:
        kept = self._items[index]
        if not isinstance(kept, _OnDisk):
            return kept
        assert self._file is not None  # an item on disk was written to it
        self._file.seek(kept.offset)
        item: T = pickle.loads(self._file.read(kept.length))
        return item

    def close(self) -> None:
        """Drop every item (the file with them)."""
        self._items.clear()
        self._held = 0
        if self._file is not None:
            self._file.close()
            self._file = None


class SpoolView(Sequence[T]):
    """Some of a spool's items, in a given order (e.g. a run's results in scenario order, whatever finished first)."""

    def __init__(self, spool: Spool[T], indices: Sequence[int]) -> None:
        self._spool = spool
        self._indices = tuple(indices)

    def __len__(self) -> int:
        return len(self._indices)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return SpoolView(self._spool, self._indices[index])
        return self._spool[self._indices[index]]

    def __repr__(self) -> str:
        return f"SpoolView({len(self)} items)"
