"""Session reload: a history stored as canonical JSON (an agentrig session file standing in for the
application's database rows) is reloaded and replayed unchanged, so the next turn starts with exactly what
the model saw before.

Evidence boundary: the comparison is of the canonical form (parts, order, ids, arguments, outcomes, run ids).
Timestamps, per-response usage, model names and request instructions are not stored canonically; the agent
re-sends the current instructions with each new request, so the model loses nothing it would act on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, TextPart, ToolCallPart

from agentrig.runtime.history import canonical
from agentrig.runtime.history.invariants import check_invariants
from agentrig.runtime.history.sessions import load_session, new_session, save_session
from agentrig.runtime.models.conversion import to_canonical, to_pydantic_ai
from tests.compatibility.support import RecordedScript

TURN_ONE = [[ToolCallPart("read", {"name": "notes"}, tool_call_id="read_1")], [TextPart("notes say hi")]]
TURN_TWO = [[TextPart("still hi")]]


def build_agent(scripted: RecordedScript) -> Agent[None, str]:
    """The same agent definition on both sides of the reload (a cold process rebuilds it)."""
    agent = Agent(scripted.model(), instructions="Be terse.")

    @agent.tool_plain
    def read(name: str) -> str:
        return f"contents of {name}"

    return agent


def turn_one() -> tuple[RecordedScript, list[ModelMessage]]:
    scripted = RecordedScript(script=TURN_ONE)
    result = asyncio.run(build_agent(scripted).run("read my notes"))
    return scripted, result.all_messages()


def turn_two(history: list[ModelMessage]) -> RecordedScript:
    scripted = RecordedScript(script=TURN_TWO)
    result = asyncio.run(build_agent(scripted).run("and now?", message_history=history))
    assert result.output == "still hi"
    return scripted


def save_and_reload(messages: list[ModelMessage], path: Path) -> list[ModelMessage]:
    session = new_session(
        working_directory=path.parent, current_model="function:scripted", messages=to_canonical(messages)
    )
    save_session(session, path)
    return to_pydantic_ai(load_session(path).messages, source=path)


def test_later_turns_start_with_what_the_model_saw(tmp_path: Path) -> None:
    first_model, stored = turn_one()
    reloaded = save_and_reload(stored, tmp_path / "session.json")

    # Replayed unchanged: the reloaded history is the stored one, part for part.
    assert to_canonical(reloaded) == to_canonical(stored)
    assert check_invariants(to_canonical(reloaded)) == []

    second_model = turn_two(reloaded)

    # What the model saw before (its last request) plus what it answered is where turn 2 begins.
    seen_before = [*first_model.received_canonical(-1), to_canonical(stored)[-1]]
    (second_request,) = second_model.received
    assert to_canonical(second_request)[:-1] == seen_before
    assert second_model.received_canonical(0)[-1].parts == (canonical.TextPart(content="and now?"),)


def test_reloaded_session_replays_like_the_live_history(tmp_path: Path) -> None:
    # The control: the same turn 2 on the in-memory history gives the model the same input.
    _, stored = turn_one()
    live = turn_two(stored).received_canonical(0)
    reloaded = turn_two(save_and_reload(stored, tmp_path / "session.json")).received_canonical(0)

    assert reloaded[:-1] == live[:-1]
    # The new request differs only by its fresh run id.
    assert reloaded[-1].parts == live[-1].parts


def test_reload_is_idempotent(tmp_path: Path) -> None:
    _, stored = turn_one()
    once = save_and_reload(stored, tmp_path / "once.json")
    twice = save_and_reload(once, tmp_path / "twice.json")

    assert to_canonical(twice) == to_canonical(once)
    assert load_session(tmp_path / "twice.json").messages == load_session(tmp_path / "once.json").messages
