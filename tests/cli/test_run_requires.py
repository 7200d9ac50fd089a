"""`agentrig run` on an environment without a scenario's extras (issue 44 item 1): the scenario is skipped, with the
extra and its install command, in every report and the run's last lines, and the run exits 0 when the rest passed;
`--require-extras` makes it an error again (exit 3). In-process with the extras table pointing at a module that does
not exist, and as a real `-j 2` process whose interpreter cannot import pydantic-ai-harness."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from agentrig.runtime.runfolder import jsonio
from agentrig.scenarios import composition_model
from tests.cli.cli_helpers import run_main
from tests.cli.run_process import EXIT_WITHIN_S
from tests.reports.runs import decompressed

PASSES = """\
name: plain
turns:
  - user: hi
    model:
      - text: hello
"""

NEEDS_HARNESS = """\
name: needs-harness
requires: [harness]
turns:
  - user: hi
    model:
      - text: hello
"""

REASON = "requires harness: pip install pydantic-ai-harness"


def _suite(tmp_path: Path) -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "plain.yaml").write_text(PASSES, encoding="utf-8")
    (folder / "harness.yaml").write_text(NEEDS_HARNESS, encoding="utf-8")
    return folder


@pytest.fixture
def no_harness(monkeypatch: pytest.MonkeyPatch) -> None:
    """This interpreter as one without pydantic-ai-harness: the extra's module is one that does not exist."""
    _, install = composition_model.EXTRAS["harness"]
    monkeypatch.setitem(composition_model.EXTRAS, "harness", (("agentrig_no_such_module",), install))


def test_a_scenario_whose_extra_is_missing_is_skipped_in_every_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_harness: None
) -> None:
    folder, out = _suite(tmp_path), tmp_path / "out"

    code, stdout, _ = run_main(capsys, "run", str(folder), "--out", str(out))

    assert code == 0
    lines = stdout.splitlines()
    assert f"SKIP needs-harness ({folder / 'harness.yaml'}): {REASON}" in lines
    assert lines[-1] == "1 passed, 0 failed, 1 skipped"
    report = jsonio.loads((out / "report.json").read_bytes())
    counts = {key: report["summary"][key] for key in ("passed", "failed", "error", "skipped", "total")}
    assert counts == {"passed": 1, "failed": 0, "error": 0, "skipped": 1, "total": 2}
    assert report["totals"]["scenarios_run"] == 1
    entry = {item["name"]: item for item in report["scenarios"]}["needs-harness"]
    assert (entry["status"], entry["error"]) == ("skipped", None)
    assert [(check["name"], check["skipped_reason"]) for check in entry["checks"]] == [("scenario: requires", REASON)]
    suite = ElementTree.parse(out / "junit.xml").getroot()[0]
    assert suite.get("skipped") == "1"
    assert suite.get("errors") == "0"
    (skipped,) = suite.iter("skipped")
    assert skipped.get("message") == REASON
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "## agentrig: 1 passed, 0 failed, 1 skipped" in summary
    assert f"### Skipped\n\n- {REASON} (1): `needs-harness`" in summary
    html = decompressed((out / "report.html").read_text(encoding="utf-8"))
    assert REASON in html  # the scenario's check, as the page shows it


def test_require_extras_makes_a_missing_extra_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_harness: None
) -> None:
    folder, out = _suite(tmp_path), tmp_path / "out"

    code, stdout, _ = run_main(capsys, "run", str(folder), "--out", str(out), "--require-extras")

    assert code == 3
    assert stdout.splitlines()[-1] == "1 passed, 0 failed, 0 skipped, 1 error"
    assert "SKIP" not in stdout
    assert (
        f"  error unsupported (this engine or environment cannot run the scenario; nothing of yours raised): "
        f"{folder / 'harness.yaml'}:2: requires[0]: the harness extra is not installed (agentrig_no_such_module "
        f"missing): pip install pydantic-ai-harness"
    ) in stdout.splitlines()
    entry = {item["name"]: item for item in jsonio.loads((out / "report.json").read_bytes())["scenarios"]}
    assert entry["needs-harness"]["status"] == "error"


HIDE_HARNESS = "import sys\nsys.modules['pydantic_ai_harness'] = None  # importlib.util.find_spec: not installed\n"


@pytest.mark.parametrize(
    ("flag", "code", "last"),
    [((), 0, "1 passed, 0 failed, 1 skipped"), (("--require-extras",), 3, "1 passed, 0 failed, 0 skipped, 1 error")],
)
def test_the_workers_of_a_process_without_the_extra_skip_it_too(
    tmp_path: Path, flag: tuple[str, ...], code: int, last: str
) -> None:
    # A real run whose interpreter (and so its forkserver and -j 2 workers) cannot import pydantic-ai-harness.
    folder, out = _suite(tmp_path), tmp_path / "out"
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(HIDE_HARNESS, encoding="utf-8")
    env = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "PYTHONPATH": str(hide)}
    argv = [sys.executable, "-m", "agentrig", "run", str(folder), "--out", str(out), "-j", "2", *flag]
    completed = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=EXIT_WITHIN_S, check=False)

    assert (completed.returncode, completed.stdout.splitlines()[-1]) == (code, last), completed.stderr
    entry = {item["name"]: item for item in jsonio.loads((out / "report.json").read_bytes())["scenarios"]}
    assert entry["needs-harness"]["status"] == ("skipped" if code == 0 else "error")
