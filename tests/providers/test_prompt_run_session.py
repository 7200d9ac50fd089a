"""`agentrig prompt --session OUT/scenarios/NAME/session.json` continues a run's conversation, though that session
names its history.json instead of holding the messages (issue 45 item 2), and saves the session whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import text
from tests.runtime.runner_fakes import fake_execute
from tests.runtime.test_runner import write_scenario

pytestmark = pytest.mark.providers


def test_a_run_session_is_continued_and_saved_whole(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenarios, out = tmp_path / "scenarios", tmp_path / "out"
    scenarios.mkdir()
    write_scenario(scenarios, "alpha")
    run_suite(RunOptions(paths=(scenarios,), out_dir=out), execute=fake_execute)
    folder = out / "scenarios" / "alpha"
    session = folder / "session.json"
    assert "messages" not in jsonio.read_json_file(session)
    history = (folder / "history.json").read_bytes()
    server = loopback([text("Still done.")])
    args = ["prompt", "And now?", "--session", str(session), "--model", "openai:gpt-4o"]
    assert run_main(capsys, *args, "--base-url", server.openai_base_url) == (0, "Still done.\n", "")
    sent = server.requests[0].body["messages"]
    assert [(m["role"], m["content"]) for m in sent] == [("user", "hello"), ("assistant", "done"), ("user", "And now?")]
    stored = jsonio.read_json_file(session)
    assert "history" not in stored
    assert [m["kind"] for m in stored["messages"]] == ["request", "response", "request", "response"]
    assert (folder / "history.json").read_bytes() == history  # the run's history is the run's
