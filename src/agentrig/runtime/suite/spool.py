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
from typing import IO, Generic, TypeVar, overload

__all__ = ["IN_MEMORY", "Spool", "SpoolView"]

T = TypeVar("T")

IN_MEMORY = 1000
"""Items a spool holds before it writes to disk. A loaded scenario is about 16 KB of objects and 2.7 KB pickled,
a result about 5 KB and 1.5 KB; pickling one and reading it back costs 0.1-0.15 ms, 1-2% of a scripted scenario."""


class Spool(Generic[T]):
    """Append-only; items come back by the index `append` returned. Not thread-safe."""

    def __init__(self, *, in_memory: int | None = None) -> None:
        self._in_memory = IN_MEMORY if in_memory is None else in_memory
        self._held: list[T] = []
        self._spans: list[tuple[int, int]] = []  # (offset, length) in the file of each item past the held ones
        self._file: IO[bytes] | None = None
        self._end = 0

    def __len__(self) -> int:
        return len(self._held) + len(self._spans)

    def append(self, item: T) -> int:
        """Keep `item`; its index."""
        if len(self._held) < self._in_memory:
            self._held.append(item)
            return len(self._held) - 1
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the spool, closed by close())
            # Closed with the spool, and not left to the garbage collector's warning about an open file.
            weakref.finalize(self, self._file.close)
        data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
        self._file.seek(self._end)
        self._file.write(data)
        self._spans.append((self._end, len(data)))
        self._end += len(data)
        return len(self) - 1

    def __getitem__(self, index: int) -> T:
        if index < 0:
            index += len(self)
        if index < len(self._held):
            return self._held[index]
        offset, length = self._spans[index - len(self._held)]
        assert self._file is not None
        self._file.seek(offset)
        item: T = pickle.loads(self._file.read(length))
        return item

    def close(self) -> None:
        """Drop every item (the file with them)."""
        self._held.clear()
        self._spans.clear()
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
