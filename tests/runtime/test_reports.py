"""Run outputs: per-scenario files, report.json (declared keys only), junit.xml, summary.md, merge."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import InputError, UsageError
from agentrig.runtime.history.sessions import load_session
from agentrig.runtime.history.wire import loads_history
from agentrig.runtime.reports.report_files import render_summary, summary_line
from agentrig.runtime.runfolder.jsonio import read_json_file
from agentrig.runtime.suite.outputs.reports import (
    CHECK_KEYS,
    ERROR_KEYS,
    REPORT_FORMAT,
    REPORT_KEYS,
    SCENARIO_KEYS,
    SUMMARY_KEYS,
    TURN_KEYS,
    load_report,
    merge_reports,
)
from agentrig.runtime.suite.runner import RunOptions, SuiteResult, run_suite
from tests.runtime.runner_fakes import fake_execute
from tests.runtime.test_runner import write_scenario

USAGE_KEYS = frozenset(
    {
        "requests",
        "tool_calls",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "total_tokens",
        "request_tokens",
        "response_tokens",
        "cached_tokens",
        "estimated",
    }
)


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    write_scenario(directory, "alpha")
    write_scenario(directory, "beta", text="wrong")
    write_scenario(directory, "gamma")
    (directory / "limited.yaml").write_text(
        "name: limited\ntags: [net]\nturns:\n  - user: hi\n    model:\n"
        "      - error: {kind: rate_limit, message: '429'}\nexpect: {invariants: none}\n",
        encoding="utf-8",
    )
    (directory / "tools.yaml").write_text(
        """name: tools
turns:
  - user: list
    model:
      - tool_calls: [{id: tc_1, name: bash, args: {command: ls}}]
        usage: {input_tokens: 100, output_tokens: 10}
      - text: done
        usage: {input_tokens: 120, output_tokens: 3}
    expect:
      tool_calls: {sequence: [{name: bash, args: {command: ls}}]}
""",
        encoding="utf-8",
    )
    return directory


def run(directory: Path, out: Path, **kwargs: Any) -> SuiteResult:
    return run_suite(RunOptions(paths=(directory,), out_dir=out, **kwargs), execute=fake_execute)


def assert_declared(data: dict[str, Any], declared: frozenset[str], where: str) -> None:
    undeclared = set(data) - declared
    assert not undeclared, f"{where}: undeclared keys {undeclared}"


def test_report_json_has_only_declared_keys(suite_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    suite = run(suite_dir, out, shard=None)
    report = read_json_file(out / "report.json")
    assert report["format"] == REPORT_FORMAT
    assert_declared(report, REPORT_KEYS, "report")
    assert set(report["summary"]) == SUMMARY_KEYS
    assert report["summary"] | {"duration_s": 0} == {
        "passed": 3,
        "failed": 1,
        "error": 1,
        "skipped": 0,
        "total": 5,
        "duration_s": 0,
    }
    assert report["pydantic_ai_version"]
    assert [s["name"] for s in report["scenarios"]] == [r.name for r in suite.results]
    for scenario in report["scenarios"]:
        assert set(scenario) == SCENARIO_KEYS
        assert set(scenario["usage"]) == USAGE_KEYS
        for turn in scenario["turns"]:
            assert set(turn) == TURN_KEYS
            assert set(turn["usage"]) == USAGE_KEYS
            if turn["error"] is not None:
                assert set(turn["error"]) == ERROR_KEYS
        for check in scenario["checks"]:
            assert set(check) == CHECK_KEYS
    limited = next(s for s in report["scenarios"] if s["name"] == "limited")
    assert limited["error"] == {"kind": "rate_limit", "message": "429"}
    assert limited["tags"] == ["net"]


def test_per_scenario_files(suite_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    suite = run(suite_dir, out)
    tools = out / "scenarios" / "tools"
    assert sorted(p.name for p in tools.iterdir()) == [
        "events.jsonl",
        "history.json",
        "pydantic_ai_dump.json",
        "session.json",
        "usage.json",
    ]
    result = next(r for r in suite.results if r.name == "tools")
    assert result.history == ()  # written, so not held: memory stays flat over thousands of scenarios
    assert result.turns
    assert all(turn.new_messages == () for turn in result.turns)
    history = loads_history((tools / "history.json").read_bytes())
    assert "tool-call" in [part.part_kind for message in history for part in message.parts]
    assert list(load_session(tools / "session.json").messages) == history
    usage = read_json_file(tools / "usage.json")
    assert [turn["input_tokens"] for turn in usage["turns"]] == [220]
    assert usage["total"]["requests"] == 2
    checks = next(s for s in read_json_file(out / "report.json")["scenarios"] if s["name"] == "tools")["checks"]
    assert [c["name"] for c in checks][:2] == [
        "turn 1: tool_calls.sequence",
        "scenario: invariant no_dangling_tool_calls",
    ]
    assert all(c["passed"] for c in checks)
    assert (tools / "pydantic_ai_dump.json").read_bytes() == b'[{"kind": "request", "parts": []}]'


def test_junit_xml(suite_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(suite_dir, out)
    root = ElementTree.parse(out / "junit.xml").getroot()
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "5",
        "1",
        "1",
        "0",
    )
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert set(cases) == {"alpha", "beta", "gamma", "limited", "tools"}
    assert cases["alpha"].get("classname") == f"{suite_dir.as_posix().strip('/').replace('/', '.')}.alpha"
    failure = cases["beta"].find("failure")
    assert failure is not None
    assert failure.get("message") == "1 check(s) failed: turn 1: output.equals"
    assert 'expected: "done"' in (failure.text or "") or "expected: done" in (failure.text or "")
    assert "actual:   wrong" in (failure.text or "")
    error = cases["limited"].find("error")
    assert error is not None
    assert error.get("type") == "rate_limit"
    assert cases["alpha"].find("failure") is None


def test_skipped_scenarios_in_junit_and_summary(tmp_path: Path) -> None:
    directory = tmp_path / "s"
    directory.mkdir()
    write_scenario(directory, "first", text="wrong")
    write_scenario(directory, "second")
    out = tmp_path / "out"
    run(directory, out, fail_fast=True)
    root = ElementTree.parse(out / "junit.xml").getroot()
    skipped = root.find("testsuite/testcase[@name='second']/skipped")
    assert skipped is not None
    assert "-x" in (skipped.get("message") or "")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## agentrig: 0 passed, 1 failed, 1 skipped\n")


def test_summary_markdown(suite_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(suite_dir, out)
    text = (out / "summary.md").read_text(encoding="utf-8")
    assert text.startswith("## agentrig: 3 passed, 1 failed, 0 skipped, 1 error\n")
    assert "| ✅ passed | `tools` |" in text
    assert "### Failures" in text
    assert "#### `beta`" in text
    assert "- **turn 1: output.equals** expected `done`, got `wrong`" in text
    assert "- **error** `rate_limit`: 429" in text
    assert "+wrong" in text  # the diff of the equals check
    assert render_summary(load_report(out)) == text


def test_summary_line_shape() -> None:
    base = {"passed": 3, "failed": 1, "skipped": 2, "error": 0}
    assert summary_line(base) == "3 passed, 1 failed, 2 skipped"
    assert summary_line(base | {"error": 1}) == "3 passed, 1 failed, 2 skipped, 1 error"
    assert summary_line(base | {"error": 2}) == "3 passed, 1 failed, 2 skipped, 2 errors"


def test_out_dir_safety(suite_dir: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(UsageError, match="not empty"):
        run(suite_dir, foreign)
    assert (foreign / "notes.txt").read_text(encoding="utf-8") == "keep me"
    # a previous agentrig output is reused and the folders of the scenarios this run did not select are removed
    out = tmp_path / "out"
    run(suite_dir, out)
    assert len(list((out / "scenarios").iterdir())) > 1
    run(suite_dir, out, keyword="alpha")
    assert sorted(p.name for p in (out / "scenarios").iterdir()) == ["alpha"]
    # a folder of the user's among them is not agentrig's: the run refuses before it touches anything
    (out / "scenarios" / "mine").mkdir()
    (out / "scenarios" / "mine" / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(UsageError, match="scenarios/mine: agentrig did not make it"):
        run(suite_dir, out)
    assert (out / "scenarios" / "mine" / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_merge_of_two_shards_equals_an_unsharded_run(suite_dir: Path, tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    run(suite_dir, whole)
    shard_dirs = [tmp_path / f"shard-{index}" for index in (1, 2)]
    for index, directory in enumerate(shard_dirs, start=1):
        run(suite_dir, directory, shard=(index, 2))
        assert load_report(directory)["shard"] == {"index": index, "count": 2, "plan": "count"}
    merged_dir = tmp_path / "merged"
    merged = merge_reports(shard_dirs, merged_dir)
    expected = load_report(whole)
    assert_declared(merged, REPORT_KEYS, "merged report")

    def stable(report: dict[str, Any]) -> Any:
        counts = {k: v for k, v in report["summary"].items() if k != "duration_s"}
        scenarios = [(s["id"], s["status"], [c["name"] for c in s["checks"]], s["usage"]) for s in report["scenarios"]]
        return counts, scenarios

    assert stable(merged) == stable(expected)
    assert merged["shard"] is None
    assert merged["merged_from"] == [str(d) for d in shard_dirs]
    assert sorted(p.name for p in (merged_dir / "scenarios").iterdir()) == sorted(
        p.name for p in (whole / "scenarios").iterdir()
    )
    assert (merged_dir / "junit.xml").is_file()
    assert (
        (merged_dir / "summary.md")
        .read_text(encoding="utf-8")
        .startswith("## agentrig: 3 passed, 1 failed, 0 skipped, 1 error\n")
    )


def test_merge_rejects_overlaps_and_foreign_dirs(suite_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(suite_dir, out)
    with pytest.raises(InputError, match="in both"):
        merge_reports([out, out], tmp_path / "m")
    with pytest.raises(InputError, match=r"no report\.json"):
        merge_reports([tmp_path / "scenarios"], tmp_path / "m2")
    with pytest.raises(UsageError, match="also an input"):
        merge_reports([out], out)
