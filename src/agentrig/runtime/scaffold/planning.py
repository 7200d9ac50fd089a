"""The walk over a source's messages that cuts them into turns (`turns.py`) and takes each request's results
(`turn_results.py`); `plan_turns` is the planner's one entry."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentrig.runtime.history.canonical import (
    CapabilityPart,
    Message,
    OpaqueContent,
    OpaquePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolReturnPart,
    UrlContent,
    UserContentPart,
    UserPrompt,
)
from agentrig.runtime.history.pydantic_ai_dicts import capability_dict
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.scaffold.endings import close_turn, take_marker
from agentrig.runtime.scaffold.turn_results import close_paused_end, take_results
from agentrig.runtime.scaffold.turns import (
    EDIT_HINT,
    Answer,
    GoldenEdits,
    HostTools,
    ScriptTurn,
    Walk,
    interrupted_marker,
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
) -> tuple[list[ScriptTurn], GoldenEdits]:
    """The turns that replay `messages`, and what the golden history adds to the source's turns that went wrong;
    `usages` holds one entry per response. Raises `Unreplayable`."""
    walk = Walk(path=path, own_agent=own_agent, host_tools=host_tools)
    response_number = 0
    for index, message in enumerate(messages):
        if message.kind == "response":
            if message.state is not None:
                raise walk.refuse(
                    index,
                    f"the message is {message.state!r}; a scripted run completes its responses",
                    hint=f"complete or drop the response ({EDIT_HINT})",
                )
            usage = usages[response_number] if response_number < len(usages) else None
            response_number += 1
            partial = interrupted_marker(message)
            if partial is not None and walk.turns and walk.previous == "request":
                take_marker(walk, index, partial)
            else:
                take_response(walk, index, message, usage)
            continue
        if message.state not in (None, "interrupted"):
            raise walk.refuse(
                index,
                f"the message is {message.state!r}; a scripted run completes its messages",
                hint=f"complete or drop the request ({EDIT_HINT})",
            )
        texts, results, capabilities = _request_parts(walk, index, message)
        if message.state == "interrupted":
            if texts or not walk.turns:
                raise walk.refuse(
                    index,
                    "the request is 'interrupted' but holds a user message",
                    hint=f"mark the request complete ({EDIT_HINT})",
                )
            walk.interrupted_at = index
        if results:
            take_results(walk, index, message, results, user_follows=bool(texts))
        elif message.state == "interrupted":
            walk.previous = "request"
        for call_id, capability in capabilities:
            _steer_capability(walk, index, call_id, capability)
        if texts:
            _user_message(walk, index, texts[0], after_results=bool(results))
    close_paused_end(walk, messages[-1] if messages else None)
    close_turn(walk, len(messages), last=True)
    if not walk.turns:
        raise walk.refuse(
            0,
            "the history holds no user message: nothing to replay",
            hint="scaffold a history that holds the user's message (a run folder's session.json or history.json)",
        )
    return walk.turns, walk.edits


def _request_parts(
    walk: Walk, index: int, message: Message
) -> tuple[list[UserPrompt], list[Answer], list[tuple[str, dict[str, Any]]]]:
    texts: list[UserPrompt] = []
    results: list[Answer] = []
    capabilities: list[tuple[str, dict[str, Any]]] = []
    for number, part in enumerate(message.parts):
        if isinstance(part, SystemPromptPart):
            continue  # the agent's own: the scenario's system_prompt, never part of a stored history
        if isinstance(part, CapabilityPart):
            capabilities.append((_enqueuing_call(walk, index, number, results), _steered(part)))
            continue
        if isinstance(part, OpaquePart):
            raise walk.refuse(
                index,
                f"part {number} is a {part.part_kind!r} part, which a scenario's user message cannot hold",
                hint=f"drop the part ({EDIT_HINT})",
            )
        if isinstance(part, UserContentPart):
            _check_user_content(walk, index, number, part)
            texts.append(part.content)
        elif isinstance(part, TextPart):
            texts.append(part.content)
        elif isinstance(part, ToolReturnPart | RetryPromptPart):
            results.append(part)
    if len(texts) > 1:
        raise walk.refuse(
            index,
            f"the request holds {len(texts)} user texts; a scenario turn has one",
            hint=f"join them into one text ({EDIT_HINT})",
        )
    return texts, results, capabilities


def _enqueuing_call(walk: Walk, index: int, number: int, results: list[Answer]) -> str:
    """The call whose tool enqueued a capability part: pydantic-ai 2.78 stores content a tool enqueues in the request
    of that call's result, after it. A part with no result before it was enqueued some other way."""
    answered = [result.tool_call_id for result in results if result.tool_call_id is not None]
    if not answered:
        raise walk.refuse(
            index,
            f"part {number} is a capability part no tool call enqueued (it comes before any tool result); a "
            "scenario steers one from a call",
            hint="drop the part and add it to the scenario as `steer: [{capability: {...}, from_call: CALL_ID}]`"
            f" ({EDIT_HINT})",
        )
    return answered[-1]


def _steered(part: CapabilityPart) -> dict[str, Any]:
    """A capability part as a `steer` entry's `capability`: pydantic-ai's stored form, without the record id a
    replay draws afresh."""
    stored = capability_dict(part)
    return {key: value for key, value in stored.items() if key not in ("part_kind", "record_id")}


def _steer_capability(walk: Walk, index: int, call_id: str, capability: dict[str, Any]) -> None:
    """Give the turn that made the call a steering entry enqueuing the part from it."""
    for turn in reversed(walk.turns):
        if any(call.tool_call_id == call_id for call in turn.calls):
            turn.steer.append({"capability": capability, "from_call": call_id})
            return
    raise walk.refuse(
        index,
        f"a capability part follows the result of call {call_id!r}, which no turn made",
        hint=f"drop the part ({EDIT_HINT})",
    )


def _check_user_content(walk: Walk, index: int, number: int, part: UserContentPart) -> None:
    """Text and attachments a scenario's `user` list can hold: files, and URLs whose media type is known."""
    for item_number, item in enumerate(part.content):
        where = f"part {number}, item {item_number}"
        if isinstance(item, OpaqueContent):
            raise walk.refuse(
                index,
                f"{where} is a {item.kind!r} item (not a file or a URL), which a scenario's user message cannot hold",
                hint=f"drop the item ({EDIT_HINT})",
            )
        if isinstance(item, UrlContent) and item.media_type is None:
            raise walk.refuse(
                index,
                f"{where}: the URL {item.url!r} has no media type, which a scenario must give",
                hint=f"add its `media_type` to the item ({EDIT_HINT})",
            )


def _user_message(walk: Walk, index: int, text: UserPrompt, *, after_results: bool) -> None:
    if after_results and not _ended_by_output_tool(walk) and not _may_end_wrong(walk):
        raise walk.refuse(
            index,
            "the user's message shares a request with tool results of a turn that did not end (a run resumed"
            " after an interruption or a failed tool); a scenario turn starts with the user's message alone",
            hint=f"move the user's message into a request of its own after the results ({EDIT_HINT})",
        )
    close_turn(walk, index)
    walk.turns.append(ScriptTurn(user=text, message_index=index))
    walk.streaks = {}
    walk.previous = "request"


def _may_end_wrong(walk: Walk) -> bool:
    """The turn before stopped after its tools ran (a tool failed, or the next request got an error): agentrig
    stores the next user message in the same request as its results."""
    turn = walk.turns[-1] if walk.turns else None
    return turn is not None and turn.ending is None and not walk.pending and turn.last_response is not None


def _ended_by_output_tool(walk: Walk) -> bool:
    """The current turn's last response called an output tool and every call is answered: the run ended there,
    and agentrig stores the next user message in the same request as those results."""
    last = walk.turns[-1].last_response if walk.turns else None
    return last is not None and not walk.pending and any(is_output_tool_call(call) for call in last.tool_calls)
