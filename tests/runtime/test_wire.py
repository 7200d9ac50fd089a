"""The wire format: canonical <-> JSON, every input vocabulary, errors with field paths."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.canonical import (
    OPTIONAL_MESSAGE_FIELDS,
    OPTIONAL_PART_FIELDS,
    Message,
    OpaquePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
    UrlContent,
    UserContentPart,
    latest_response_text,
    tool_call_ids,
    tool_retry_ids,
    tool_return_ids,
)
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.history.pydantic_ai_dicts import to_pydantic_ai_dicts
from agentrig.runtime.history.wire import (
    HISTORY_FORMAT,
    dumps_history,
    history_and_thoughts_from_json,
    history_from_json,
    history_to_json,
    loads_history,
)
from agentrig.runtime.runfolder.jsonio import loads
from tests.runtime.history_strategies import histories

DATA = Path(__file__).parent / "data"
DUMPS = {"2.38": DATA / "pydantic_ai_2_38_dump.json", "2.68": DATA / "pydantic_ai_2_68_dump.json"}

VALIDATION_ERROR = {
    "type": "json_invalid",
    "loc": [],
    "msg": "Invalid JSON: EOF while parsing an object at line 1 column 7",
    "input": '{"k": 1',
}
# What both pydantic-ai dumps (the same run on 2.38 and on 2.68) mean, run ids aside.
EXPECTED_FROM_DUMPS = [
    Message.request(SystemPromptPart(content="Be terse."), TextPart(content="go")),
    Message.response(
        ThoughtPart(content="plan the calls", signature="sig-1"),
        ToolCallPart(tool_call_id="c1", tool_name="get", args={"k": "a"}),
        ToolCallPart(tool_call_id="c2", tool_name="flaky", args={}),
        ToolCallPart(tool_call_id="c3", tool_name="get", args='{"k": 1'),
    ),
    Message.request(
        ToolReturnPart(tool_call_id="c1", tool_name="get", content="value-a"),
        RetryPromptPart(content="bad input", tool_name="flaky", tool_call_id="c2"),
        RetryPromptPart(content=[VALIDATION_ERROR], tool_name="get", tool_call_id="c3"),
    ),
    Message.response(TextPart(content="draft")),
    Message.request(RetryPromptPart(content="not good enough")),
    Message.response(TextPart(content="done")),
]


def without_run_ids(history: list[Message]) -> list[Message]:
    return without_per_run_values(history)


def sample_history() -> list[Message]:
    return [
        Message.request(TextPart(content="list files"), run_id="run-1"),
        Message.response(
            ThoughtPart(content="use bash"),
            ToolCallPart(tool_call_id="tc_1", tool_name="bash", args={"command": "ls"}),
            ToolCallPart(tool_call_id="tc_2", tool_name="bash", args="not json"),
        ),
        Message.request(
            ToolReturnPart(tool_call_id="tc_1", tool_name="bash", content={"files": ["a", "b"]}),
            RetryPromptPart(content="bad args", tool_name="bash", tool_call_id="tc_2"),
        ),
        Message.response(
            ToolCallPart(tool_call_id="tc_3", tool_name="bash", args={}),
            OpaquePart(part_kind="file", data={"content": {"data": "aGk=", "media_type": "text/plain"}}),
        ),
        Message.request(ToolReturnPart(tool_call_id="tc_3", content="x", outcome="interrupted")),
        Message.response(TextPart(content="Two files.")),
        # The fields beyond the seed format, each set once (pydantic-ai 2.38 to 2.78).
        dataclasses.replace(
            Message.response(
                TextPart(content="cited", id="msg_1", provider_name="openai", provider_details={"a": 1}, citations=[]),
                ToolCallPart(
                    tool_call_id="tc_4",
                    tool_name="final_result",
                    args={},
                    tool_kind="output",
                    ui_visibility="redacted",
                    id="fc_1",
                    provider_name="openai",
                    provider_details={"b": 2},
                ),
            ),
            conversation_id="conv-1",
            metadata={"__pydantic_ai__": {"context_input_tokens": 10}},
            failed_attempts=[{"model_name": "a", "outcome": "error", "kind": "retry", "retry_after": 2.0}],
            workspace_ref={"id": "w"},
        ),
        dataclasses.replace(
            Message.request(
                ToolReturnPart(
                    tool_call_id="tc_4",
                    tool_name="final_result",
                    content="Final result processed.",
                    tool_kind="output",
                    ui_visibility="redacted",
                    metadata={"app": True},
                    content_file_digests=["abc"],
                ),
                RetryPromptPart(content="Please return text.", cause="model_retry"),
            ),
            metadata={"__pydantic_ai__": {"deferred_pause": True}},
        ),
    ]


# --- writing ---


def test_writes_the_contract_shape_with_defaults_left_out() -> None:
    history = [
        Message.request(TextPart(content="...")),
        Message.response(ToolCallPart(tool_call_id="tc_1", tool_name="bash", args={"command": "ls"})),
        Message.request(ToolReturnPart(tool_call_id="tc_1", content="...")),
    ]
    assert history_to_json(history) == {
        "format": "agentrig.history/1",
        "messages": [
            {"kind": "request", "parts": [{"part_kind": "text", "content": "..."}]},
            {
                "kind": "response",
                "parts": [
                    {"part_kind": "tool-call", "tool_call_id": "tc_1", "tool_name": "bash", "args": {"command": "ls"}}
                ],
            },
            {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_call_id": "tc_1", "content": "..."}]},
        ],
    }


def test_writes_optional_keys_only_when_set() -> None:
    history = [
        Message.request(
            ToolReturnPart(tool_call_id="a", tool_name="t", content=None, outcome="failed"),
            RetryPromptPart(content=[{"msg": "x"}], tool_name="t", tool_call_id="b"),
            RetryPromptPart(content="again"),
            SystemPromptPart(content="sys"),
            run_id="r",
        ),
        Message.response(ThoughtPart(content="t", signature="s"), ThoughtPart(content="u")),
    ]
    assert history_to_json(history)["messages"] == [
        {
            "kind": "request",
            "parts": [
                {
                    "part_kind": "tool-return",
                    "tool_call_id": "a",
                    "tool_name": "t",
                    "content": None,
                    "outcome": "failed",
                },
                {"part_kind": "retry-prompt", "tool_call_id": "b", "tool_name": "t", "content": [{"msg": "x"}]},
                {"part_kind": "retry-prompt", "content": "again"},
                {"part_kind": "system-prompt", "content": "sys"},
            ],
            "run_id": "r",
        },
        {
            "kind": "response",
            "parts": [
                {"part_kind": "thought", "content": "t", "signature": "s"},
                {"part_kind": "thought", "content": "u"},
            ],
        },
    ]


def test_opaque_part_is_written_back_verbatim() -> None:
    raw = {"part_kind": "builtin-tool-call", "tool_name": "web_search", "args": {"q": "x"}, "provider_name": "openai"}
    history = history_from_json([{"kind": "response", "parts": [raw]}])
    assert history[0].parts == (
        OpaquePart(part_kind="builtin-tool-call", data={k: v for k, v in raw.items() if k != "part_kind"}),
    )
    assert history_to_json(history)["messages"][0]["parts"] == [raw]


def test_pretty_output_is_indented_with_a_trailing_newline() -> None:
    blob = dumps_history([Message.request(TextPart(content="hi"))], pretty=True)
    assert blob.startswith(b'{\n  "format": "agentrig.history/1",\n')
    assert blob.endswith(b"}\n")


# --- round trip ---


def test_history_survives_round_trip_with_identical_parts_and_ids() -> None:
    """Removal contract checklist: history survives round-trip serialization with identical parts and tool_call_ids."""
    history = sample_history()
    for pretty in (False, True):
        loaded = loads_history(dumps_history(history, pretty=pretty))
        assert loaded == history
        assert [m.parts for m in loaded] == [m.parts for m in history]
        assert tool_call_ids(loaded) == ["tc_1", "tc_2", "tc_3", "tc_4"]
        assert tool_return_ids(loaded) == ["tc_1", "tc_3", "tc_4"]
        assert tool_retry_ids(loaded) == ["tc_2"]


@given(histories)
def test_round_trip_is_identity_for_generated_histories(history: list[Message]) -> None:
    assert loads_history(dumps_history(history)) == history


def test_fast_decoders_build_values_equal_to_the_constructors() -> None:
    # The reader fills slots directly for speed; these values must be indistinguishable from constructed ones,
    # and a field added to a canonical class must show up here (and in wire_decoding.py's builders) first.
    optional = OPTIONAL_PART_FIELDS
    assert {f.name for f in dataclasses.fields(TextPart)} == {"content", "part_kind", *optional[TextPart]}
    assert {f.name for f in dataclasses.fields(ToolCallPart)} == {
        "tool_call_id",
        "tool_name",
        "args",
        "part_kind",
        *optional[ToolCallPart],
    }
    assert {f.name for f in dataclasses.fields(ToolReturnPart)} == {
        "tool_call_id",
        "tool_name",
        "content",
        "outcome",
        "part_kind",
        *optional[ToolReturnPart],
    }
    assert {f.name for f in dataclasses.fields(ThoughtPart)} == {
        "content",
        "signature",
        "provider_name",
        "id",
        "provider_details",
        "part_kind",
    }
    assert {f.name for f in dataclasses.fields(Message)} == {"kind", "parts", *OPTIONAL_MESSAGE_FIELDS}
    loaded = loads_history(dumps_history(sample_history()))
    for message, expected in zip(loaded, sample_history(), strict=True):
        assert repr(message) == repr(expected)
        for part in message.parts:
            for field in dataclasses.fields(part):
                getattr(part, field.name)  # every slot is filled
            with pytest.raises(dataclasses.FrozenInstanceError):
                part.part_kind = "x"  # pyright: ignore[reportAttributeAccessIssue]


# --- pydantic-ai dumps ---


@pytest.mark.parametrize("version", sorted(DUMPS))
def test_pydantic_ai_dumps_of_every_era_load_to_the_same_canonical_history(version: str) -> None:
    history = loads_history(DUMPS[version].read_bytes(), source=DUMPS[version])
    assert without_run_ids(history) == EXPECTED_FROM_DUMPS
    assert all(m.run_id for m in history)  # run ids are kept


def test_ui_extracts_latest_assistant_response_without_model_response() -> None:
    """Removal contract checklist: the latest assistant text comes from canonical messages, no ModelResponse."""
    for path in DUMPS.values():
        history = loads_history(path.read_bytes())
        assert latest_response_text(history) == "done"
        assert latest_response_text(history[:4]) == "draft"
        assert latest_response_text(history[:3]) is None  # responses so far hold only thoughts and tool calls


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"a": 1}, {"a": 1}),
        ('{"a": 1}', {"a": 1}),
        ("{}", {}),
        ("", {}),
        (None, {}),
        ('{"a": 1', '{"a": 1'),
        ("[1, 2]", "[1, 2]"),
        ('"str"', '"str"'),
        ("null", "null"),
        ("  ", "  "),
    ],
)
def test_tool_call_args_follow_args_as_dict_but_keep_non_objects_raw(args: object, expected: object) -> None:
    raw = [
        {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "t", "tool_call_id": "c", "args": args}]}
    ]
    (part,) = history_from_json(raw)[0].parts
    assert isinstance(part, ToolCallPart)
    assert part.args == expected


def test_pydantic_ai_parts_mapping() -> None:
    raw: list[dict[str, Any]] = [
        {
            "kind": "request",
            "parts": [
                {"part_kind": "user-prompt", "content": "hi", "timestamp": "t"},
                {"part_kind": "user-prompt", "content": ["look", {"url": "https://x/y.png", "kind": "image-url"}]},
                {"part_kind": "retry-prompt", "content": "again", "tool_name": None, "tool_call_id": "pyd_ai_x"},
                {"part_kind": "retry-feedback", "content": "bad", "retry": {"cause": "model_retry"}},
                {
                    "part_kind": "tool-return",
                    "tool_name": "t",
                    "content": "x",
                    "tool_call_id": "c",
                    "outcome": "denied",
                },
            ],
        },
    ]
    assert history_from_json(raw)[0].parts == (
        TextPart(content="hi"),
        UserContentPart(content=("look", UrlContent(url="https://x/y.png", kind="image-url"))),
        RetryPromptPart(content="again"),
        RetryPromptPart(content="bad"),
        ToolReturnPart(tool_call_id="c", tool_name="t", content="x", outcome="denied"),
    )


# --- legacy dicts ---


def test_legacy_dict_messages_and_thoughts() -> None:
    raw = [
        {"content": "hello"},
        {"thought": "the user greets"},
        {"role": "assistant", "content": "hi!"},
        {"role": "system", "content": "be nice"},
        {"role": "user", "content": "bye"},
    ]
    messages, thoughts = history_and_thoughts_from_json(raw)
    assert messages == [
        Message.request(TextPart(content="hello")),
        Message.response(TextPart(content="hi!")),
        Message.request(SystemPromptPart(content="be nice")),
        Message.request(TextPart(content="bye")),
    ]
    assert thoughts == ["the user greets"]
    assert history_from_json(raw) == messages


def test_a_bare_list_of_canonical_messages_is_accepted() -> None:
    history = sample_history()
    assert history_from_json(history_to_json(history)["messages"]) == history


# --- errors ---


def _error(data: object) -> str:
    with pytest.raises(HistoryFormatError) as caught:
        history_from_json(data, source="h.json")
    return str(caught.value)


def _doc(*messages: object) -> dict[str, object]:
    return {"format": HISTORY_FORMAT, "messages": list(messages)}


def _ok_messages() -> list[dict[str, Any]]:
    return history_to_json(sample_history())["messages"]


def test_error_names_the_field_path() -> None:
    messages = _ok_messages()
    del messages[3]["parts"][0]["tool_call_id"]
    assert _error(_doc(*messages)) == "h.json: messages[3].parts[0].tool_call_id: expected a string, got null"
    messages = _ok_messages()
    messages[1]["parts"][1]["tool_call_id"] = 7
    assert _error(messages) == "h.json: [1].parts[1].tool_call_id: expected a string, got a number"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"kind": "reply", "parts": []}, "messages[0].kind: expected 'request' or 'response', got 'reply'"),
        ({"kind": "request", "parts": {}}, "messages[0].parts: expected a list, got an object"),
        ({"kind": "request", "parts": ["hi"]}, "messages[0].parts[0]: expected a part object, got a string"),
        ({"kind": "request", "parts": [{"content": "x"}]}, "messages[0].parts[0].part_kind: missing"),
        (
            {"kind": "request", "parts": [{"part_kind": ["x"]}]},
            "messages[0].parts[0].part_kind: expected a string, got an array",
        ),
        (
            {"kind": "request", "parts": [{"part_kind": "text", "content": 3}]},
            "messages[0].parts[0].content: expected a string",
        ),
        (
            {
                "kind": "request",
                "parts": [{"part_kind": "tool-return", "tool_call_id": "c", "content": 1, "outcome": "meh"}],
            },
            "messages[0].parts[0].outcome: unknown tool outcome 'meh'",
        ),
        (
            {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_call_id": "c"}]},
            "messages[0].parts[0].content: missing",
        ),
        (
            {
                "kind": "response",
                "parts": [{"part_kind": "tool-call", "tool_call_id": "c", "tool_name": "t", "args": [1]}],
            },
            "messages[0].parts[0].args: expected an object or a string, got an array",
        ),
        (
            {"kind": "request", "parts": [{"part_kind": "retry-prompt", "content": 5}]},
            "messages[0].parts[0].content: expected a string or a list",
        ),
        ({"kind": "request", "parts": [], "run_id": 5}, "messages[0].run_id: expected a string or null"),
        ({"role": "tool", "content": "x"}, "messages[0].role: unknown role 'tool'"),
        ({"content": ["x"]}, "messages[0].content: expected a string, got an array"),
        ({"thought": None}, "messages[0].thought: expected a string, got null"),
        ({"text": "x"}, "messages[0]: not a message"),
        (3, "messages[0]: not a message"),
    ],
)
def test_wrong_shapes_are_reported_with_their_path(message: object, expected: str) -> None:
    assert _error(_doc(message)).startswith(f"h.json: {expected}")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"format": "agentrig.history/2", "messages": []},
            "h.json: format: unknown history format 'agentrig.history/2'",
        ),
        ({"messages": []}, "h.json: format: not a history document: missing the format tag"),
        ({"format": HISTORY_FORMAT}, "h.json: messages: expected a list of messages, got null"),
        ("text", "h.json: expected a history document or a list of messages, got a string"),
    ],
)
def test_documents_of_the_wrong_kind_are_refused(data: object, expected: str) -> None:
    assert _error(data).startswith(expected)


def test_loads_history_reports_bad_json_with_the_file() -> None:
    with pytest.raises(HistoryFormatError, match=r"^h\.json: truncated JSON at line 1"):
        loads_history(b'{"format": "agentrig.history/1", "messages": [', source="h.json")


# --- to pydantic-ai dicts ---


def test_to_pydantic_ai_dicts_before_2_60() -> None:
    dicts = to_pydantic_ai_dicts(loads_history(DUMPS["2.38"].read_bytes()), retry_shape="retry-prompt")
    assert [[p["part_kind"] for p in m["parts"]] for m in dicts] == [
        ["system-prompt", "user-prompt"],
        ["thinking", "tool-call", "tool-call", "tool-call"],
        ["tool-return", "retry-prompt", "retry-prompt"],
        ["text"],
        ["retry-prompt"],
        ["text"],
    ]
    assert dicts[2]["parts"][1] == {
        "part_kind": "retry-prompt",
        "content": "bad input",
        "tool_name": "flaky",
        "tool_call_id": "c2",
    }
    assert dicts[4]["parts"][0] == {"part_kind": "retry-prompt", "content": "not good enough", "tool_name": None}
    assert dicts[1]["parts"][0] == {
        "part_kind": "thinking",
        "content": "plan the calls",
        "signature": "sig-1",
        "provider_name": None,
        "id": None,
        "provider_details": None,
    }
    assert dicts[1]["parts"][3] == {
        "part_kind": "tool-call",
        "tool_name": "get",
        "args": '{"k": 1',
        "tool_call_id": "c3",
    }
    assert all(m["run_id"] for m in dicts)


def test_to_pydantic_ai_dicts_from_2_60() -> None:
    dicts = to_pydantic_ai_dicts(EXPECTED_FROM_DUMPS, retry_shape="retried")
    assert dicts[2]["parts"] == [
        {
            "part_kind": "tool-return",
            "tool_name": "get",
            "content": "value-a",
            "tool_call_id": "c1",
            "outcome": "success",
        },
        {
            "part_kind": "tool-return",
            "tool_name": "flaky",
            "content": "bad input",
            "tool_call_id": "c2",
            "outcome": "retried",
            "retry": {"cause": "model_retry"},
        },
        {
            "part_kind": "tool-return",
            "tool_name": "get",
            "content": [VALIDATION_ERROR],
            "tool_call_id": "c3",
            "outcome": "retried",
            "retry": {"cause": "validation_error"},
        },
    ]
    assert dicts[4]["parts"] == [
        {"part_kind": "retry-feedback", "content": "not good enough", "retry": {"cause": "model_retry"}}
    ]
    assert "run_id" not in dicts[0]


def test_to_pydantic_ai_dicts_fills_a_missing_tool_name_from_the_call_and_keeps_opaque_parts() -> None:
    opaque = OpaquePart(part_kind="user-prompt", data={"content": ["a", "b"]})
    history = [
        Message.request(opaque),
        Message.response(ToolCallPart(tool_call_id="c", tool_name="bash", args={})),
        Message.request(ToolReturnPart(tool_call_id="c", content="ok")),
    ]
    dicts = to_pydantic_ai_dicts(history, retry_shape="retried")
    assert dicts[0]["parts"] == [{"part_kind": "user-prompt", "content": ["a", "b"]}]
    assert dicts[2]["parts"][0]["tool_name"] == "bash"


@pytest.mark.parametrize(
    "message",
    [
        Message.request(ToolCallPart(tool_call_id="c", tool_name="t")),
        Message.request(ThoughtPart(content="t")),
        Message.response(ToolReturnPart(tool_call_id="c", content="x")),
        Message.response(SystemPromptPart(content="s")),
    ],
)
def test_to_pydantic_ai_dicts_refuses_a_part_in_the_wrong_message(message: Message) -> None:
    with pytest.raises(ValueError, match="cannot be in a"):
        to_pydantic_ai_dicts([message], retry_shape="retried")


def test_installed_pydantic_ai_accepts_the_dicts_and_its_dump_loads_back_the_same() -> None:
    from pydantic_ai import messages as pydantic_ai_messages

    shape = "retried" if "RetryFeedbackPart" in vars(pydantic_ai_messages) else "retry-prompt"
    adapter = pydantic_ai_messages.ModelMessagesTypeAdapter
    native = adapter.validate_python(to_pydantic_ai_dicts(EXPECTED_FROM_DUMPS, retry_shape=shape))
    assert loads_history(adapter.dump_json(native)) == EXPECTED_FROM_DUMPS


def test_source_path_is_named_in_errors_from_files(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('[{"kind": "request", "parts": [{"part_kind": "tool-call"}]}]')
    with pytest.raises(HistoryFormatError, match=r"x\.json: \[0\]\.parts\[0\]\.tool_call_id: expected a string"):
        loads_history(path.read_bytes(), source=path)
    assert loads(b"[]") == []
