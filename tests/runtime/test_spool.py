"""The spool a run holds its scenarios and results in: a thousand in memory, the rest on disk, all given back."""

from __future__ import annotations

import tempfile

import pytest

from agentrig.runtime.history.run_records import Check, ScenarioResult
from agentrig.runtime.suite.spool import Spool, SpoolView


def result(index: int) -> ScenarioResult:
    return ScenarioResult(
        name=f"s{index}",
        path=f"scenarios/s{index}.yaml",
        status="failed" if index % 3 else "passed",
        checks=(Check(name="turn 1: output.equals", passed=False, expected="x", actual=f"y{index}"),),
        tags=("a", f"t{index}"),
    )


def test_items_past_the_limit_are_read_back_equal_but_not_held() -> None:
    spool = Spool[ScenarioResult](in_memory=2)
    items = [result(index) for index in range(7)]
    indices = [spool.append(item) for item in items]

    assert indices == list(range(7))
    assert len(spool) == 7
    assert [spool[index] for index in indices] == items
    assert spool[0] is items[0]  # held
    assert spool[1] is items[1]
    assert spool[5] is not items[5]  # pickled, and read back
    assert spool[5] == items[5]
    assert spool[-1] == items[-1]


def test_a_view_gives_the_items_in_its_own_order() -> None:
    spool = Spool[ScenarioResult](in_memory=1)
    items = [result(index) for index in range(4)]
    for item in items:
        spool.append(item)

    view = SpoolView(spool, [3, 0, 2])

    assert len(view) == 3
    assert list(view) == [items[3], items[0], items[2]]
    assert list(view[1:]) == [items[0], items[2]]
    assert view[-1] == items[2]
    with pytest.raises(IndexError):
        view[3]


def test_close_drops_everything() -> None:
    spool = Spool[ScenarioResult](in_memory=1)
    spool.append(result(0))
    spool.append(result(1))
    spool.close()
    assert len(spool) == 0


def test_what_cannot_be_spooled_stays_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    spool = Spool[object](in_memory=1)
    spool.append(result(0))
    unpicklable = lambda: None  # noqa: E731 (a lambda is what pickle refuses)
    assert spool[spool.append(unpicklable)] is unpicklable

    def no_temporary_directory() -> None:
        raise FileNotFoundError("No usable temporary directory found")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_temporary_directory)
    items = [result(index) for index in range(1, 4)]
    indices = [spool.append(item) for item in items]
    assert [spool[index] for index in indices] == items  # a run goes on, holding them
    assert spool[indices[0]] is items[0]
