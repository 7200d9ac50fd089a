"""`--shard K/N --durations REPORT`: shards balanced by an earlier run's durations. Whatever the file holds (or
fails to), the shards partition the suite: each scenario in exactly one, none dropped."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.suite.selection import shard_members
from agentrig.runtime.suite.shard_plan import COUNT_PLAN, Durations, deal_by_durations, for_selection, read_durations

ids = st.lists(st.text(min_size=1, max_size=12), min_size=0, max_size=40, unique=True)
seconds = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(ids, st.dictionaries(st.text(min_size=1, max_size=12), seconds, max_size=30), st.integers(1, 7), st.data())
def test_shards_partition_the_suite_for_any_durations(
    scenario_ids: list[str], extra: dict[str, float], count: int, data: st.DataObject
) -> None:
    # Durations for some of the ids (the others are new), plus ids the suite no longer has (stale entries).
    known = data.draw(st.lists(st.sampled_from(scenario_ids), unique=True) if scenario_ids else st.just([]))
    durations = extra | {scenario_id: data.draw(seconds) for scenario_id in known}

    shards = [shard_members(scenario_ids, (index, count), durations) for index in range(1, count + 1)]

    assert sum(len(shard) for shard in shards) == len(scenario_ids)  # pairwise disjoint
    assert set().union(*shards) == set(scenario_ids)  # and nothing dropped
    # The same file gives the same plan whatever order the scenarios were found in.
    assert shards == [shard_members(reversed(scenario_ids), (index, count), durations) for index in range(1, count + 1)]


def test_a_slow_scenario_gets_a_shard_of_its_own() -> None:
    ordered = [f"s{number}" for number in range(9)]
    durations = {"s0": 10.0} | {f"s{number}": 1.0 for number in range(1, 9)}

    shards = deal_by_durations(ordered, 3, durations)

    assert shards[0] == ["s0"]
    assert sorted(len(shard) for shard in shards[1:]) == [4, 4]
    by_count = [ordered[index::3] for index in range(3)]
    slowest_by_count = max(sum(durations[item] for item in shard) for shard in by_count)
    slowest = max(sum(durations[item] for item in shard) for shard in shards)
    assert (slowest, slowest_by_count) == (10.0, 12.0)


def report(tmp_path: Path, entries: object) -> Path:
    path = tmp_path / "report.json"
    path.write_bytes(jsonio.dumps({"format": "agentrig.report/1", "scenarios": entries}))
    return path


def test_durations_are_read_from_a_report_or_its_directory(tmp_path: Path) -> None:
    report(tmp_path, [{"id": "a.yaml::a", "duration_s": 4.6}, {"id": "b.yaml::b", "duration_s": 0.2}])

    from_file = read_durations(tmp_path / "report.json")
    from_directory = read_durations(tmp_path)

    assert from_file.seconds == {"a.yaml::a": 4.6, "b.yaml::b": 0.2}
    assert from_file.note is None
    assert from_file.label.startswith("durations ")
    assert from_directory.label == from_file.label  # the label is the durations', not the path's


def test_a_missing_corrupt_or_malformed_file_falls_back_to_count_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "corrupt.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "other.json").write_text('{"history": []}', encoding="utf-8")
    cases = {
        tmp_path / "missing.json": "not usable (",
        tmp_path / "corrupt.json": "invalid JSON",
        tmp_path / "other.json": "not an agentrig report.json",
        report(tmp_path, [{"id": "a", "duration_s": -1}]): "scenarios[0] lacks an id or a non-negative duration_s",
    }
    for path, reason in cases.items():
        durations = read_durations(path)
        assert (durations.seconds, durations.label) == ({}, COUNT_PLAN), path
        assert durations.note is not None
        assert durations.note.startswith(f"--durations {path}: ")
        assert reason in durations.note
        assert durations.note.endswith("; shards balanced by count")


def test_a_stale_file_falls_back_and_new_scenarios_are_counted_at_the_mean(tmp_path: Path) -> None:
    durations = read_durations(report(tmp_path, [{"id": "gone", "duration_s": 3.0}, {"id": "a", "duration_s": 1.0}]))

    stale = for_selection(["b", "c"], durations)
    assert (stale.seconds, stale.label) == ({}, COUNT_PLAN)
    assert stale.note is not None
    assert "holds none of the 2 selected scenarios (stale?); shards balanced by count" in stale.note

    partly_new = for_selection(["a", "b", "c"], durations)
    assert partly_new.label == durations.label
    assert partly_new.note is not None
    assert "2 of 3 scenarios have no duration there (new?); each counts 1 s" in partly_new.note


def test_without_durations_shards_are_dealt_by_count_as_before() -> None:
    scenario_ids = [f"s{number}" for number in range(10)]
    unused = Durations(seconds={}, label=COUNT_PLAN)
    for index in (1, 2, 3):
        assert shard_members(scenario_ids, (index, 3), unused.seconds) == shard_members(scenario_ids, (index, 3))


def test_a_report_with_no_scenarios_falls_back_too(tmp_path: Path) -> None:
    durations = read_durations(report(tmp_path, []))
    assert (durations.seconds, durations.label) == ({}, COUNT_PLAN)
    assert durations.note is not None
    assert "the report holds no scenarios; shards balanced by count" in durations.note
