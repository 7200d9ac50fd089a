"""Issue 43's gate: a held-out support agent (tests/providers/support_agent.py) on a nondeterministic model, graded by
judged checks, separates a good and a weaker model beyond their 95% intervals at 10 repeats; the gate replays
offline from its recordings with the same verdicts, run by run; the pytest plugin replaying the same recordings gives
the same verdicts; and `matrix --models A,B --repeat 10` shows each judged check's score and pass rate per model.

The models and the judge are the loopback server's (`support_models`): no request leaves the machine. The suite is
recorded once per module (`recorded`), live, and everything after replays it."""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import certifi
import pytest
from pydantic_ai.models import override_allow_model_requests

from agentrig.cli import main
from agentrig.runtime.matrix import models as matrix_models
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
        # Each judged check builds its judge's SDK client, which loads the CA bundle (0.1 s of CPU, half this
        # fixture's time over 40 judges); the loopback speaks plain HTTP, so one certificate verifies as much.
        patch.setenv("SSL_CERT_FILE", str(_one_certificate(root)))
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


def _one_certificate(root: Path) -> Path:
    """A CA file of one certificate (certifi's first): what SSL_CERT_FILE needs to name, loaded at once."""
    bundle = Path(certifi.where()).read_text(encoding="ascii")
    end = "-----END CERTIFICATE-----\n"
    path = root / "one-ca.pem"
    path.write_text(bundle[bundle.index("-----BEGIN CERTIFICATE-----") : bundle.index(end) + len(end)], "ascii")
    return path


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
    # The scenario's pass rate, which its judged checks (and min_score, their mean) decide: 10/10 against 0/10.
    assert (good["passed"], weak["passed"], good["runs"], weak["runs"]) == (10, 0, 10, 10)
    assert (good["verdict"], weak["verdict"]) == ("passed", "failed")
    assert good["interval"][0] > weak["interval"][1]  # [0.7225, 1.0] against [0.0, 0.2775]: apart
    # Each judged check on its own: citing 10/10 against 2/10 [0.0567, 0.5098], the policy 10/10 against 4/10
    # [0.1682, 0.6873].
    passed = {check: (good["judged"][check]["passed"], weak["judged"][check]["passed"]) for check in CHECKS}
    assert passed == {CHECKS[0]: (10, 2), CHECKS[1]: (10, 4)}
    for check in CHECKS:
        assert good["judged"][check]["interval"][0] > weak["judged"][check]["interval"][1], check
    assert good["score"]["mean"] - weak["score"]["mean"] > 0.3
    # The weaker run was compared with the good one as its baseline: the change, and that it is beyond the intervals.
    change = weak["baseline"]
    assert change["pass_fraction"] == 1.0
    assert change["pass_rate_delta"] == -1.0
    assert change["score_delta"] == round(weak["score"]["mean"] - good["score"]["mean"], 4)
    assert change["intervals_overlap"] is False
    for check in CHECKS:
        assert change["judged"][check]["intervals_overlap"] is False, check
    assert [change["judged"][check]["pass_rate_delta"] for check in CHECKS] == [-0.8, -0.6]
    summary = (recorded.root / "live-gpt-4o-mini" / "summary.md").read_text(encoding="utf-8")
    assert "support: 0/10 passed (0%, 95% CI 0%-28%), needs 80%: failed" in summary
    assert "  - score mean 0.40 (min 0.14, median 0.51, max 0.60), min_score 0.7" in summary
    assert "  - vs baseline 100% (95% CI 72%-100%): pass rate -100 pts, score -0.51, intervals apart" in summary
    assert "  - turn 1: judge[0]: 2/10 passed (95% CI 6%-51%), score mean 0.26" in summary
    assert "  - turn 1: judge[1]: 4/10 passed (95% CI 17%-69%), score mean 0.53" in summary
    # JUnit: each run's score, and each judged check's score and reason beside its name, passed or not.
    junit = (recorded.root / "live-gpt-4o-mini" / "junit.xml").read_text(encoding="utf-8")
    assert '<property name="min_score" value="0.7" />' in junit
    passing = 'value="score 0.99 &gt;= 0.7, pass: Gives the 5-business-day delay."'
    assert f'<property name="turn 1: judge[1]" {passing} />' in junit
    assert "the judge's verdict is fail (score 0.22): Promises the refund at once, against the policy." in junit
    assert "the judge's verdict is fail (score 0.06): No order number given." in junit
    # report.html: the same lines in its header's data.
    page = (recorded.root / "live-gpt-4o-mini" / "report.html").read_text(encoding="utf-8")
    assert '"  support: 0/10 passed (0%, 95% CI 0%-28%), needs 80%: failed"' in page
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
    result.assert_outcomes(passed=10, failed=10)
    assert _verdicts(_report(pytester.path / "out")) == expected
    assert len(recorded.server.requests) == recorded.requests


def test_matrix_models_shows_each_judged_checks_score_and_pass_rate_per_model(
    recorded: Recorded, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agentrig matrix --models A,B --repeat 10 --pass-rate 0.8`, replaying each model's recordings offline: the
    flags reach each model's `agentrig run`, and compatibility.md gets the Judged checks table. Each model's run is
    the command the matrix builds, run in this process instead of a child (the argv is the same)."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    recordings = recorded.root / "matrix-rec"
    for model in (GOOD, WEAK):
        shutil.copytree(recorded.root / "rec" / _label(model), recordings / model)  # DIR/<model>/, as --recordings
    commands: list[list[str]] = []

    def in_process(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        assert command[1:3] == ["-m", "agentrig"], command
        commands.append(command[3:])
        with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
            try:
                main(command[3:])
                code = 0
            except SystemExit as exited:
                code = exited.code if isinstance(exited.code, int) else 1
        return subprocess.CompletedProcess(command, code, out.getvalue(), err.getvalue())

    monkeypatch.setattr(matrix_models.subprocess, "run", in_process)
    out = recorded.root / "matrix"
    flags = ["--models", f"{GOOD},{WEAK}", "--repeat", "10", "--pass-rate", "0.8"]
    replay = ["--record-mode", "none", "--recordings", str(recordings), "--out", str(out)]
    with pytest.raises(SystemExit) as exited:
        main(["matrix", str(recorded.root / "support.yaml"), *flags, *replay])
    assert exited.value.code == 1  # the weaker model fails what the baseline passes
    assert "[2/2] openai-chat:gpt-4o-mini: 0 passed, 10 failed" in capsys.readouterr().err
    assert [command[command.index("--model") + 1] for command in commands] == [GOOD, WEAK]
    for command in commands:
        assert command[command.index("--repeat") :][:4] == ["--repeat", "10", "--pass-rate", "0.8"]
    for model in (GOOD, WEAK):  # each model's own run repeated ten times and needed 80%
        repeats = _report(out / model)["repeats"]
        assert (repeats["count"], repeats["default_pass_rate"]) == (10, 0.8)
    assert len(recorded.server.requests) == recorded.requests  # offline: nothing reached the server
    document = jsonio.read_json_file(out / "compatibility.json")
    judged = {version["version"]: version["judged"]["support"] for version in document["versions"]}
    assert {check: (judged[GOOD][check]["passed"], judged[WEAK][check]["passed"]) for check in CHECKS} == {
        CHECKS[0]: (10, 2),
        CHECKS[1]: (10, 4),
    }
    assert judged[WEAK][CHECKS[1]]["interval"] == [0.1682, 0.6873]
    assert judged[WEAK][CHECKS[1]]["score"]["mean"] == 0.534
    page = (out / "compatibility.md").read_text(encoding="utf-8")
    assert "## Judged checks" in page
    assert (
        "| `support` | turn 1: judge[0] | 0.85 (0.85-0.85) · 10/10 passed, 95% CI 72%-100% "
        "| 0.26 (0.06-0.76) · 2/10 passed, 95% CI 6%-51% |"
    ) in page
    assert (
        "| `support` | turn 1: judge[1] | 0.97 (0.97-0.97) · 10/10 passed, 95% CI 72%-100% "
        "| 0.53 (0.22-0.99) · 4/10 passed, 95% CI 17%-69% |"
    ) in page
