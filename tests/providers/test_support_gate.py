"""Issue 43's gate: a held-out support agent (tests/providers/support_agent.py) on a nondeterministic model, graded by
judged checks, separates a good and a weaker model beyond their 95% intervals at 10 repeats; the gate replays
offline from its recordings with the same verdicts, run by run; the pytest plugin replaying the same recordings gives
the same verdicts; and `matrix --models` shows each judged check's score and pass rate per model.

The models and the judge are the loopback server's (`support_models`): no request leaves the machine. The suite is
recorded once per module (`recorded`), live, and everything after replays it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.models import override_allow_model_requests

from agentrig.cli import main
from agentrig.runtime.matrix.compare import load_version_output
from agentrig.runtime.matrix.report import build_report
from agentrig.runtime.runfolder import jsonio
from tests.providers.loopback import LoopbackServer
from tests.providers.support_models import SupportModels

pytestmark = pytest.mark.providers
pytest_plugins = ["pytester"]

GOOD, WEAK = "openai-chat:gpt-4o", "openai-chat:gpt-4o-mini"
JUDGE = "openai-chat:gpt-4.1"
SCENARIO = f"""\
name: support
agent: tests.providers.support_agent:build_agent
turns:
  - user: I sent back order A-1001. When do I get my money?
    expect:
      tool_calls: {{used: [lookup_order]}}
      judge:
        - rubric: Names the order it is talking about (A-1001).
          threshold: 0.7
          model: {JUDGE}
        - rubric: >-
            Follows the refund policy: the money within 5 business days of the return arriving,
            nothing sooner promised.
          reference: Refunds are paid back within 5 business days of the return arriving.
          threshold: 0.7
          model: {JUDGE}
expect:
  min_score: 0.7
  max_requests: 4
"""
CHECKS = ("turn 1: judge[0]", "turn 1: judge[1]")


@dataclass(frozen=True, slots=True)
class Recorded:
    root: Path
    server: LoopbackServer
    requests: int
    """What the server had answered when the live runs were done."""


def _run(*args: str) -> int:
    try:
        main(["run", *args, "-q"])
    except SystemExit as exited:
        return exited.code if isinstance(exited.code, int) else 1
    return 0


def _label(model: str) -> str:
    return model.split(":")[1]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """Both models, 10 runs each, live against the loopback server and recorded (the weaker one against the good one
    as its baseline)."""
    root = tmp_path_factory.mktemp("gate")
    (root / "support.yaml").write_text(SCENARIO, encoding="utf-8")
    with LoopbackServer(responder=SupportModels()) as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_BASE_URL", server.openai_base_url)  # the judge's provider
        patch.setenv("OPENAI_API_KEY", "sk-test")
        for name in ("ANTHROPIC_API_KEY", "AGENTRIG_MODEL"):
            patch.delenv(name, raising=False)
        with override_allow_model_requests(True):
            for model, baseline in ((GOOD, ()), (WEAK, ("--baseline", str(root / "live-gpt-4o")))):
                label = _label(model)
                live = ["--model", model, "--base-url", server.openai_base_url, "--repeat", "10", "--pass-rate", "0.8"]
                out = ["--out", str(root / f"live-{label}"), "--record", str(root / "rec" / label)]
                _run(str(root / "support.yaml"), *live, *out, *baseline)
        yield Recorded(root=root, server=server, requests=len(server.requests))


def _report(directory: Path) -> dict[str, Any]:
    return jsonio.read_json_file(directory / "report.json")


def _verdicts(report: dict[str, Any]) -> dict[str, tuple[str, tuple[tuple[str, bool], ...]]]:
    """Each run's status and each of its checks' pass, by run name."""
    return {
        entry["name"]: (entry["status"], tuple((check["name"], check["passed"]) for check in entry["checks"]))
        for entry in report["scenarios"]
    }


def test_the_judged_checks_separate_the_two_models_beyond_their_intervals(recorded: Recorded) -> None:
    good = _report(recorded.root / "live-gpt-4o")["repeats"]["scenarios"][0]
    weak = _report(recorded.root / "live-gpt-4o-mini")["repeats"]["scenarios"][0]
    # The scenario's pass rate, which its judged checks (and min_score, their mean) decide: 10/10 against 3/10.
    assert (good["passed"], weak["passed"], good["runs"], weak["runs"]) == (10, 3, 10, 10)
    assert (good["verdict"], weak["verdict"]) == ("passed", "failed")
    assert good["interval"][0] > weak["interval"][1]  # [0.7225, 1.0] against [0.1078, 0.6032]: apart
    policy = "turn 1: judge[1]"
    assert good["judged"][policy]["interval"][0] > weak["judged"][policy]["interval"][1]  # 10/10 against 4/10
    assert good["score"]["mean"] - weak["score"]["mean"] > 0.3
    # The weaker run was compared with the good one as its baseline: the change, and that it is beyond the intervals.
    change = weak["baseline"]
    assert change["pass_fraction"] == 1.0
    assert change["pass_rate_delta"] == -0.7
    assert change["score_delta"] == round(weak["score"]["mean"] - good["score"]["mean"], 4)
    assert change["intervals_overlap"] is False
    assert change["judged"][policy]["intervals_overlap"] is False
    summary = (recorded.root / "live-gpt-4o-mini" / "summary.md").read_text(encoding="utf-8")
    assert "support: 3/10 passed (30%, 95% CI 11%-60%), needs 80%: failed" in summary
    assert "  - score mean 0.53 (min 0.14, median 0.51, max 0.91), min_score 0.7" in summary
    assert "  - vs baseline 100% (95% CI 72%-100%): pass rate -70 pts, score -0.38, intervals apart" in summary
    assert "  - turn 1: judge[1]: 4/10 passed (95% CI 17%-69%), score mean 0.53" in summary
    # JUnit: each run's score, and each judged check's score and reason beside its name, passed or not.
    junit = (recorded.root / "live-gpt-4o-mini" / "junit.xml").read_text(encoding="utf-8")
    assert '<property name="min_score" value="0.7" />' in junit
    passed = 'value="score 0.97 &gt;= 0.7, pass: Gives the 5-business-day delay."'
    assert f'<property name="turn 1: judge[1]" {passed} />' in junit
    assert "the judge's verdict is fail (score 0.22): Promises the refund at once, against the policy." in junit
    # report.html: the same lines in its header's data.
    page = (recorded.root / "live-gpt-4o-mini" / "report.html").read_text(encoding="utf-8")
    assert '"  support: 3/10 passed (30%, 95% CI 11%-60%), needs 80%: failed, flaky"' in page
    assert "intervals apart" in page


def test_the_gate_replays_offline_with_the_same_verdicts(recorded: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for label in ("gpt-4o", "gpt-4o-mini"):
        out = recorded.root / f"replay-{label}"
        replay = ["--replay", str(recorded.root / "rec" / label), "--repeat", "10", "--pass-rate", "0.8"]
        code = _run(str(recorded.root / "support.yaml"), *replay, "--out", str(out))
        assert code == (0 if label == "gpt-4o" else 1)
        live, replayed = _report(recorded.root / f"live-{label}"), _report(out)
        assert _verdicts(replayed) == _verdicts(live)  # run by run, check by check
        scores = [(entry["name"], entry["score"]) for entry in replayed["scenarios"]]
        assert scores == [(entry["name"], entry["score"]) for entry in live["scenarios"]]
        assert replayed["repeats"]["scenarios"][0]["interval"] == live["repeats"]["scenarios"][0]["interval"]
    assert len(recorded.server.requests) == recorded.requests  # nothing reached the server
    assert sorted(path.name for path in (recorded.root / "rec" / "gpt-4o").iterdir())[:3] == [
        "support@01+judge-0.json",
        "support@01+judge-1.json",
        "support@01.json",
    ]


def test_the_pytest_plugin_replays_the_gate_with_the_same_verdicts(
    recorded: Recorded, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each recorded run becomes a scenario of its own (`support-gpt-4o-r03`, its recordings renamed so): the plugin
    replays all twenty, and each item passes or fails as its run did."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    recordings = pytester.path / "rec"
    recordings.mkdir()
    (pytester.path / "scenarios").mkdir()
    expected: dict[str, tuple[str, tuple[tuple[str, bool], ...]]] = {}
    for label in ("gpt-4o", "gpt-4o-mini"):
        live = _verdicts(_report(recorded.root / f"live-{label}"))
        for number in range(1, 11):
            name = f"support-{label}-r{number:02d}"
            text = SCENARIO.replace("name: support", f"name: {name}")
            (pytester.path / "scenarios" / f"{name}.yaml").write_text(text, encoding="utf-8")
            for source in (recorded.root / "rec" / label).glob(f"support@{number:02d}*.json"):
                shutil.copy(source, recordings / source.name.replace(f"support@{number:02d}", name))
            expected[name] = live[f"support@{number:02d}"]
    result = pytester.runpytest_inprocess(
        "--agentrig-record-mode", "none", "--agentrig-recordings", str(recordings), "--agentrig-out", "out"
    )
    result.assert_outcomes(passed=13, failed=7)
    assert _verdicts(_report(pytester.path / "out")) == expected
    assert len(recorded.server.requests) == recorded.requests


def test_matrix_models_shows_each_judged_checks_score_and_pass_rate_per_model(recorded: Recorded) -> None:
    """The model matrix's comparison of the two models' runs (what `agentrig matrix --models A,B --repeat 10` builds
    from each model's `agentrig run` folder; built here in-process from the gate's own runs)."""
    outputs = [
        load_version_output(model, recorded.root / f"live-{_label(model)}", exit_code=0) for model in (GOOD, WEAK)
    ]
    out = recorded.root / "matrix"
    build_report(outputs, python_version="3", paths=["support.yaml"], out=out, axis="model")
    document = jsonio.read_json_file(out / "compatibility.json")
    judged = {version["version"]: version["judged"]["support"] for version in document["versions"]}
    policy = "turn 1: judge[1]"
    assert (judged[GOOD][policy]["passed"], judged[WEAK][policy]["passed"]) == (10, 4)
    assert judged[WEAK][policy]["interval"] == [0.1682, 0.6873]
    assert judged[WEAK][policy]["score"]["mean"] == 0.531
    page = (out / "compatibility.md").read_text(encoding="utf-8")
    assert "## Judged checks" in page
    row = (
        "| `support` | turn 1: judge[1] | 0.97 (0.97-0.97) · 10/10 passed, 95% CI 72%-100% "
        "| 0.53 (0.22-0.99) · 4/10 passed, 95% CI 17%-69% |"
    )
    assert row in page
