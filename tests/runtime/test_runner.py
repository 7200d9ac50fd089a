"""The suite runner with a fake engine: selection, sharding, ordering, -x, Ctrl-C, statuses, exit codes, -j 2."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from agentrig.errors import UsageError
from agentrig.runtime.history.run_records import ScenarioResult
from agentrig.runtime.suite.runner import (
    KeywordExpression,
    RunOptions,
    parse_shard,
    run_suite,
    select_scenarios,
    shard_members,
)
from agentrig.scenarios.loader import load_paths
from tests.runtime.runner_fakes import fake_execute


def write_scenario(directory: Path, name: str, *, text: str = "done", tags: str = "[]", extra: str = "") -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(
        f"""name: {name}
tags: {tags}
turns:
  - user: hello
    model:
      - text: "{text}"
        usage: {{input_tokens: 10, output_tokens: 2}}
    expect:
      output: {{equals: done}}
expect:
  invariants: none
{extra}""",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    write_scenario(directory, "alpha", tags="[tools, fast]")
    write_scenario(directory, "beta", tags="[slow]")
    write_scenario(directory, "gamma-retry", tags="[tools]")
    write_scenario(directory, "delta", text="wrong")
    return directory


def options(directory: Path, **kwargs: object) -> RunOptions:
    return RunOptions(paths=(directory,), out_dir=None, **kwargs)  # pyright: ignore[reportArgumentType]


def names(results: Sequence[ScenarioResult]) -> list[str]:
    return [r.name for r in results]


# --- -k ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("alpha", ["alpha"]),
        ("ALP", ["alpha"]),  # substring of the name, case-insensitive
        ("tools", ["alpha", "gamma-retry"]),  # a tag
        ("tools and not fast", ["gamma-retry"]),
        ("slow or retry", ["beta", "gamma-retry"]),
        ("not (tools or slow)", ["delta"]),
        ("a and (slow or fast)", ["alpha", "beta"]),
    ],
)
def test_keyword_selection(suite_dir: Path, expression: str, expected: list[str]) -> None:
    chosen = select_scenarios(load_paths([suite_dir]), keyword=expression, shard=None)
    assert sorted(item.name for item in chosen) == expected


@pytest.mark.parametrize("bad", ["", "tools and", "(tools", "tools)", "and tools", "not"])
def test_keyword_syntax_errors_are_usage_errors(bad: str) -> None:
    with pytest.raises(UsageError):
        KeywordExpression.parse(bad)


def test_keyword_selecting_nothing_is_a_usage_error(suite_dir: Path) -> None:
    with pytest.raises(UsageError, match="selects none"):
        run_suite(options(suite_dir, keyword="nothing-matches"), execute=fake_execute)


# --- --shard ----------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["1", "0/2", "3/2", "a/b", "1/0", "1/2/3", "1/99999999999999999999", "1/10001"])
def test_parse_shard_rejects(bad: str) -> None:
    with pytest.raises(UsageError):
        parse_shard(bad)


def test_shards_partition_and_are_stable() -> None:
    ids = [f"scenarios/s{i}.yaml::s{i}" for i in range(60)]
    for count in (1, 2, 3, 5):
        owners = [[k for k in range(1, count + 1) if i in shard_members(ids, (k, count))] for i in ids]
        assert all(len(owner) == 1 for owner in owners)  # every id in exactly one shard
    # stable for a fixed suite: the deal does not depend on the order the files were found in
    assert all(shard_members(ids, (k, 3)) == shard_members(reversed(ids), (k, 3)) for k in (1, 2, 3))


@pytest.mark.parametrize("count", [2, 3, 4, 7])
def test_shards_are_balanced(count: int) -> None:
    ids = [f"scenarios/s{i}.yaml::s{i}" for i in range(34)]
    sizes = sorted(len(shard_members(ids, (k, count))) for k in range(1, count + 1))
    assert sizes[-1] - sizes[0] <= 1, sizes  # a hash of each id alone gave 14, 9, 7 and 4 of 34 over 4 shards
    assert sum(sizes) == 34


def test_sharded_runs_cover_the_suite(suite_dir: Path) -> None:
    together: list[str] = []
    for index in (1, 2):
        together += names(run_suite(options(suite_dir, shard=(index, 2)), execute=fake_execute).results)
    assert sorted(together) == ["alpha", "beta", "delta", "gamma-retry"]


# --- statuses, order, exit codes --------------------------------------------------------------


def test_results_sorted_by_id_with_statuses_and_exit_code(suite_dir: Path) -> None:
    suite = run_suite(options(suite_dir), execute=fake_execute)
    assert names(suite.results) == ["alpha", "beta", "delta", "gamma-retry"]
    assert [r.status for r in suite.results] == ["passed", "passed", "failed", "passed"]
    assert suite.counts == {"passed": 3, "failed": 1, "error": 0, "skipped": 0}
    assert suite.exit_code == 1
    delta = suite.results[2]
    assert [c.name for c in delta.checks if not c.passed] == ["turn 1: output.equals"]
    assert delta.usage.requests == 1
    assert delta.usage.input_tokens == 10


def test_all_passing_exits_zero(suite_dir: Path) -> None:
    suite = run_suite(options(suite_dir, keyword="not delta"), execute=fake_execute)
    assert suite.exit_code == 0


def test_unexpected_provider_error_is_status_error_exit_3(tmp_path: Path) -> None:
    write_scenario(tmp_path, "ok")
    (tmp_path / "limited.yaml").write_text(
        "name: limited\nturns:\n  - user: hi\n    model:\n      - error: {kind: rate_limit, message: '429 slow down'}\n"
        "expect: {invariants: none}\n",
        encoding="utf-8",
    )
    write_scenario(tmp_path, "wrong", text="nope")
    suite = run_suite(options(tmp_path), execute=fake_execute)
    statuses = {r.name: r.status for r in suite.results}
    assert statuses == {"limited": "error", "ok": "passed", "wrong": "failed"}
    limited = next(r for r in suite.results if r.name == "limited")
    assert limited.error is not None
    assert limited.error.kind == "rate_limit"
    assert suite.exit_code == 3  # an error outranks a failure (docs/exit-codes.md)


def test_expected_provider_error_passes(tmp_path: Path) -> None:
    (tmp_path / "overflow.yaml").write_text(
        "name: overflow\nturns:\n  - user: hi\n    model:\n      - error: {kind: context_length, message: too long}\n"
        "    expect:\n      error: {kind: context_length, contains: too long}\nexpect: {invariants: none}\n",
        encoding="utf-8",
    )
    suite = run_suite(options(tmp_path), execute=fake_execute)
    assert [r.status for r in suite.results] == ["passed"]


def test_engine_crash_is_an_error_result_not_a_crash(tmp_path: Path) -> None:
    write_scenario(tmp_path, "boom", text="CRASH")
    write_scenario(tmp_path, "fine")
    suite = run_suite(options(tmp_path), execute=fake_execute)
    boom = suite.results[0]
    assert boom.status == "error"
    assert boom.error is not None
    assert boom.error.message == "RuntimeError: engine exploded"
    assert suite.results[1].status == "passed"
    assert suite.exit_code == 3


# --- -x and Ctrl-C ----------------------------------------------------------------------------


def test_fail_fast_skips_the_rest(tmp_path: Path) -> None:
    write_scenario(tmp_path, "a1")
    write_scenario(tmp_path, "a2", text="wrong")
    write_scenario(tmp_path, "a3")
    suite = run_suite(options(tmp_path, fail_fast=True), execute=fake_execute)
    assert [r.status for r in suite.results] == ["passed", "failed", "skipped"]
    assert "-x" in (suite.results[2].checks[0].skipped_reason or "")
    assert suite.exit_code == 1


def test_ctrl_c_marks_unfinished_skipped_and_exits_130(tmp_path: Path) -> None:
    write_scenario(tmp_path, "b1")
    write_scenario(tmp_path, "b2", text="CTRL-C")
    write_scenario(tmp_path, "b3")
    suite = run_suite(options(tmp_path), execute=fake_execute)
    assert suite.interrupted
    assert [r.status for r in suite.results] == ["passed", "skipped", "skipped"]
    assert "interrupted" in (suite.results[1].checks[0].skipped_reason or "")
    assert suite.exit_code == 130


def test_progress_reports_each_result(suite_dir: Path) -> None:
    seen: list[tuple[int, int, str]] = []
    run_suite(options(suite_dir), execute=fake_execute, progress=lambda d, t, r: seen.append((d, t, r.name)))
    assert seen == [(1, 4, "alpha"), (2, 4, "beta"), (3, 4, "delta"), (4, 4, "gamma-retry")]


def test_real_model_flag_needs_providers(suite_dir: Path) -> None:
    with pytest.raises(UsageError):
        run_suite(options(suite_dir, model="nonsense"), execute=fake_execute)


def test_update_golden_refuses_real_models(suite_dir: Path) -> None:
    with pytest.raises(UsageError, match="--update-golden"):
        run_suite(options(suite_dir, model="test", update_golden=True), execute=fake_execute)


# --- -j 2 -------------------------------------------------------------------------------------


def test_parallel_workers_give_the_same_results_in_the_same_order(tmp_path: Path) -> None:
    for index in range(6):
        write_scenario(tmp_path, f"p{index}", text="wrong" if index == 3 else "done")
    sequential = run_suite(options(tmp_path), execute=fake_execute)
    parallel = run_suite(options(tmp_path, jobs=2), execute=fake_execute)
    assert [(r.name, r.status) for r in parallel.results] == [(r.name, r.status) for r in sequential.results]
    assert [r.checks for r in parallel.results] == [r.checks for r in sequential.results]
    assert parallel.exit_code == 1


def test_parallel_fail_fast_stops_scheduling(tmp_path: Path) -> None:
    write_scenario(tmp_path, "q0", text="wrong")
    for index in range(1, 8):
        write_scenario(tmp_path, f"q{index}")
    suite = run_suite(options(tmp_path, jobs=2, fail_fast=True), execute=fake_execute)
    statuses = [r.status for r in suite.results]
    assert statuses[0] == "failed"
    assert suite.exit_code == 1
    # How many others ran before q0's failure arrived depends on the machine's load; what is scheduled after
    # it is tested exactly in test_fail_fast_scheduling.py. Here: real workers, and every skip says why.
    assert all(status in ("passed", "skipped") for status in statuses[1:])
    skipped = [r for r in suite.results if r.status == "skipped"]
    assert all(r.checks[0].skipped_reason == "not run: stopped after the first failure (-x)" for r in skipped)


def test_every_scenario_folder_gets_an_event_log_even_when_the_engine_crashed(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    write_scenario(scenarios, "boom", text="CRASH")
    out = tmp_path / "out"
    run_suite(RunOptions(paths=(scenarios,), out_dir=out), execute=fake_execute)
    assert (out / "scenarios" / "boom" / "events.jsonl").read_bytes() == b""
