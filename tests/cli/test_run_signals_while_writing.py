"""SIGTERM (or Ctrl-C) while `agentrig run` writes its reports: the run ends between two scenarios, not when the
writing is done (it kept writing a 2 GB report.html for 6 minutes after SIGTERM), exit code 143, and report.json
says the run was interrupted. A real process; the report writer is slowed down where it takes each scenario, so the
signal surely lands while the reports are being written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.run_process import finish, report, wait_for

pytestmark = pytest.mark.process

_SLOW_REPORTS = """
import sys, time
from pathlib import Path
from agentrig.runtime.reports import report_files

marker = Path(sys.argv.pop(1))
real_add = report_files._ReportJson.add

def slow_add(self, entry):
    marker.touch()  # the reports are being written
    time.sleep(1.0)
    real_add(self, entry)

report_files._ReportJson.add = slow_add
from agentrig.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["sigterm", "sigint"])
def test_a_signal_while_the_reports_are_written_ends_the_run(tmp_path: Path, signum: int, code: int) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    scenarios = "".join(
        f"- name: s{index:02d}\n  turns:\n    - user: hi\n      model:\n        - text: done\n" for index in range(60)
    )
    (suite / "many.yaml").write_text(scenarios, encoding="utf-8")
    out = tmp_path / "out"
    writing = tmp_path / "writing"
    process = subprocess.Popen(
        [sys.executable, "-c", _SLOW_REPORTS, str(writing), "run", str(suite), "--out", str(out)],
        cwd=tmp_path,
        env={**os.environ, "PYDANTIC_AI_NO_BANNER": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    wait_for(writing, process)
    os.kill(process.pid, signum)
    returncode, output = finish(process)  # 60 s at most: writing them all would take 60 s more

    assert returncode == code, output
    assert output.endswith("agentrig: interrupted\n"), output
    written = report(out)
    assert written["interrupted"] is True
    assert written["scenarios"] == []  # what the run wrote before its first scenario: never half a report
    # The other reports are the interrupted ones the run wrote at its start too: all four agree.
    assert 'tests="0"' in (out / "junit.xml").read_text(encoding="utf-8")
    assert "**interrupted**" in (out / "summary.md").read_text(encoding="utf-8")
    assert not [path.name for path in out.iterdir() if path.name.endswith(".tmp")]
