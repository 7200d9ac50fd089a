"""What a scenario cannot replay is refused, naming the message and why, and nothing is written: one case per
entry of docs/scaffold.md's refusal table (each entry names its case here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.history import jsonio
from agentrig.runtime.history.canonical import (
    Message,
    OpaquePart,
    RetryPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
)
from agentrig.runtime.history.wire import dumps_history
from agentrig.runtime.scaffold import Unreplayable
from tests.scaffold.replay import scaffold_to

_AGENT = "tests.scaffold.faithful_agents:approval_agent"
_ASK = Message.request(TextPart(content="Delete /tmp/a"))
_CALL = Message.response(ToolCallPart(tool_call_id="a1", tool_name="delete_file", args={"path": "/tmp/a"}))
_DONE = Message.response(TextPart(content="Done."))


def _result(outcome: str = "success", content: object = "deleted /tmp/a") -> Message:
    return Message.request(ToolReturnPart(tool_call_id="a1", tool_name="delete_file", content=content, outcome=outcome))  # pyright: ignore[reportArgumentType]


CASES: dict[str, tuple[list[Message], str | None, str]] = {
    "image": (
        [
            Message.request(TextPart(content="What is this?"), OpaquePart(part_kind="image-url", data={"url": "x"})),
            _DONE,
        ],
        None,
        "messages[0]: part 1 is a 'image-url' part (an image, a file or another non-text part)",
    ),
    "failed": (
        [_ASK, _CALL, _result("failed", "disk error"), _DONE],
        None,
        "messages[2]: call 'a1' (delete_file) ended 'failed'",
    ),
    "interrupted": (
        [_ASK, _CALL, _result("interrupted", "interrupted"), _DONE],
        None,
        "messages[2]: call 'a1' (delete_file) ended 'interrupted'",
    ),
    "interrupted-message": (
        [_ASK, Message(kind="response", parts=(TextPart(content="Partial"),), state="interrupted")],
        None,
        "messages[1]: the message is 'interrupted'",
    ),
    "denied-without-agent": (
        [_ASK, _CALL, _result("denied", "no"), _DONE],
        None,
        "messages[2]: call 'a1' (delete_file) was decided by the host (denied: an approval)",
    ),
    "approval-ended-otherwise": (
        [
            _ASK,
            _CALL,
            Message.request(RetryPromptPart(tool_call_id="a1", tool_name="delete_file", content="again")),
            _DONE,
        ],
        _AGENT,
        "messages[2]: call 'a1' (delete_file) asked for approval and ended 'retried'",
    ),
    "shares-a-request": (
        [_ASK, _CALL, Message.request(*_result().parts, TextPart(content="And now?")), _DONE],
        None,
        "messages[2]: the user's message shares a request with tool results of a turn that did not end",
    ),
    "no-result": (
        [_ASK, _CALL, Message.request(TextPart(content="Never mind")), _DONE],
        None,
        "messages[1]: tool call(s) 'a1' have no recorded result",
    ),
    "stopped-after-tools": (
        [_ASK, _CALL, _result()],
        "tests.scaffold.faithful_agents:terse_agent",
        "messages[1]: the turn ends with tool results and no model answer, and no output tool was called",
    ),
    "result-for-no-call": (
        [_ASK, _DONE, _result()],
        None,
        "messages[2]: a result for 'a1', which no call of the response before awaits",
    ),
    "empty-response": (
        [_ASK, Message.response()],
        None,
        "messages[1]: an empty response",
    ),
    "two-thoughts": (
        [_ASK, Message.response(ThoughtPart(content="a"), ThoughtPart(content="b"), TextPart(content="x"))],
        None,
        "messages[1]: part 1 (thought) comes where a scripted step cannot hold it",
    ),
    "text-after-call": (
        [_ASK, Message.response(*_CALL.parts, TextPart(content="late")), _result(), _DONE],
        None,
        "messages[1]: part 1 (text) comes where a scripted step cannot hold it",
    ),
    "two-responses": (
        [_ASK, _DONE, _DONE],
        None,
        "messages[2]: two model responses in a row",
    ),
    "two-user-texts": (
        [Message.request(TextPart(content="a"), TextPart(content="b")), _DONE],
        None,
        "messages[0]: the request holds 2 user texts",
    ),
    "starts-with-a-response": (
        [_DONE],
        None,
        "messages[0]: the history starts with a model response",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_refused_naming_the_message_and_nothing_written(case: str, tmp_path: Path) -> None:
    messages, agent, reason = CASES[case]
    source = tmp_path / f"{case}.json"
    jsonio.write_atomic(source, dumps_history(messages))
    with pytest.raises(Unreplayable) as refused:
        scaffold_to(source, tmp_path / "suite", agent=agent)
    assert refused.value.message.startswith(f"{source}: {reason}"), refused.value.message
    assert not (tmp_path / "suite").exists()
