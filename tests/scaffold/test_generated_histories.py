"""Property: any conversation of the replayable shape, in any file form agentrig reads, is scaffolded into a
scenario that agentrig's runner replays to exactly the source's canonical history (the golden check passes).

The conversations: one to three turns; each a user message, then model steps of an optional thought, an optional
text and one to three tool calls (ids unique, JSON-object arguments), each call answered by a result (any JSON
value) or a retry message, then a final answer of an optional thought and a text. Written as a canonical
history, a pydantic-ai dump of the installed version (with per-response usage), an agentrig session file or
tinyagent messages; scripted whole or from the last one or two turns on (`--last-turns`).
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrig.runtime.history.canonical import (
    Message,
    Part,
    RetryPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
)
from agentrig.runtime.history.sessions import new_session, save_session
from agentrig.runtime.history.tinyagent_format import messages_to_tinyagent
from agentrig.runtime.history.wire import history_to_json
from agentrig.runtime.models.conversion import dump_pydantic_ai_json
from agentrig.runtime.runfolder import jsonio
from tests.runtime.history_strategies import json_objects, json_values, texts
from tests.scaffold.replay import failures, run_scenario, scaffold_to

_TOOLS = ("bash", "read_file", "search")


# Words with any characters around them: a prompt or answer is never blank (a blank answer is the empty-response
# case the orchestrator intervenes on, which a real history never shows as a final answer).
def _around(head: str, word: str, tail: str) -> str:
    return f"{head}{word}{tail}"


_words = st.builds(_around, texts, st.sampled_from(["go", "ok", "yes"]), texts)


@st.composite
def _step(draw: st.DrawFn, ids: itertools.count[int]) -> tuple[Message, Message]:
    """A response with tool calls and the request answering them."""
    parts: list[Part] = []
    if draw(st.booleans()):
        parts.append(ThoughtPart(content=draw(_words), signature=draw(st.none() | _words)))
    if draw(st.booleans()):
        parts.append(TextPart(content=draw(texts)))
    answers: list[Part] = []
    for _ in range(draw(st.integers(1, 3))):
        call_id = f"call_{next(ids)}"
        name = draw(st.sampled_from(_TOOLS))
        parts.append(ToolCallPart(tool_call_id=call_id, tool_name=name, args=draw(json_objects)))
        if draw(st.booleans()):
            answers.append(ToolReturnPart(tool_call_id=call_id, tool_name=name, content=draw(json_values)))
        else:
            answers.append(RetryPromptPart(tool_call_id=call_id, tool_name=name, content=draw(_words)))
    return Message.response(*parts), Message.request(*answers)


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    ids = itertools.count(1)
    messages: list[Message] = []
    for _ in range(draw(st.integers(1, 3))):
        messages.append(Message.request(TextPart(content=draw(_words))))
        for _ in range(draw(st.integers(0, 2))):
            messages.extend(draw(_step(ids)))
        final: list[Part] = [ThoughtPart(content=draw(_words))] if draw(st.booleans()) else []
        messages.append(Message.response(*final, TextPart(content=draw(_words))))
    return messages


def _write(directory: Path, form: str, messages: list[Message], usages: list[tuple[int, int]]) -> Path:
    path = directory / f"source-{form}.json"
    if form == "canonical":
        jsonio.write_atomic(path, jsonio.dumps(history_to_json(messages)))
    elif form == "session":
        save_session(new_session(working_directory="/tmp", messages=messages), path)
    elif form == "tinyagent":
        jsonio.write_atomic(path, jsonio.dumps(messages_to_tinyagent(messages)))
    else:
        dump: list[dict[str, Any]] = jsonio.loads(dump_pydantic_ai_json(messages))
        responses = iter(usages)
        for message in dump:
            if message["kind"] == "response":
                input_tokens, output_tokens = next(responses)
                message["usage"] = {"input_tokens": input_tokens, "output_tokens": output_tokens}
        jsonio.write_atomic(path, jsonio.dumps(dump))
    return path


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=conversations(),
    form=st.sampled_from(["canonical", "pydantic-ai", "session", "tinyagent"]),
    usage=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 1_000)), min_size=20, max_size=20),
    last_turns=st.none() | st.integers(1, 2),
)
def test_a_generated_conversation_replays_exactly(
    messages: list[Message], form: str, usage: list[Any], last_turns: int | None
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        source = _write(Path(directory), form, messages, usage)
        written = scaffold_to(source, Path(directory) / "suite", last_turns=last_turns)
        result = run_scenario(written.scenario_path)
        assert result.status == "passed", (form, failures(result))
