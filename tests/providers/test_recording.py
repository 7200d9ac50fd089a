"""Record against the loopback server, replay offline: same canonical history, or a mismatch with a diff."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.models import Model, override_allow_model_requests

from agentrig.errors import HistoryFormatError, UsageError
from agentrig.runtime.engine.orchestrator import RequestOrchestrator
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache, AgentHandle
from agentrig.runtime.engine.pydantic_ai_engine.plain import PydanticAIEngine
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.per_run import message_json_without_per_run_values
from agentrig.runtime.history.run_records import TurnRecord
from agentrig.runtime.history.sessions import new_session
from agentrig.runtime.history.wire import message_to_json
from agentrig.runtime.models.providers import build_model
from agentrig.runtime.models.record_modes import RecordSetup, record_setup
from agentrig.runtime.models.record_replay import (
    RECORDING_FORMAT,
    RecordingModel,
    ReplayMismatch,
    ReplayModel,
    recording_path,
    replay_model,
    wrap_for_recording,
)
from agentrig.runtime.models.recorded_runs import EpisodesModel, scenario_model
from agentrig.runtime.runfolder import jsonio
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import ToolCallReply, text, tool_calls

pytestmark = pytest.mark.providers

_SCRIPT = [
    tool_calls(ToolCallReply(id="call_ls", name="list_files", args={"directory": "src"})),
    text("Two files: a.py and b.py.", input_tokens=40, output_tokens=8),
    text("a.py is the larger one.", input_tokens=60, output_tokens=6),
]
_PROMPTS = ["List the files in src.", "Which is larger?"]


def _handle(instructions: str = "Be terse.") -> AgentHandle:
    def build() -> Agent[None, str]:
        agent = Agent(None, instructions=instructions)

        @agent.tool_plain
        def list_files(directory: str) -> str:
            """List a directory."""
            return f"{directory}/a.py\n{directory}/b.py"

        return agent

    return AgentHandle(key=f"recording-test:{instructions}", build=build, label="test agent", cache=AgentCache())


def _run_turns(
    model: Model, prompts: Sequence[str], instructions: str = "Be terse."
) -> tuple[list[TurnRecord], list[dict[str, Any]]]:
    async def go() -> tuple[list[TurnRecord], list[dict[str, Any]]]:
        orchestrator = RequestOrchestrator(
            PydanticAIEngine(_handle(instructions), model=model), new_session(current_model="test")
        )
        try:
            records = [await orchestrator.run(prompt) for prompt in prompts]
        finally:
            if isinstance(model, RecordingModel):
                await model.aclose()
        return records, _comparable(orchestrator.session.messages)

    return asyncio.run(go())


def _comparable(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Canonical JSON without run and conversation ids (they differ per run by design)."""
    result: list[dict[str, Any]] = []
    for message in messages:
        result.append(message_json_without_per_run_values(message_to_json(message)))
    return result


def _record(loopback: ServerFactory, directory: Path) -> tuple[Path, list[dict[str, Any]]]:
    server = loopback(list(_SCRIPT))
    path = recording_path(directory, "list-files")
    model = wrap_for_recording(
        build_model("openai:gpt-4o", base_url=server.openai_base_url), path, scenario="list-files"
    )
    records, history = _run_turns(model, _PROMPTS)
    assert [record.error for record in records] == [None, None]
    assert len(server.requests) == 3
    return path, history


def test_record_then_replay_gives_the_same_canonical_history(loopback: ServerFactory, tmp_path: Path) -> None:
    path, recorded_history = _record(loopback, tmp_path)

    document = jsonio.read_json_file(path)
    assert document["format"] == RECORDING_FORMAT
    assert document["scenario"] == "list-files"
    assert document["model"] == "openai:gpt-4o"
    assert len(document["exchanges"]) == 3
    first = document["exchanges"][0]
    assert first["request"]["instructions"] == "Be terse."
    assert [tool["name"] for tool in first["request"]["tools"]] == ["list_files"]
    assert first["response"]["parts"][0]["tool_call_id"] == "call_ls"

    with override_allow_model_requests(False):  # replay never touches the network
        records, replayed_history = _run_turns(replay_model(path), _PROMPTS)

    assert [record.error for record in records] == [None, None]
    assert [record.output for record in records] == ["Two files: a.py and b.py.", "a.py is the larger one."]
    assert replayed_history == recorded_history
    assert records[0].usage.input_tokens == 20 + 40  # the recorded usage, not an estimate
    assert not records[0].usage.estimated


def test_a_changed_request_fails_with_a_diff(loopback: ServerFactory, tmp_path: Path) -> None:
    path, _ = _record(loopback, tmp_path)

    records, _ = _run_turns(replay_model(path), ["List the files in lib.", "Which is larger?"])

    error = records[0].error
    assert error is not None
    assert error.kind == "replay_mismatch"
    assert "model request 1 differs from the recording" in error.message
    assert '- "content": "List the files in src."' in error.message
    assert '+ "content": "List the files in lib."' in error.message


def test_the_mismatch_carries_a_unified_diff(loopback: ServerFactory, tmp_path: Path) -> None:
    path, _ = _record(loopback, tmp_path)
    agent = _handle("Be verbose.").agent

    with pytest.raises(ReplayMismatch) as caught:
        asyncio.run(agent.run(_PROMPTS[0], model=replay_model(path)))

    diff = caught.value.diff.splitlines()
    assert diff[:2] == ["--- recorded request 1", "+++ request 1 now"]
    assert '-  "instructions": "Be terse.",' in diff
    assert '+  "instructions": "Be verbose.",' in diff


def test_running_past_the_recording_is_a_mismatch(loopback: ServerFactory, tmp_path: Path) -> None:
    path, _ = _record(loopback, tmp_path)

    records, _ = _run_turns(replay_model(path), [*_PROMPTS, "And a third question?"])

    error = records[2].error
    assert error is not None
    assert error.kind == "replay_mismatch"
    assert "the run made model request 4, the recording has only 3" in error.message


def test_recordings_are_redacted(loopback: ServerFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-recognisable-fake-key-4242")
    server = loopback([text("noted")])
    path = recording_path(tmp_path, "secret")
    model = wrap_for_recording(build_model("openai:gpt-4o", base_url=server.openai_base_url), path, scenario="secret")

    _run_turns(model, ["remember sk-recognisable-fake-key-4242 please"])

    assert server.requests[0].headers["authorization"] == "Bearer sk-recognisable-fake-key-4242"
    written = path.read_text()
    assert "sk-recognisable-fake-key-4242" not in written
    assert "remember [REDACTED] please" in written
    # The live request is redacted the same way before comparing, so the recording still replays.
    records, _ = _run_turns(replay_model(path), ["remember sk-recognisable-fake-key-4242 please"])
    assert records[0].error is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"format": "agentrig.history/1", "messages": []}', "not a recording"),
        (b'{"format": "agentrig.recording/1", "exchanges": {}}', "exchanges: expected a list"),
        (b'{"format": "agentrig.recording/1", "exchanges": [{"request": {}}]}', "exchanges[0]"),
        (b"{not json", "invalid JSON"),
    ],
)
def test_bad_recording_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(HistoryFormatError, match=message.replace("[", r"\[").replace("]", r"\]")):
        replay_model(path)


def test_missing_recording(tmp_path: Path) -> None:
    with pytest.raises(ReplayMismatch, match="no recording of this scenario"):
        replay_model(tmp_path / "absent.json")


def test_scenario_model_chooses_by_mode(loopback: ServerFactory, tmp_path: Path) -> None:
    path, _ = _record(loopback, tmp_path)
    real = build_model("openai:gpt-4o", base_url=loopback().openai_base_url)

    assert scenario_model("list-files", real, setup=None) is real
    replay = scenario_model("list-files", None, setup=RecordSetup("none", tmp_path))
    assert isinstance(replay, ReplayModel)
    assert replay.path == path
    assert isinstance(scenario_model("list-files", real, setup=RecordSetup("once", tmp_path)), ReplayModel)
    assert isinstance(scenario_model("list-files", real, setup=RecordSetup("new_episodes", tmp_path)), EpisodesModel)
    for mode in ("once", "new_episodes", "all"):
        recording = scenario_model("other", real, setup=RecordSetup(mode, tmp_path / "new"))
        assert isinstance(recording, RecordingModel)
        assert recording.path == tmp_path / "new" / "other.json"
    assert isinstance(scenario_model("list-files", real, setup=RecordSetup("all", tmp_path)), RecordingModel)
    with pytest.raises(UsageError, match="needs --model"):
        scenario_model("x", None, setup=RecordSetup("all", tmp_path))
    # Nothing recorded for the scenario: it does not replay (failed, `replay_mismatch`), not the agent's error.
    with pytest.raises(ReplayMismatch, match=r"no recording of this scenario: .*absent.json does not exist"):
        scenario_model("absent", None, setup=RecordSetup("none", tmp_path))


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"record_dir": Path("r"), "replay_dir": Path("r")}, "cannot be used together"),
        ({"record_dir": Path("r")}, "--record needs --model"),
        ({"mode": "once"}, "--record-mode once needs --model"),
        ({"mode": "sometimes", "model": "openai:gpt-4o"}, "--record-mode sometimes: expected one of none, once"),
        ({"mode": "all", "model": "openai:gpt-4o", "replay_dir": Path("r")}, "--replay DIR only replays"),
    ],
)
def test_record_flags_that_cannot_run_are_one_line(flags: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"mode": None, "record_dir": None, "replay_dir": None, "model": None, **flags}
    with pytest.raises(UsageError, match=message) as raised:
        record_setup(**arguments)  # pyright: ignore[reportArgumentType]
    assert "\n" not in raised.value.message


def test_record_modes_and_their_directory() -> None:
    assert record_setup(mode=None, record_dir=None, replay_dir=Path("r"), model=None) == RecordSetup("none", Path("r"))
    assert record_setup(mode=None, record_dir=Path("r"), replay_dir=None, model="m:x") == RecordSetup("all", Path("r"))
    assert record_setup(mode="rewrite", record_dir=Path("r"), replay_dir=None, model="m:x") == RecordSetup(
        "all", Path("r")
    )
    assert record_setup(mode="once", record_dir=None, replay_dir=None, model="m:x") == RecordSetup(
        "once", Path("recordings")
    )
