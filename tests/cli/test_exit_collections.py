"""The `agentrig` command freezes what lives when it is over, so the interpreter's final cyclic collections pass it
by (0.1 s of `agentrig run` on the 200-scenario bench); its `atexit` functions still run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

_RUN_AND_LOOK_AT_THE_EXIT = """
import atexit, gc, sys
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0))
sys.argv = ["agentrig", *sys.argv[1:]]
from agentrig.__main__ import main
main()
"""


def test_the_command_freezes_what_lives_at_its_exit(tmp_path: Path) -> None:
    scenario = tmp_path / "a.yaml"
    scenario.write_text("name: a\nturns:\n  - user: hi\n    model:\n      - text: hello\n", encoding="utf-8")

    result = subprocess.run(
        [sys.executable, "-c", _RUN_AND_LOOK_AT_THE_EXIT, "run", str(scenario), "--quiet"],
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "frozen at exit: True"
