"""The tinyagent format: tunacode's own session files read, converted both ways, and written back for tunacode.

The files in `tinyagent_data/` were written by tunacode's `StateManager.save_session` from a real
`tinyagent.Agent` run (`tinyagent_data/generate.py`); nothing in them is hand-made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tinyagent.agent_types import AssistantMessage, CustomAgentMessage, ToolResultMessage, UserMessage
from typer.testing import CliRunner

from agentrig.cli import app, main
from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.canonical import (
    FileContent,
    Message,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
    UrlContent,
    UserContentPart,
)
from agentrig.runtime.history.sessions import load_session
from agentrig.runtime.history.tinyagent_format import MARKER, messages_from_tinyagent, messages_to_tinyagent
from agentrig.runtime.history.tinyagent_sessions import usage_from_tinyagent, usage_to_tinyagent
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.wire import history_from_json, loads_history
from tests.runtime.history_strategies import conversations, json_objects, json_values, raw_args, texts

DATA = Path(__file__).parent / "tinyagent_data"
SESSION = DATA / "tunacode_session.json"
MESSAGES = DATA / "tinyagent_messages.json"
runner = CliRunner()

# What tunacode's `_deserialize_message` does with each persisted message.
_MODELS: dict[str, Any] = {"user": UserMessage, "assistant": AssistantMessage, "tool_result": ToolResultMessage}


def tinyagent_load(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Through tinyagent's own models and back, as a tunacode save after a load does."""
    return [
        _MODELS.get(item["role"], CustomAgentMessage).model_validate(item).model_dump(exclude_none=True)
        for item in items
    ]


def test_a_tunacode_session_file_passes_check() -> None:
    result = runner.invoke(app, ["check", str(SESSION), str(MESSAGES)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [f"{SESSION}: OK (6 messages)", f"{MESSAGES}: OK (6 messages)"]


def test_a_tunacode_session_loads_with_every_part_and_key() -> None:
    session = load_session(SESSION)
    request, response, returns, answer, prompt, last = session.messages
    # The prompt and its screenshot are one user message: one user-content part, the image's data: URL its bytes.
    (part,) = request.parts
    assert isinstance(part, UserContentPart)
    text, image = part.content
    assert text == "Read notes.txt and count its words; this is the screen:"
    assert isinstance(image, FileContent)
    assert image.media_type == "image/png"
    assert image.data.startswith(b"\x89PNG")
    assert response.parts == (
        ThoughtPart(content="read the file, then count the words", signature="sig-abc"),
        TextPart(content="Let me look."),
        ToolCallPart(tool_call_id="call_read", tool_name="read_file", args={"path": "notes.txt"}),
        ToolCallPart(tool_call_id="call_count", tool_name="word_count", args={"text": "", "strict": True}),
    )
    assert returns.parts == (
        ToolReturnPart(tool_call_id="call_read", tool_name="read_file", content="notes.txt: hello"),
        ToolReturnPart(
            tool_call_id="call_count",
            tool_name="word_count",
            content="cannot count words of empty text",
            outcome="failed",
        ),
    )
    assert answer.kind == last.kind == "response"
    assert prompt == Message.request(TextPart(content="Did it work?"))
    # Usage names mapped: input/output/cache_read/cache_write; requests and tool calls counted from the messages.
    assert session.session_total_usage == Usage(
        requests=3, tool_calls=2, input_tokens=600, output_tokens=63, cache_read_tokens=30, cache_write_tokens=15
    )
    assert session.thoughts == ("the user wants a word count",)
    assert session.compaction is not None
    assert (session.compaction.count, session.compaction.created_at) == (1, "2026-01-01T00:00:01+00:00")
    assert session.extras["selected_skill_names"] == ["python"]
    assert session.extras["session_total_cost"]["input"] == pytest.approx(0.0006)  # type: ignore[index]
    assert (session.session_id, session.project_id, session.current_model) == (
        "6f1c2d9e-0000-4000-8000-00000000cafe",
        "fixture-project",
        "openai:gpt-4.1",
    )


def _essentials(item: dict[str, Any]) -> dict[str, Any]:
    """What a canonical message keeps of a tinyagent message (see docs/tinyagent.md): no metadata, no `details`."""
    kept = ("role", "content", "tool_call_id", "tool_name", "is_error")
    essentials = {key: value for key, value in item.items() if key in kept}
    if item["role"] == "tool_result":
        essentials["details"] = {}
    return essentials


def test_tinyagent_messages_convert_to_canonical_and_back(tmp_path: Path) -> None:
    canonical = tmp_path / "canonical.json"
    back = tmp_path / "back.json"
    assert runner.invoke(app, ["convert", str(MESSAGES), "-o", str(canonical)]).exit_code == 0
    result = runner.invoke(app, ["convert", str(canonical), "--to", "tinyagent", "-o", str(back)])
    assert result.exit_code == 0, result.output
    original = json.loads(MESSAGES.read_bytes())
    written = json.loads(back.read_bytes())
    assert written == [_essentials(item) for item in original]
    assert loads_history(back.read_bytes()) == loads_history(MESSAGES.read_bytes())


def test_a_session_converts_to_a_session_tunacode_reads_and_back(tmp_path: Path) -> None:
    out = tmp_path / "tunacode.json"
    result = runner.invoke(app, ["convert", str(SESSION), "--to", "tinyagent", "-o", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_bytes())
    original = json.loads(SESSION.read_bytes())
    for key in ("version", "session_id", "project_id", "created_at", "working_directory", "selected_skill_names"):
        assert data[key] == original[key], key
    assert data["compaction"] == original["compaction"]
    assert data["thoughts"] == original["thoughts"]
    assert data["session_total_usage"]["cost"] == original["session_total_usage"]["cost"]
    assert data["messages"] == tinyagent_load(data["messages"])  # tinyagent's models accept every message
    again = load_session(out)
    assert again.messages == load_session(SESSION).messages
    assert again.session_total_usage == load_session(SESSION).session_total_usage


def test_a_pydantic_ai_history_converts_to_a_tunacode_session_with_session_flag(tmp_path: Path) -> None:
    dump = Path(__file__).parents[1] / "runtime" / "data" / "pydantic_ai_2_68_dump.json"
    out = tmp_path / "tunacode.json"
    result = runner.invoke(app, ["convert", str(dump), "--to", "tinyagent", "--session", "-o", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_bytes())
    assert set(data["session_total_usage"]) == {"input", "output", "cache_read", "cache_write", "total_tokens", "cost"}
    assert data["messages"] == tinyagent_load(data["messages"])
    assert load_session(out).messages == tuple(history_from_json(json.loads(dump.read_bytes())))


def test_session_flag_needs_the_tinyagent_target(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["convert", str(SESSION), "--session"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == "agentrig: error: --session needs --to tinyagent\n"


# --- round trips: canonical -> tinyagent -> (tinyagent's own models) -> canonical ---

_ids = st.sampled_from(["c1", "c2", "c3"])
_extra_parts = st.one_of(
    st.builds(ThoughtPart, content=texts, signature=st.none() | texts, provider_name=st.none() | texts),
    st.builds(ToolCallPart, tool_call_id=_ids, tool_name=texts, args=json_objects | raw_args),
)
_request_extras = st.one_of(
    st.builds(
        ToolReturnPart,
        tool_call_id=_ids,
        content=json_values,
        tool_name=st.none() | texts,
        outcome=st.sampled_from(["success", "failed", "denied", "interrupted"]),
    ),
    st.builds(RetryPromptPart, content=texts | st.lists(json_objects, max_size=2), tool_name=texts, tool_call_id=_ids),
    st.builds(RetryPromptPart, content=texts | st.lists(json_objects, max_size=2)),
    st.builds(SystemPromptPart, content=texts),
    st.lists(
        texts
        | st.builds(FileContent, data=st.binary(max_size=12), media_type=st.sampled_from(["image/png", "image/gif"]))
        | st.builds(UrlContent, url=texts, kind=st.just("image-url"), media_type=st.none() | texts),
        max_size=3,
    ).map(lambda items: UserContentPart(content=tuple(items))),
    st.builds(TextPart, content=texts),
)
_messages = st.one_of(
    st.lists(_extra_parts, max_size=3).map(lambda parts: Message.response(*parts)),
    st.lists(_request_extras, max_size=4).map(lambda parts: Message.request(*parts)),
).flatmap(
    lambda message: st.builds(
        Message,
        kind=st.just(message.kind),
        parts=st.just(message.parts),
        run_id=st.none() | texts,
        state=st.none() | st.just("interrupted"),
    )
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(conversations, st.lists(_messages, max_size=8)))
def test_canonical_to_tinyagent_to_canonical_round_trips(history: list[Message]) -> None:
    written = messages_to_tinyagent(history)
    through_tinyagent = tinyagent_load(json.loads(json.dumps(written)))
    assert messages_from_tinyagent(through_tinyagent) == (history, [])


def test_a_failed_tool_result_is_a_failed_tool_return_and_back() -> None:
    history = [
        Message.response(ToolCallPart(tool_call_id="c1", tool_name="bash", args={"c": "ls"})),
        Message.request(ToolReturnPart(tool_call_id="c1", tool_name="bash", content="boom", outcome="failed")),
    ]
    written = messages_to_tinyagent(history)
    assert written[1] == {
        "role": "tool_result",
        "tool_call_id": "c1",
        "tool_name": "bash",
        "details": {},
        "content": [{"type": "text", "text": "boom"}],
        "is_error": True,
    }
    assert MARKER not in written[0]  # plain histories need no marker
    assert MARKER not in written[1]


def test_a_tool_retry_is_an_error_result_marked_as_a_retry() -> None:
    retry = RetryPromptPart(content=[{"loc": ["x"], "msg": "bad"}], tool_name="bash", tool_call_id="c1")
    written = messages_to_tinyagent([Message.request(retry)])
    assert written[0]["is_error"] is True
    assert json.loads(written[0]["content"][0]["text"]) == [{"loc": ["x"], "msg": "bad"}]
    assert written[0][MARKER] == {"retry": True, "content": [{"loc": ["x"], "msg": "bad"}]}


def test_two_prompts_in_a_row_stay_two_requests_so_check_reports_them(tmp_path: Path) -> None:
    path = tmp_path / "two.json"
    prompts = [{"role": "user", "content": [{"type": "text", "text": t}]} for t in ("a", "b")]
    path.write_text(json.dumps(prompts))
    result = runner.invoke(app, ["check", str(path)])
    assert result.exit_code == 1
    assert "no_consecutive_requests" in result.output


def test_usage_names_map_both_ways() -> None:
    usage = usage_from_tinyagent({"input": 7, "output": 3, "cache_read": 2, "cache_write": 1, "total_tokens": 13})
    assert usage == Usage(input_tokens=7, output_tokens=3, cache_read_tokens=2, cache_write_tokens=1)
    assert usage_to_tinyagent(usage) == {
        "input": 7,
        "output": 3,
        "cache_read": 2,
        "cache_write": 1,
        "total_tokens": 10,
        "cost": {"input": 0.0, "output": 0.0, "cache_read": 0.0, "cache_write": 0.0, "total": 0.0},
    }


@pytest.mark.parametrize(
    ("item", "field", "reason"),
    [
        ({"role": "assistant", "content": [{"type": "tool_call", "name": "x"}]}, "[1].content[0].id", "non-empty"),
        ({"role": "tool_result", "content": []}, "[1].tool_call_id", "non-empty string"),
        ({"role": "tool_result", "tool_call_id": "c", "is_error": "yes"}, "[1].is_error", "true or false"),
        ({"role": "robot", "content": []}, "[1].role", "unknown role 'robot'"),
        ({"role": ["user"], "content": []}, "[1].role", "unknown role ['user']"),
        ({"role": "user", "content": [{"type": "audio"}]}, "[1].content[0].type", "not 'audio'"),
    ],
)
def test_a_bad_tinyagent_message_names_the_field(item: dict[str, Any], field: str, reason: str) -> None:
    items = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}, item]
    with pytest.raises(HistoryFormatError) as error:
        history_from_json(items, source="h.json")
    assert error.value.field == field
    assert reason in error.value.reason


def test_a_part_with_no_tinyagent_form_is_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "file.json"
    path.write_text(json.dumps([{"kind": "request", "parts": [{"part_kind": "file", "url": "x"}]}]))
    with pytest.raises(SystemExit) as exit_info:
        main(["convert", str(path), "--to", "tinyagent", "-o", str(tmp_path / "out.json")])
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"agentrig: error: {path}")
    assert "messages[0].parts[0]" in lines[0]
    assert "a file part has no tinyagent form" in lines[0]
    assert not (tmp_path / "out.json").exists()


def test_a_tunacode_session_goes_through_pydantic_ai_and_back_with_its_image(tmp_path: Path) -> None:
    from pydantic_ai.messages import BinaryContent, ModelMessagesTypeAdapter

    dump = tmp_path / "dump.json"
    result = runner.invoke(app, ["convert", str(MESSAGES), "--to", "pydantic-ai", "-o", str(dump)])
    assert result.exit_code == 0, result.output
    first = ModelMessagesTypeAdapter.validate_json(dump.read_bytes())[0]
    text, image = first.parts[0].content  # type: ignore[union-attr, misc]
    assert isinstance(text, str)
    assert text.startswith("Read notes.txt")
    assert isinstance(image, BinaryContent)  # the data: URL's bytes, as pydantic-ai holds a file
    assert image.data.startswith(b"\x89PNG")
    assert image.media_type == "image/png"
    via_pydantic_ai = runner.invoke(app, ["convert", str(dump), "--to", "tinyagent"])
    direct = runner.invoke(app, ["convert", str(MESSAGES), "--to", "tinyagent"])
    assert json.loads(via_pydantic_ai.stdout) == json.loads(direct.stdout)
