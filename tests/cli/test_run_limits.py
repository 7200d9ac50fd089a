"""`agentrig run` bounds what it is asked for: `-j` is capped per CPU, `--shard` counts are bounded."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from agentrig.runtime.suite import scenario_run
from agentrig.runtime.suite.processes import pool
from tests.cli.cli_helpers import run_main
from tests.runtime.runner_fakes import fake_execute
from tests.runtime.test_runner import write_scenario


@pytest.fixture(autouse=True)
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario_run, "_default_execute", lambda: fake_execute)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def test_jobs_above_four_per_cpu_are_capped_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_scenario(tmp_path, "one")
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    started: list[int] = []
    real_started_pool = pool.started_pool

    def recording_pool(jobs: int, *, user_modules_later: bool = False) -> ProcessPoolExecutor:
        started.append(jobs)
        return real_started_pool(jobs, user_modules_later=user_modules_later)

    monkeypatch.setattr(pool, "started_pool", recording_pool)  # the CLI starts it, before importing the runner
    code, _, err = run_main(capsys, "run", str(tmp_path / "one.yaml"), "-j", "6", "-q", "--out", str(tmp_path / "o"))
    assert code == 0
    assert err == "agentrig: note: -j 6 capped at 4 (4 per CPU)\n"
    assert started == [4]


def test_a_huge_shard_count_is_a_one_line_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_scenario(tmp_path, "one")
    code, out, err = run_main(
        capsys, "run", str(tmp_path / "one.yaml"), "--shard", "1/99999999999999999999", "--out", str(tmp_path / "o")
    )
    assert (code, out) == (2, "")
    assert err == "agentrig: error: --shard 1/99999999999999999999: N must be at most 10000\n"
    assert not (tmp_path / "o").exists()
