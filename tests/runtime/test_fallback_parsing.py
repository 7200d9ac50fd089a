"""Tool calls written as text: the pure parser and the response rewrite."""

from __future__ import annotations

from pydantic_ai.messages import ModelResponse, TextPart, ThinkingPart, ToolCallPart

from agentrig.runtime.models.fallback_parsing import FallbackToolCall, parse_fallback_tool_calls
from agentrig.runtime.models.request_model import with_fallback_tool_calls


def test_tagged_calls_are_found_in_order_and_removed_from_the_text() -> None:
    parsed = parse_fallback_tool_calls(
        'Let me check. <tool_call>{"name": "ls", "arguments": {"path": "."}}</tool_call>\n'
        '<tool_call>{"name": "cat", "arguments": "{\\"path\\": \\"a\\"}"}</tool_call> Done.'
    )
    assert parsed.calls == (
        FallbackToolCall(tool_name="ls", args={"path": "."}),
        FallbackToolCall(tool_name="cat", args={"path": "a"}),
    )
    assert parsed.remaining_text == "Let me check. \n Done."


def test_fenced_json_block_is_a_call_when_no_tag_is_present() -> None:
    parsed = parse_fallback_tool_calls('```json\n{"name": "ls", "args": {"path": "/"}}\n```')
    assert parsed.calls == (FallbackToolCall(tool_name="ls", args={"path": "/"}),)
    assert parsed.remaining_text == ""


def test_text_without_calls_or_with_invalid_blocks_is_left_alone() -> None:
    for text in (
        "no calls here",
        "<tool_call>not json</tool_call>",
        '<tool_call>{"arguments": {}}</tool_call>',  # no name
        '<tool_call>{"name": "x", "arguments": [1]}</tool_call>',  # arguments not an object
        '```json\n{"key": "value"}\n```',  # JSON, but not a call
    ):
        parsed = parse_fallback_tool_calls(text)
        assert parsed.calls == ()
        assert parsed.remaining_text == text


def test_missing_arguments_mean_no_arguments() -> None:
    assert parse_fallback_tool_calls('<tool_call>{"name": "now"}</tool_call>').calls == (
        FallbackToolCall(tool_name="now", args={}),
    )


def test_response_rewrite_numbers_ids_after_earlier_fallback_calls() -> None:
    earlier = [ModelResponse(parts=[ToolCallPart("ls", {}, tool_call_id="fallback_1")])]
    response = ModelResponse(
        parts=[ThinkingPart("hmm"), TextPart('ok <tool_call>{"name": "ls", "arguments": {"a": 1}}</tool_call>')]
    )
    rewritten = with_fallback_tool_calls(response, earlier)
    assert [p.part_kind for p in rewritten.parts] == ["thinking", "text", "tool-call"]
    call = rewritten.parts[2]
    assert isinstance(call, ToolCallPart)
    assert (call.tool_call_id, call.tool_name, call.args) == ("fallback_2", "ls", {"a": 1})
    assert rewritten.parts[1] == TextPart("ok")


def test_structured_calls_win_over_text() -> None:
    response = ModelResponse(
        parts=[TextPart('<tool_call>{"name": "ls"}</tool_call>'), ToolCallPart("cat", {}, tool_call_id="c1")]
    )
    assert with_fallback_tool_calls(response, []) is response
