"""The fields beyond the seed wire format, framework-free: written when set and left out when not, kept through the
canonical and tinyagent round trips, merged as pydantic-ai merges them, and left out of what goldens compare only
when they are drawn per run."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.history.canonical import (
    CapabilityPart,
    Message,
    OpaquePart,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from agentrig.runtime.history.cleanup import merge_consecutive_requests
from agentrig.runtime.history.per_run import message_json_without_per_run_values, without_per_run_values
from agentrig.runtime.history.pydantic_ai_dicts import to_pydantic_ai_dicts
from agentrig.runtime.history.retry_causes import NO_OUTPUT_TEXTS, implied_cause, stored_cause
from agentrig.runtime.history.tinyagent_format import messages_from_tinyagent, messages_to_tinyagent
from agentrig.runtime.history.wire import dumps_history, history_from_json, loads_history, message_to_json

PAUSE = {"__pydantic_ai__": {"deferred_pause": True}}

CAPABILITY = CapabilityPart(
    kind="myapp.weather",
    content="sunny",
    record_id="01a2-record",
    data={"source": {"source_kind": "user"}, "scope": "conversation", "capability_id": "cap-run-7", "city": "Oslo"},
)


def history() -> list[Message]:
    call = ToolCallPart(tool_call_id="o1", tool_name="final_result", args={"n": 1}, tool_kind="output")
    secret = ToolCallPart(tool_call_id="s1", tool_name="secret", args={}, ui_visibility="redacted")
    return [
        Message(kind="request", parts=(TextPart(content="go"),), conversation_id="conv-1", run_id="run-1"),
        Message(kind="response", parts=(secret, call), conversation_id="conv-1", workspace_ref={"id": "ws"}),
        Message(
            kind="request",
            parts=(
                ToolReturnPart(tool_call_id="s1", tool_name="secret", content="12345", ui_visibility="redacted"),
                ToolReturnPart(tool_call_id="o1", content="done", tool_kind="output", metadata={"app": 1}),
                RetryPromptPart(content="Please return text.", cause="model_retry"),
                CAPABILITY,
            ),
            metadata=PAUSE,
        ),
    ]


def test_the_fields_survive_the_canonical_round_trip_and_are_left_out_when_unset() -> None:
    assert loads_history(dumps_history(history())) == history()
    plain = message_to_json(Message(kind="request", parts=(TextPart(content="hi"),)))
    assert plain == {"kind": "request", "parts": [{"part_kind": "text", "content": "hi"}]}


def test_the_fields_survive_the_tinyagent_round_trip() -> None:
    # tinyagent has no place for them: agentrig's marker keeps them, and tunacode's loader ignores it.
    back, thoughts = messages_from_tinyagent(messages_to_tinyagent(history()[:2]))
    assert (back, thoughts) == (history()[:2], [])


def test_going_back_to_pydantic_ai_writes_them_under_pydantic_ai_s_names() -> None:
    dicts = to_pydantic_ai_dicts(history(), retry_shape="retried")
    returns = dicts[2]["parts"]
    assert dicts[2]["metadata"] == PAUSE
    assert dicts[1]["workspace_ref"] == {"id": "ws"}
    assert dicts[1]["parts"][1]["tool_kind"] == "output"
    assert returns[0]["ui_visibility"] == "redacted"
    assert returns[1]["metadata"] == {"app": 1}
    assert returns[2] == {
        "part_kind": "retry-feedback",
        "content": "Please return text.",
        "retry": {"cause": "model_retry"},
    }
    assert returns[3] == {
        "part_kind": "capability",
        "source": {"source_kind": "user"},
        "scope": "conversation",
        "capability_id": "cap-run-7",
        "city": "Oslo",
        "kind": "myapp.weather",
        "content": "sunny",
        "record_id": "01a2-record",
    }


def test_a_release_that_cannot_hold_a_tool_kind_is_given_none() -> None:
    # 2.38's `ToolPartKind` is the Literal 'tool-search' | 'capability-load': 2.78's 'output' would not validate.
    dicts = to_pydantic_ai_dicts(history(), retry_shape="retry-prompt", tool_kinds=frozenset({"tool-search"}))
    assert "tool_kind" not in dicts[1]["parts"][1]
    assert "tool_kind" not in dicts[2]["parts"][1]


def test_goldens_leave_out_the_ids_drawn_per_run_and_keep_the_rest() -> None:
    compared = without_per_run_values(history())
    assert [message.run_id for message in compared] == [None, None, None]
    assert [message.conversation_id for message in compared] == [None, None, None]
    capability = compared[2].parts[3]
    assert isinstance(capability, CapabilityPart)
    assert capability.record_id is None
    assert "capability_id" not in capability.data
    assert capability.data["city"] == "Oslo"
    assert compared[2].metadata == PAUSE  # the mark that changes what a resumed run does stays
    assert compared[1].workspace_ref == {"id": "ws"}


def test_goldens_leave_out_pydantic_ai_s_other_bookkeeping_marks() -> None:
    ui_id = {"__pydantic_ai__": {"ui_message_id": "u1"}, "app": "kept"}
    (message,) = without_per_run_values([Message(kind="request", parts=(TextPart(content="x"),), metadata=ui_id)])
    assert message.metadata == {"app": "kept"}
    as_json = message_json_without_per_run_values(
        {"kind": "request", "parts": [{"part_kind": "file", "timestamp": "t", "content": 1}], "metadata": ui_id}
    )
    assert as_json == {"kind": "request", "parts": [{"part_kind": "file", "content": 1}], "metadata": {"app": "kept"}}
    assert without_per_run_values([OpaqueMessage]) == [
        Message(kind="response", parts=(OpaquePart(part_kind="file", data={"content": 1}),))
    ]


OpaqueMessage = Message(kind="response", parts=(OpaquePart(part_kind="file", data={"content": 1, "timestamp": "t"}),))


@pytest.mark.parametrize(
    ("marks", "merged"),
    [
        ((PAUSE, PAUSE), PAUSE),  # both at the pause: still the pause
        ((PAUSE, None), None),  # the pause, then the host's answer: the run goes on
        (({"app": 1, **PAUSE}, {"__pydantic_ai__": {"x": 2}}), {"app": 1, "__pydantic_ai__": {"x": 2}}),
    ],
)
def test_merging_requests_keeps_the_pause_mark_only_when_every_request_had_it(
    marks: tuple[dict[str, object] | None, dict[str, object] | None], merged: dict[str, object] | None
) -> None:
    requests = [
        Message(kind="request", parts=(ToolReturnPart(tool_call_id=f"c{index}", content="x"),), metadata=mark)
        for index, mark in enumerate(marks)
    ]
    (message,) = merge_consecutive_requests(requests)
    assert message.metadata == merged


def test_a_retry_cause_is_kept_only_where_the_content_does_not_say_it() -> None:
    assert "Please return text." in NO_OUTPUT_TEXTS
    assert "Please include your response in a tool call or return text." not in NO_OUTPUT_TEXTS  # the order is fixed
    assert "Please return text or include your response in a tool call." in NO_OUTPUT_TEXTS
    assert implied_cause([{"msg": "x"}], tool_bound=True) == "validation_error"
    assert implied_cause("Unknown tool name: 'x'. No tools available.", tool_bound=True) == "unknown_tool"
    assert implied_cause("Please return text.", tool_bound=False) == "no_output"
    assert implied_cause("Please return text.", tool_bound=True) == "model_retry"
    assert stored_cause({"cause": "no_output"}, "Please return text.", tool_bound=False) is None
    assert stored_cause({"cause": "model_retry"}, "Please return text.", tool_bound=False) == "model_retry"
    assert stored_cause({"cause": "unavailable_tool"}, "not now", tool_bound=True) == "unavailable_tool"
    assert stored_cause(None, "anything", tool_bound=True) is None  # a release before 2.60 records none


def test_a_pydantic_ai_dump_s_retry_cause_and_file_record_read_as_the_canonical_fields() -> None:
    dump = [
        {
            "kind": "request",
            "parts": [
                {"part_kind": "retry-feedback", "content": "Please return text.", "retry": {"cause": "model_retry"}},
                {
                    "part_kind": "tool-return",
                    "tool_name": "t",
                    "tool_call_id": "c",
                    "content": {"kind": "image-url", "url": "https://x/a.png"},
                    "content_file_digests": ["d1"],
                },
                {
                    "part_kind": "tool-return",
                    "tool_name": "t",
                    "tool_call_id": "e",
                    "content": [1],
                    "content_file_digests": [],
                },
            ],
            "conversation_id": "conv",
            "metadata": None,
            "failed_attempts": None,
        }
    ]
    (message,) = history_from_json(dump)
    retry, with_files, without = message.parts
    assert isinstance(retry, RetryPromptPart)
    assert retry.cause == "model_retry"
    assert isinstance(with_files, ToolReturnPart)
    assert with_files.content_file_digests == ["d1"]
    assert isinstance(without, ToolReturnPart)
    assert without.content_file_digests is None  # an empty record loads as none does
    assert message.conversation_id == "conv"


def test_a_failed_attempt_loses_only_its_per_run_timestamp_and_duration() -> None:
    attempt = {
        "model_name": "a",
        "outcome": "error",
        "error": "E: x",
        "timestamp": "t",
        "duration": "PT1S",
        "kind": "retry",
    }
    (message,) = history_from_json([{"kind": "response", "parts": [], "failed_attempts": [attempt]}])
    assert message.failed_attempts == [{"model_name": "a", "outcome": "error", "error": "E: x", "kind": "retry"}]
    assert message.failed_attempts is not None
    (back,) = to_pydantic_ai_dicts([message], retry_shape="retried")
    assert back["failed_attempts"] == [
        {"timestamp": "1970-01-01T00:00:00Z", "duration": 0, **message.failed_attempts[0]}
    ]


def test_a_wrong_value_names_its_field(tmp_path: Path) -> None:
    from agentrig.errors import HistoryFormatError

    bad = [
        {
            "kind": "response",
            "parts": [{"part_kind": "tool-call", "tool_call_id": "c", "tool_name": "t", "tool_kind": 3}],
        }
    ]
    with pytest.raises(HistoryFormatError) as raised:
        history_from_json(bad, source=tmp_path / "h.json")
    assert raised.value.field == "[0].parts[0].tool_kind"
    with pytest.raises(HistoryFormatError) as raised:
        history_from_json([{"kind": "request", "parts": [], "metadata": [1]}])
    assert raised.value.field == "[0].metadata"
    assert raised.value.message.endswith("[0].metadata: expected an object or null, got an array")
