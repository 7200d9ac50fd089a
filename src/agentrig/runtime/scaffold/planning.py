"""The walk over a source's messages that cuts them into turns (`turns.py`) and takes each request's results
(`turn_results.py`); `plan_turns` is the planner's one entry."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentrig.runtime.history.canonical import (
    Message,
    OpaquePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolReturnPart,
    UserContentPart,
)
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.scaffold.turn_results import close_paused_end, take_results
from agentrig.runtime.scaffold.turns import (
    Answer,
    HostTools,
    ScriptTurn,
    Walk,
    close_turn,
    is_output_tool_call,
    take_response,
)

__all__ = ["plan_turns"]


def plan_turns(
    messages: Sequence[Message],
    usages: Sequence[Usage | None],
    *,
    path: Path,
    own_agent: bool,
    host_tools: HostTools | None = None,
) -> list[ScriptTurn]:
    """The turns that replay `messages`; `usages` holds one entry per response. Raises `Unreplayable`."""
    walk = Walk(path=path, own_agent=own_agent, host_tools=host_tools)
    response_number = 0
    for index, message in enumerate(messages):
        if message.state is not None:
            raise walk.refuse(index, f"the message is {message.state!r}; a scripted run completes its messages")
        if message.kind == "response":
            usage = usages[response_number] if response_number < len(usages) else None
            response_number += 1
            take_response(walk, index, message, usage)
            continue
        texts, results = _request_parts(walk, index, message)
        if results:
            take_results(walk, index, message, results, user_follows=bool(texts))
        if texts:
            _user_message(walk, index, texts[0], after_results=bool(results))
    close_paused_end(walk, len(messages))
    close_turn(walk, len(messages))
    if not walk.turns:
        raise walk.refuse(0, "the history holds no user message: nothing to replay")
    return walk.turns


def _request_parts(walk: Walk, index: int, message: Message) -> tuple[list[str], list[Answer]]:
    texts: list[str] = []
    results: list[Answer] = []
    for number, part in enumerate(message.parts):
        if isinstance(part, SystemPromptPart):
            continue  # the agent's own: the scenario's system_prompt, never part of a stored history
        if isinstance(part, OpaquePart | UserContentPart):
            raise walk.refuse(
                index,
                f"part {number} is a {part.part_kind!r} part (an image, a file or another non-text part); a"
                " scenario's user message is text",
            )
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif isinstance(part, ToolReturnPart | RetryPromptPart):
            results.append(part)
    if len(texts) > 1:
        raise walk.refuse(index, f"the request holds {len(texts)} user texts; a scenario turn has one")
    return texts, results


def _user_message(walk: Walk, index: int, text: str, *, after_results: bool) -> None:
    if after_results and not _ended_by_output_tool(walk):
        raise walk.refuse(
            index,
            "the user's message shares a request with tool results of a turn that did not end (a run resumed"
            " after an interruption or a failed tool); a scenario turn starts with the user's message alone",
        )
    close_turn(walk, index)
    walk.turns.append(ScriptTurn(user=text, message_index=index))
    walk.streaks = {}
    walk.previous = "request"


def _ended_by_output_tool(walk: Walk) -> bool:
    """The current turn's last response called an output tool and every call is answered: the run ended there,
    and agentrig stores the next user message in the same request as those results."""
    last = walk.turns[-1].last_response if walk.turns else None
    return last is not None and not walk.pending and any(is_output_tool_call(call) for call in last.tool_calls)
