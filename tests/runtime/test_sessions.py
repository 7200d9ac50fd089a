"""Session files: contract keys in order, atomic saves that never clobber foreign files, any input form."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson
import pytest

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.canonical import Message, TextPart, ThoughtPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.sessions import (
    CompactionRecord,
    Session,
    load_history_file,
    load_session,
    new_session,
    save_session,
)
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.wire import dumps_history

DATA = Path(__file__).parent / "data"
CONTRACT_KEYS = [
    "version",
    "session_id",
    "project_id",
    "created_at",
    "last_modified",
    "working_directory",
    "current_model",
    "total_tokens",
    "session_total_usage",
    "thoughts",
    "messages",
]


def sample_messages() -> tuple[Message, ...]:
    return (
        Message.request(TextPart(content="list files")),
        Message.response(
            ThoughtPart(content="bash", signature="s"),
            ToolCallPart(tool_call_id="tc_1", tool_name="bash", args={"c": "ls"}),
        ),
        Message.request(ToolReturnPart(tool_call_id="tc_1", tool_name="bash", content="a\nb")),
        Message.response(TextPart(content="Two files.")),
    )


def sample_session() -> Session:
    session = new_session(working_directory="/work/app", current_model="openai:gpt-4o", messages=sample_messages())
    return dataclasses.replace(
        session,
        total_tokens=321,
        session_total_usage=Usage(requests=2, tool_calls=1, input_tokens=280, output_tokens=19, cache_read_tokens=40),
        thoughts=("the user wants a listing", "two files"),
    )


def test_session_load_preserves_thoughts_messages_and_usage(tmp_path: Path) -> None:
    """Removal contract checklist: session load preserves thoughts, messages, and session_total_usage."""
    session = sample_session()
    path = tmp_path / "session.json"
    saved = save_session(session, path)
    loaded = load_session(path)
    assert loaded == saved
    assert loaded.thoughts == ("the user wants a listing", "two files")
    assert loaded.messages == sample_messages()
    assert loaded.session_total_usage == session.session_total_usage
    assert loaded.session_total_usage.cached_tokens == 40


def test_session_file_has_the_contract_keys_in_order(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    save_session(sample_session(), path)
    data = orjson.loads(path.read_bytes())
    assert list(data) == CONTRACT_KEYS
    assert data["version"] == 1
    assert data["messages"][0] == {"kind": "request", "parts": [{"part_kind": "text", "content": "list files"}]}
    assert data["session_total_usage"]["request_tokens"] == 280
    assert path.read_bytes().endswith(b"}\n")


def test_save_sets_last_modified_and_keeps_created_at(tmp_path: Path) -> None:
    session = dataclasses.replace(
        sample_session(), created_at="2020-01-01T00:00:00.000Z", last_modified="2020-01-01T00:00:00.000Z"
    )
    saved = save_session(session, tmp_path / "s.json")
    assert saved.created_at == "2020-01-01T00:00:00.000Z"
    assert saved.last_modified > "2026"
    assert saved.last_modified.endswith("Z")


def test_new_session_defaults() -> None:
    session = new_session(working_directory="/a")
    assert len(session.session_id) == 32
    assert (
        session.project_id
        == new_session(working_directory="/a").project_id
        != new_session(working_directory="/b").project_id
    )
    assert session.created_at == session.last_modified
    assert session.messages == ()
    assert session.session_total_usage == Usage()
    assert new_session().working_directory == str(Path.cwd())


def test_compaction_and_unknown_keys_survive_a_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    compaction = CompactionRecord(
        summary="they listed files",
        compacted_message_count=12,
        tokens_before=9000,
        tokens_after=1200,
        count=2,
        previous_summary="earlier",
        created_at="2026-01-01T00:00:00Z",
    )
    save_session(dataclasses.replace(sample_session(), compaction=compaction), path)
    data = orjson.loads(path.read_bytes())
    data["ui_state"] = {"scroll": 3}
    path.write_bytes(orjson.dumps(data))
    loaded = load_session(path)
    assert loaded.compaction == compaction
    assert loaded.extras == {"ui_state": {"scroll": 3}}
    save_session(loaded, path)
    assert list(orjson.loads(path.read_bytes())) == [*CONTRACT_KEYS, "compaction", "ui_state"]


@pytest.mark.parametrize(
    "content",
    [b'{"version": 1, "session_id": "x", "messages": [', b"not json", b"", b'{"name": "my notes"}', b"[1, 2]"],
    ids=["truncated", "garbage", "empty", "foreign-object", "foreign-list"],
)
def test_save_refuses_to_overwrite_a_corrupt_or_foreign_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "precious.json"
    path.write_bytes(content)
    with pytest.raises(
        HistoryFormatError, match=r"precious\.json: refusing to overwrite a file that is not an agentrig session"
    ):
        save_session(sample_session(), path)
    assert path.read_bytes() == content
    assert [p.name for p in tmp_path.iterdir()] == ["precious.json"]


def test_save_refuses_to_overwrite_a_newer_session_version(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(b'{"version": 2, "session_id": "x", "messages": []}')
    with pytest.raises(HistoryFormatError, match="unknown version 2"):
        save_session(sample_session(), path)


def test_load_accepts_a_canonical_history_document(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_bytes(dumps_history(sample_messages()))
    session = load_session(path)
    assert session.messages == sample_messages()
    assert session.thoughts == ()
    assert load_history_file(path) == list(sample_messages())


@pytest.mark.parametrize("name", ["pydantic_ai_2_38_dump.json", "pydantic_ai_2_68_dump.json"])
def test_load_accepts_pydantic_ai_dumps(name: str) -> None:
    history = load_history_file(DATA / name)
    assert [m.kind for m in history] == ["request", "response", "request", "response", "request", "response"]
    assert history[-1].text == "done"


def test_load_accepts_legacy_lists_and_keeps_thoughts_apart(tmp_path: Path) -> None:
    path = tmp_path / "legacy.json"
    path.write_bytes(
        orjson.dumps([{"content": "hi"}, {"thought": "greeting"}, {"role": "assistant", "content": "hello"}])
    )
    session = load_session(path)
    assert session.messages == (Message.request(TextPart(content="hi")), Message.response(TextPart(content="hello")))
    assert session.thoughts == ("greeting",)


def test_load_accepts_a_session_whose_messages_are_pydantic_ai_or_legacy_dicts(tmp_path: Path) -> None:
    dump = orjson.loads((DATA / "pydantic_ai_2_38_dump.json").read_bytes())
    path = tmp_path / "old-session.json"
    data = {
        "version": "1.0",
        "session_id": "abc",
        "project_id": "p",
        "created_at": "2025-01-01T00:00:00Z",
        "last_modified": "2025-01-02T00:00:00Z",
        "working_directory": "/w",
        "current_model": "anthropic:claude",
        "total_tokens": 99,
        "session_total_usage": {"request_tokens": 10, "response_tokens": 5, "cached_tokens": 2},
        "thoughts": ["first"],
        "messages": [*dump, {"thought": "embedded"}, {"content": "legacy follow-up"}],
    }
    path.write_bytes(orjson.dumps(data))
    session = load_session(path)
    assert session.thoughts == ("first", "embedded")
    assert session.messages[-1] == Message.request(TextPart(content="legacy follow-up"))
    assert len(session.messages) == len(dump) + 1
    assert session.session_total_usage == Usage(input_tokens=10, output_tokens=5, cache_read_tokens=2)
    assert (session.version, session.session_id, session.total_tokens) == (1, "abc", 99)
    assert path.read_bytes() == orjson.dumps(data)  # loading never writes


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"version": 7, "messages": []}, "version: unknown session version 7 (this agentrig reads version 1)"),
        ({"settings": {}, "name": "x"}, "not an agentrig session or history (an object with keys: name, settings"),
        ({"version": 1, "messages": [], "total_tokens": "12"}, "total_tokens: expected an integer, got '12'"),
        ({"version": 1, "messages": [], "total_tokens": True}, "total_tokens: expected an integer, got True"),
        ({"version": 1, "messages": [], "thoughts": [1]}, "thoughts[0]: expected a string, got 1"),
        (
            {"version": 1, "messages": [], "session_total_usage": {"input_tokens": -1}},
            "session_total_usage.input_tokens",
        ),
        ({"version": 1, "messages": [], "compaction": {"summary": 3}}, "compaction.summary: expected a string, got 3"),
        (
            {"version": 1, "messages": [{"kind": "request", "parts": [{"part_kind": "text"}]}]},
            "messages[0].parts[0].content",
        ),
        ({"version": 1, "messages": {}}, "messages: expected a list of messages, got an object"),
        ({"format": "agentrig.history/9", "messages": []}, "format: unknown history format"),
    ],
)
def test_load_errors_name_the_file_and_the_problem(tmp_path: Path, data: object, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(orjson.dumps(data))
    with pytest.raises(HistoryFormatError) as caught:
        load_session(path)
    assert str(caught.value).startswith(f"{path}: {expected}")
    assert path.read_bytes() == orjson.dumps(data)


def test_load_a_truncated_session(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    save_session(sample_session(), path)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(HistoryFormatError, match=r"s\.json: truncated JSON at line \d+, column \d+"):
        load_session(path)
