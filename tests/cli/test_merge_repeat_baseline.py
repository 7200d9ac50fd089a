"""`agentrig merge` of `--shard`ed `--repeat N --baseline DIR` runs keeps the baseline comparison: the merged
`repeats` block is compared again, over every shard's runs, with the baseline the shards were compared with (each
shard's report carries the baseline's figures for its scenarios); shards compared with different baselines, or
some with one and some without, are refused with one line (exit 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main
from agentrig.runtime.runfolder import jsonio
from tests.cli.cli_helpers import run_main

_SCENARIO = """\
name: {name}
turns:
  - user: When do I get my money back?
    model:
      - text: Your refund arrives within 5 business days.
    expect:
      judge:
        rubric: States the refund delay.
        threshold: 0.7
        script: {{pass: {passed}, score: {score}}}
"""


def _suite(directory: Path, passed: str, score: float) -> Path:
    directory.mkdir()
    for name in ("refund", "delay"):
        text = _SCENARIO.format(name=name, passed=passed, score=score)
        (directory / f"{name}.yaml").write_text(text, encoding="utf-8")
    return directory


def _repeats(directory: Path) -> dict[str, Any]:
    return jsonio.read_json_file(directory / "report.json")["repeats"]


def _run(*args: str) -> int:
    try:
        main(["run", *args, "-q"])
    except SystemExit as exited:
        return exited.code if isinstance(exited.code, int) else 1
    return 0


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A baseline where every judge passes (0.9), then the same suite where it fails (0.2), whole and in 2 shards,
    each against the baseline (4 runs a scenario: 4/4 and 0/4 have 95% intervals apart)."""
    root = tmp_path_factory.mktemp("merge")
    _run(str(_suite(root / "before", "true", 0.9)), "--repeat", "4", "--out", str(root / "b"))
    now = _suite(root / "now", "false", 0.2)
    against = ["--repeat", "4", "--baseline", str(root / "b")]
    assert _run(str(now), *against, "--out", str(root / "whole")) == 1
    for shard in (1, 2):
        assert _run(str(now), *against, "--shard", f"{shard}/2", "--out", str(root / f"s{shard}")) == 1
    _run(str(now), "--repeat", "4", "--shard", "2/2", "--out", str(root / "plain2"))
    return root


def test_a_merge_of_baselined_shards_keeps_the_comparison(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    merged_dir = runs / "merged"
    code, _, err = run_main(capsys, "merge", str(runs / "s1"), str(runs / "s2"), "--out", str(merged_dir))
    assert code == 1, err
    merged, whole = _repeats(merged_dir), _repeats(runs / "whole")
    assert merged["baseline"] == whole["baseline"] == str(runs / "b")
    changes = {entry["name"]: entry["baseline"] for entry in merged["scenarios"]}
    assert changes == {entry["name"]: entry["baseline"] for entry in whole["scenarios"]}
    refund = changes["refund"]
    assert (refund["passed"], refund["pass_rate_delta"], refund["score_delta"]) == (4, -1.0, -0.7)
    assert refund["judged"]["turn 1: judge"]["intervals_overlap"] is False
    summary = (merged_dir / "summary.md").read_text(encoding="utf-8")
    assert "vs baseline 100% (95% CI 51%-100%): pass rate -100 pts, score -0.70, intervals apart" in summary


def test_shards_of_different_baselines_are_refused(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refused = runs / "refused"
    code, _, err = run_main(capsys, "merge", str(runs / "s1"), str(runs / "plain2"), "--out", str(refused))
    assert code == 2
    assert err == (
        f"agentrig: error: merge: the runs were compared with different baselines ({runs / 'b'}, none): "
        "merge the shards of one run, all with the same --baseline or all without\n"
    )
    assert not refused.exists()
