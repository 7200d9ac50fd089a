"""A run holds neither its scenarios nor its results whole: both wait in spools, and the three report files are
written one scenario at a time. What a user sees must not change: the same results, the same bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import ScenarioError
from agentrig.runtime.reports.report_files import render_junit, render_summary, report_files
from agentrig.runtime.runfolder.jsonio import dumps, read_json_file
from agentrig.runtime.suite import spool
from agentrig.runtime.suite.outputs.reports import write_report_files
from agentrig.runtime.suite.runner import RunOptions, SuiteResult, run_suite
from agentrig.scenarios.loader import iter_scenarios, load_paths, validation_report
from tests.runtime.runner_fakes import fake_execute
from tests.runtime.test_runner import write_scenario


def timeless(value: Any) -> Any:
    """`value` with every `duration_s` zeroed: two runs differ only there."""
    if isinstance(value, dict):
        return {key: 0 if key == "duration_s" else timeless(item) for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [timeless(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return value


@pytest.fixture
def many(tmp_path: Path) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    for index in range(9):
        write_scenario(directory, f"s{index}", text="wrong" if index in (2, 6) else "done", tags=f"[t{index % 2}]")
    return directory


def run(directory: Path, out: Path, **options: Any) -> SuiteResult:
    return run_suite(RunOptions(paths=(directory,), out_dir=out, **options), execute=fake_execute)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_run_past_the_spools_limit_reports_what_a_run_in_memory_does(
    many: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    held = run(many, tmp_path / "held", jobs=jobs)
    monkeypatch.setattr(spool, "IN_MEMORY", 2)  # scenarios and results past the second go to disk and back
    spooled = run(many, tmp_path / "spooled", jobs=jobs)

    assert spooled.results[5] is not spooled.results[5]  # read back from the spool each time it is asked for
    assert [(r.name, r.status, r.checks) for r in spooled.results] == [
        (r.name, r.status, r.checks) for r in held.results
    ]
    assert spooled.counts == held.counts == {"passed": 7, "failed": 2, "error": 0, "skipped": 0}
    held_report = read_json_file(tmp_path / "held" / "report.json")
    assert timeless(read_json_file(tmp_path / "spooled" / "report.json")) == timeless(held_report)


def test_fail_fast_past_the_spools_limit_reports_the_rest_skipped(
    many: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spool, "IN_MEMORY", 1)
    suite = run(many, tmp_path / "out", fail_fast=True)
    assert [r.status for r in suite.results] == ["passed", "passed", "failed"] + ["skipped"] * 6
    report = read_json_file(tmp_path / "out" / "report.json")
    assert [s["status"] for s in report["scenarios"]] == [r.status for r in suite.results]
    assert (tmp_path / "out" / "scenarios" / "s8" / "usage.json").is_file()  # not run, and its folder says so


def test_streamed_report_files_are_what_the_whole_document_renders(many: Path, tmp_path: Path) -> None:
    run(many, tmp_path / "out", jobs=1)
    report = read_json_file(tmp_path / "out" / "report.json")
    assert (tmp_path / "out" / "junit.xml").read_bytes() == render_junit(report)
    assert (tmp_path / "out" / "summary.md").read_text(encoding="utf-8") == render_summary(report)
    for scenarios in (report["scenarios"], report["scenarios"][:1], []):
        document = {**report, "scenarios": scenarios}
        write_report_files(tmp_path / "again", document)
        assert (tmp_path / "again" / "report.json").read_bytes() == dumps(document, pretty=True)
        assert (tmp_path / "again" / "junit.xml").read_bytes() == render_junit(document)


def test_report_files_are_left_as_they_were_when_writing_fails(many: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(many, out)
    before = {name: (out / name).read_bytes() for name in ("report.json", "junit.xml", "summary.md")}
    head = {key: value for key, value in read_json_file(out / "report.json").items() if key != "scenarios"}

    first_entry = read_json_file(out / "report.json")["scenarios"][0]

    def broken_run() -> None:
        with report_files(out, head) as add:
            add(first_entry)
            raise RuntimeError("the run broke while its report was written")

    with pytest.raises(RuntimeError):
        broken_run()

    assert {name: (out / name).read_bytes() for name in before} == before
    assert sorted(path.name for path in out.iterdir()) == [
        ".agentrig-manifest.jsonl",
        "junit.xml",
        "report.html",
        "report.json",
        "scenarios",
        "summary.md",
    ]


def test_a_run_loads_scenarios_detached_file_by_file(many: Path) -> None:
    loaded = list(iter_scenarios([many]))
    assert loaded == load_paths([many])
    assert all(item.node is None for item in loaded)  # no parse tree held past its file's checks
    assert loaded[0].declares("tags")  # detached, top-level fields are still known
    assert not loaded[0].declares("golden")
    assert loaded[0].line_of("turns") == 4
    assert all(item.node is not None for item in validation_report([many]).scenarios)  # `validate` keeps them


def test_loading_stops_at_the_first_bad_file_with_its_first_error(many: Path) -> None:
    (many / "s3.yaml").write_text("name: s3\nturns: 7\nbogus: 1\n", encoding="utf-8")
    (many / "s5.yaml").write_text("name: [\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as raised:
        load_paths([many])
    expected = validation_report([many]).errors[0]
    assert raised.value.path == expected.path == many / "s3.yaml"
    assert (raised.value.line, raised.value.field) == (expected.line, expected.field)
