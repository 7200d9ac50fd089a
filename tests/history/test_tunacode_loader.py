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
