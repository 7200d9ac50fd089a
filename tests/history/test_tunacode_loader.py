"""tunacode's own `StateManager.load_session` reads what `agentrig convert --to tinyagent` writes.

tunacode-cli is not a dependency of agentrig (it pins rich and click and brings a TUI), so this module
runs where it is installed: `nox -s tunacode` installs it next to agentrig and runs tests/history.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.history.sessions import load_session

TUNACODE_STATE = "tunacode.core.session.state"

DATA = Path(__file__).parent / "tinyagent_data"
DUMP = Path(__file__).parents[1] / "runtime" / "data" / "pydantic_ai_2_68_dump.json"
runner = CliRunner()


@pytest.fixture
def storage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tunacode's session directory, in a temp dir (tunacode reads ~ and $XDG_DATA_HOME).

    Every test here needs tunacode itself: without tunacode-cli installed they are skipped, with the reason."""
    pytest.importorskip(TUNACODE_STATE, reason="tunacode-cli is not installed (`nox -s tunacode` installs it)")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    directory = tmp_path / "data" / "tunacode" / "sessions"
    directory.mkdir(parents=True)
    return directory


def _tunacode_load(converted: dict[str, Any], storage: Path) -> Any:
    path = storage / f"{converted['project_id']}_{converted['session_id']}.json"
    path.write_text(json.dumps(converted))
    manager = importlib.import_module(TUNACODE_STATE).StateManager()
    # load_session answers False and swallows the reason; deserialize first so a failure says why.
    manager._deserialize_messages(converted["messages"])
    assert asyncio.run(manager.load_session(converted["session_id"])) is True
    return manager.session


@pytest.mark.parametrize(
    ("source", "flags"),
    [(DATA / "tunacode_session.json", []), (DUMP, ["--session"])],
    ids=["tunacode-session", "pydantic-ai-dump"],
)
def test_tunacode_loads_converted_sessions(source: Path, flags: list[str], storage: Path, tmp_path: Path) -> None:
    out = tmp_path / "converted.json"
    result = runner.invoke(app, ["convert", str(source), "--to", "tinyagent", *flags, "-o", str(out)])
    assert result.exit_code == 0, result.output
    converted = json.loads(out.read_bytes())
    session = _tunacode_load(converted, storage)
    ours = load_session(source)
    assert [m.role for m in session.conversation.messages] == [m["role"] for m in converted["messages"]]
    assert [m.model_dump(exclude_none=True) for m in session.conversation.messages] == converted["messages"]
    assert session.conversation.thoughts == list(ours.thoughts)
    assert session.usage.session_total_usage.input == ours.session_total_usage.input_tokens
    assert session.usage.session_total_usage.cache_read == ours.session_total_usage.cache_read_tokens
    assert session.session_id == converted["session_id"]
    if ours.compaction is not None:
        assert session.compaction.compaction_count == ours.compaction.count


def test_tunacode_reads_the_fixture_it_wrote(storage: Path) -> None:
    # The generator's file is tunacode's own output; loading it proves the fixture is genuine for this version.
    original = json.loads((DATA / "tunacode_session.json").read_bytes())
    session = _tunacode_load(original, storage)
    assert len(session.conversation.messages) == len(original["messages"])


def test_tunacode_loads_the_session_a_tunacode_style_agent_leaves(
    storage: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A tinyagent agent built as tunacode builds one runs a multi-turn session with an abort and a compaction
    # on the tinyagent engine; the session file it leaves, converted, is read by tunacode's own loader.
    from agentrig.runtime.engine.tinyagent_engine.execution import execute_scenario_tinyagent
    from agentrig.runtime.suite.runner import RunOptions, run_suite

    monkeypatch.chdir(Path(__file__).parents[2] / "examples")
    out = tmp_path / "out"
    options = RunOptions(paths=(Path("tinyagent_app/tunacode_session.yaml"),), out_dir=out)
    (result,) = run_suite(options, execute=execute_scenario_tinyagent).results
    assert result.status == "passed", [c for c in result.checks if not c.passed] or result.error
    assert [turn.interrupted for turn in result.turns] == [False, True, False, False]
    session_file = out / "scenarios" / result.name / "session.json"
    converted_file = tmp_path / "converted.json"
    converted_run = runner.invoke(app, ["convert", str(session_file), "--to", "tinyagent", "-o", str(converted_file)])
    assert converted_run.exit_code == 0, converted_run.output
    converted = json.loads(converted_file.read_bytes())
    session = _tunacode_load(converted, storage)
    ours = load_session(session_file)
    assert [m.model_dump(exclude_none=True) for m in session.conversation.messages] == converted["messages"]
    texts = [
        getattr(block, "text", None)
        for m in session.conversation.messages
        if m.role == "assistant"
        for block in m.content
    ]
    assert "[INTERRUPTED] Announcing 2.1.0, with a faster sta" in texts
    assert session.compaction.compaction_count == 1
    assert ours.compaction is not None
    assert session.compaction.summary == ours.compaction.summary
    assert session.usage.session_total_usage.input == ours.session_total_usage.input_tokens == 620
    assert session.current_model == "openrouter:openai/gpt-4.1-mini"
