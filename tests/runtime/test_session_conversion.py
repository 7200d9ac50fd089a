"""A session's conversion is kept between attempts: each converts only the messages it adds, and gives exactly
what converting the whole history gives."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart

from agentrig.runtime.engine.pydantic_ai_engine import session_conversion
from agentrig.runtime.engine.pydantic_ai_engine.session_conversion import SessionConversion
from agentrig.runtime.history.canonical import Message, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.canonical import TextPart as CanonicalText
from agentrig.runtime.models.conversion import to_canonical, to_pydantic_ai


def step(index: int, *, named: bool = True) -> list[Message]:
    """A prompt, a tool call, its return (unnamed: written without the tool's name, which the call gives), a text."""
    call_id = f"call_{index}"
    return [
        Message.request(CanonicalText(content=f"question {index}")),
        Message.response(ToolCallPart(tool_call_id=call_id, tool_name="bash", args={"command": "ls"})),
        Message.request(ToolReturnPart(tool_call_id=call_id, tool_name="bash" if named else None, content="a.txt")),
        Message.response(CanonicalText(content=f"answer {index}")),
    ]


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many messages each direction converted."""
    counts = {"to_pydantic_ai": 0, "to_canonical": 0}

    def counting_to_pydantic_ai(history: Sequence[Message], *, start: int = 0) -> list[ModelMessage]:
        counts["to_pydantic_ai"] += len(history) - start
        return to_pydantic_ai(history, start=start)

    def counting_to_canonical(messages: Sequence[ModelMessage]) -> list[Message]:
        counts["to_canonical"] += len(messages)
        return to_canonical(messages)

    monkeypatch.setattr(session_conversion, "to_pydantic_ai", counting_to_pydantic_ai)
    monkeypatch.setattr(session_conversion, "to_canonical", counting_to_canonical)
    return counts


def test_a_turn_converts_only_the_messages_it_adds(counted: dict[str, int]) -> None:
    conversion = SessionConversion()
    history = [message for index in range(3) for message in step(index)]
    native = conversion.to_pydantic_ai(history)
    reply = ModelResponse(parts=[TextPart("done")])
    session = conversion.to_canonical([*native, reply])
    assert counted == {"to_pydantic_ai": 12, "to_canonical": 13}  # the first attempt converts everything once

    counted.update(to_pydantic_ai=0, to_canonical=0)
    next_history = [*session, *step(3, named=False)]
    native = conversion.to_pydantic_ai(next_history)
    later = conversion.to_canonical([*native, reply])
    assert counted == {"to_pydantic_ai": 5, "to_canonical": 6}  # the reply and the new step, both ways
    assert later == to_canonical([*to_pydantic_ai(next_history), reply])
    assert later[-3].parts[0] == ToolReturnPart(tool_call_id="call_3", tool_name="bash", content="a.txt")


def test_a_changed_message_is_converted_again_from_where_it_changed(counted: dict[str, int]) -> None:
    conversion = SessionConversion()
    history = [message for index in range(3) for message in step(index)]
    conversion.to_canonical(conversion.to_pydantic_ai(history))
    counted.update(to_pydantic_ai=0, to_canonical=0)
    pruned_return = ToolReturnPart(tool_call_id="call_1", tool_name="bash", content="(pruned)")
    pruned = [*history[:5], Message.request(pruned_return), *history[6:]]
    native = conversion.to_pydantic_ai(pruned)
    assert counted["to_pydantic_ai"] == 7
    assert to_canonical(native) == to_canonical(to_pydantic_ai(pruned))


def test_messages_the_run_did_not_hand_back_unchanged_are_converted(counted: dict[str, int]) -> None:
    conversion = SessionConversion()
    history = step(0)
    native = conversion.to_pydantic_ai(history)
    copies = [ModelResponse(parts=[TextPart("rewritten")]) if m.kind == "response" else m for m in native]
    assert conversion.to_canonical(copies) == to_canonical(copies)


def test_a_history_whose_round_trip_changes_it_still_converts_exactly(counted: dict[str, int]) -> None:
    conversion = SessionConversion()
    history = [message for index in range(2) for message in step(index, named=False)]
    session = conversion.to_canonical(conversion.to_pydantic_ai(history))
    assert session == to_canonical(to_pydantic_ai(history))
    assert session[2].parts[0] == ToolReturnPart(tool_call_id="call_0", tool_name="bash", content="a.txt")
    counted.update(to_pydantic_ai=0, to_canonical=0)
    native = conversion.to_pydantic_ai([*session, *step(2)])
    assert to_canonical(native) == to_canonical(to_pydantic_ai([*session, *step(2)]))


def test_an_added_tool_return_takes_its_name_from_a_call_converted_before(counted: dict[str, int]) -> None:
    conversion = SessionConversion()
    prompt, call, unnamed_return, text = step(0, named=False)
    session = conversion.to_canonical(conversion.to_pydantic_ai([prompt, call]))
    counted.update(to_pydantic_ai=0, to_canonical=0)
    native = conversion.to_pydantic_ai([*session, unnamed_return, text])
    assert counted["to_pydantic_ai"] == 2
    assert to_canonical(native)[2].parts[0] == ToolReturnPart(tool_call_id="call_0", tool_name="bash", content="a.txt")
