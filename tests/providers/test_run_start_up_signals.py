"""Ctrl-C that lands inside an import of `agentrig run`'s start-up, for certain (the hook in tests/start_up_hook/
holds the import; `tests/start_up_signals.py`): the run ends with 130 and one line, sends nothing to the provider and
leaves `--out` untouched, also when CPython swallows the KeyboardInterrupt (a weakref callback, importlib's module
lock callback, where it would also leave the import lock held)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from tests.providers.conftest import ServerFactory
from tests.providers.loopback import text
from tests.start_up_signals import HOWS, held

pytestmark = [pytest.mark.providers, pytest.mark.process]

SCENARIO = """\
name: start-up
turns:
  - user: Capital of France?
    expect:
      output: {contains: Paris}
"""


@pytest.mark.parametrize("how", HOWS)
def test_ctrl_c_while_pydantic_ai_is_imported_ends_the_run_before_anything_is_sent_or_written(
    how: str, loopback: ServerFactory, tmp_path: Path
) -> None:
    server = loopback([text("Paris.")])
    (tmp_path / "start_up.yaml").write_text(SCENARIO, encoding="utf-8")
    command = [
        sys.executable, "-m", "agentrig", "run", "start_up.yaml", "--out", "out",
        "--model", "openai:gpt-4o", "--base-url", server.openai_base_url,
    ]  # fmt: skip
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "OPENAI_API_KEY": "sk-test"}
    with held(command, module="pydantic_ai", how=how, cwd=tmp_path, environment=environment) as process:
        stack = process.wait_inside()
        process.send(signal.SIGINT)
        process.let_go()
        ended = process.finish()

    assert "run" in stack.split(","), stack  # inside the run command, before its first scenario
    assert ended.returncode == 130, ended.stderr
    assert ended.stderr.splitlines()[-1].startswith("agentrig: interrupted"), ended.stderr
    assert "Traceback" not in ended.stderr
    assert "Exception ignored" not in ended.stderr
    assert server.requests == []
    assert not (tmp_path / "out").exists()
    if how == "module_lock":
        assert ended.notes == ("imported",), f"another thread's import waited: the import lock was kept ({stack})"
