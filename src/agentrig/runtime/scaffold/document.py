"""The scenario document: turns, tools and expectations as a mapping, its golden history, and its YAML text.

The expectations are what the source shows: per turn the tool-call sequence (names, ids and, for JSON-object
arguments, the arguments exactly), the output (`equals` for text, `json_equals` for an output tool's
arguments) and the usage when every step's was recorded; for the scenario the usage totals, the history
invariants the source keeps (`all` when it keeps every one) and the golden canonical history.

The golden history is the source's canonical history after the normalizations a scripted run implies
(docs/scaffold.md): system prompts and run ids dropped (`sanitize_history_for_resume`, as every stored
history), what agentrig's loop adds to a turn that went wrong where the source (a pydantic-ai dump) does not hold
it (`GoldenEdits`), and tool-result contents masked or dropped when asked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal

import yaml

from agentrig.runtime.history.canonical import Message, TextPart, ToolCallPart, ToolReturnPart, UserPrompt
from agentrig.runtime.history.cleanup import (
    INTERRUPTED_TOOL_RESULT,
    answered_ids,
    answered_tool_call_id,
    merge_consecutive_requests,
    sanitize_history_for_resume,
    with_pause_marks,
)
from agentrig.runtime.history.invariants import check_invariants
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.history.tool_kinds import OUTPUT_TOOL_KIND, with_output_tool_kind
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.violations import INVARIANT_NAMES
from agentrig.runtime.scaffold.source import Source
from agentrig.runtime.scaffold.turns import INTERRUPTED_MARKER, GoldenEdits, ScriptTurn, is_output_tool_call

__all__ = [
    "MASKED",
    "ToolResults",
    "description",
    "dump_yaml",
    "edited_source",
    "golden_history",
    "kept_invariants",
    "normalized_part",
    "turn_mapping",
    "usage_expectation",
]

ToolResults = Literal["keep", "mask", "drop"]

MASKED = "[MASKED]"
"""What a masked tool result's content becomes (`--tool-results mask`)."""


def golden_history(messages: Sequence[Message], tool_results: ToolResults, *, paused: bool = False) -> list[Message]:
    """The canonical history a faithful replay of `messages` ends with: sanitized as every stored history, with
    consecutive requests merged as agentrig's loop merges them before the next turn (a pydantic-ai dump keeps the
    results that ended a turn and the next user message apart; agentrig's history holds them in one request)."""
    result: list[Message] = []
    for message in messages:
        parts = tuple(normalized_part(part, tool_results) for part in message.parts)
        result.append(replace(message, parts=parts))
    # The output-tool mark a replay's history carries on every release (2.78 writes it; agentrig on earlier ones).
    result = with_output_tool_kind(result, _output_tools(messages))
    if paused:  # the replay ends paused: its history carries the pause's mark on every release (2.38's dumps lack it)
        result = with_pause_marks(result)
    # As a golden file holds it: without the ids drawn per run (history/per_run.py).
    return without_per_run_values(merge_consecutive_requests(sanitize_history_for_resume(result)))


def edited_source(messages: Sequence[Message], edits: GoldenEdits) -> list[list[Message]]:
    """Per source message, the messages the replay's history holds for it: the message itself, or what agentrig's
    loop makes of a turn that went wrong where the source (a pydantic-ai dump) holds only pydantic-ai's messages:
    calls left without a result closed after their response, a cancelled request's open calls closed in it and
    `[INTERRUPTED]` after it, a run out of output retries's open output calls closed, a user's message that got no
    answer dropped."""
    # Marked before the edits, as the engine marks a run's messages before the loop closes its calls: a call the loop
    # closes gets a return without the output-tool mark on every release (`cleanup.close_unanswered_calls`).
    messages = with_output_tool_kind(messages, _output_tools(messages))
    answered = {call_id for message in messages if message.kind == "request" for call_id in answered_ids(message)}
    result: list[list[Message]] = []
    last_calls: Sequence[ToolCallPart] = ()
    for index, message in enumerate(messages):
        if message.kind == "response":
            last_calls = message.tool_calls
        if index in edits.dropped:
            kept = [part for part in message.parts if answered_tool_call_id(part) is not None]
            result.append([message.with_parts(kept)] if kept else [])
        elif index in edits.closed:
            failed_id, failure = edits.closed[index]
            unanswered = [call for call in message.tool_calls if call.tool_call_id not in answered]
            closing = [_closed(call, failed_id, failure) for call in unanswered]
            result.append([message, Message.request(*closing)])
        elif index in edits.exhausted:  # output retries ran out: the open output calls closed, the run ended
            closing = [_closed(call, None, "") for call in last_calls if call.tool_call_id not in answered]
            kept = [message.with_parts([*message.parts, *closing])] if message.kind == "request" else [message]
            result.append(kept if message.kind == "request" else [*kept, Message.request(*closing)])
        elif index in edits.interrupted:
            closing = [_closed(call, None, "") for call in last_calls if call.tool_call_id not in answered]
            marker = Message.response(TextPart(content=INTERRUPTED_MARKER))
            result.append([message.with_parts([*message.parts, *closing]), marker])
        else:
            result.append([message])
    return result


def _output_tools(messages: Sequence[Message]) -> set[str]:
    """The names of the output tools `messages` call: marked so, or by pydantic-ai's default name."""
    return {
        call.tool_name
        for message in messages
        for call in message.tool_calls
        if call.tool_kind == OUTPUT_TOOL_KIND or is_output_tool_call(call)
    }


def _closed(call: ToolCallPart, failed_id: str | None, failure: str) -> ToolReturnPart:
    """The result agentrig's loop closes an unanswered call with (`cleanup.close_unanswered_calls`)."""
    failed = call.tool_call_id == failed_id
    return ToolReturnPart(
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        content=failure if failed else INTERRUPTED_TOOL_RESULT,
        outcome="failed" if failed else "interrupted",
    )


def normalized_part(part: Any, tool_results: ToolResults) -> Any:
    """A part as the replay leaves it: a tool result masked or dropped when asked."""
    if isinstance(part, ToolReturnPart) and tool_results != "keep":
        return dataclasses.replace(part, content=MASKED if tool_results == "mask" else None)
    return part


OutputExpecter = Callable[[ToolCallPart | None, str | None], "dict[str, Any] | None"]
"""`(output tool call, or None for a text answer; the text)` -> the turn's output expectation (the user's agent's
prediction, `AgentFacts.output_expectation`)."""


UserWriter = Callable[[UserPrompt], Any]
"""The user's message as a turn's `user` holds it (attachments written to files beside the scenario)."""


def turn_mapping(
    turn: ScriptTurn, *, expect_output: OutputExpecter | None, user: UserWriter, with_usage: bool = True
) -> dict[str, Any]:
    """One scenario turn: the user's message (or the host's answers), the script, and what must hold after it.
    `expect_output` None: a YAML agent, whose output is the final text."""
    expect: dict[str, Any] = {}
    output = _output_expectation(turn, expect_output) if turn.ending is None else None
    if output is not None:
        expect["output"] = output
    if turn.calls:
        expect["tool_calls"] = {"sequence": [_matcher(call) for call in turn.calls]}
    usage = turn.usage
    if usage is not None and with_usage and turn.ending is None:
        expect["usage"] = usage_expectation(usage)
    if turn.ending is not None:
        expect.update(turn.ending)
    mapping: dict[str, Any] = {}
    if turn.user is not None:
        mapping["user"] = user(turn.user)
    if turn.deferred_results is not None:
        mapping["deferred_results"] = turn.deferred_results
    if turn.approvals is not None:
        mapping["approvals"] = turn.approvals
    if turn.steer:
        mapping["steer"] = turn.steer
    mapping["model"] = turn.steps
    if expect:
        mapping["expect"] = expect
    return mapping


def _matcher(call: ToolCallPart) -> dict[str, Any]:
    matcher: dict[str, Any] = {"name": call.tool_name, "id": call.tool_call_id}
    if isinstance(call.args, dict):  # a raw string (malformed JSON) cannot be matched as arguments
        matcher["args"] = call.args
        matcher["args_match"] = "exact"
    return matcher


def _output_expectation(turn: ScriptTurn, expect_output: OutputExpecter | None) -> dict[str, Any] | None:
    last = turn.last_response
    if last is None or turn.paused:  # a paused turn's output is the calls awaiting the host: the sequence says it
        return None
    if not last.tool_calls:
        if not any(p.part_kind == "text" for p in last.parts):
            return None
        return {"equals": last.text} if expect_output is None else expect_output(None, last.text)
    outputs = [call for call in last.tool_calls if is_output_tool_call(call)]
    if expect_output is not None and len(outputs) == 1:
        return expect_output(outputs[0], None)
    return None


def usage_expectation(usage: Usage) -> dict[str, int]:
    """Exact usage: requests and tokens (cache tokens when any were recorded)."""
    values = {"requests": usage.requests, "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    if usage.cache_read_tokens:
        values["cache_read_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        values["cache_write_tokens"] = usage.cache_write_tokens
    return values


def kept_invariants(history: Sequence[Message]) -> str | list[str]:
    """`all` when the history keeps every invariant, else the names of those it keeps."""
    broken = {violation.code for violation in check_invariants(history)}
    if not broken:
        return "all"
    return [name for name in INVARIANT_NAMES if name not in broken]


def description(source: Source) -> str:
    """The back-link to the source: its file name, content hash and message count."""
    return (
        f"Replays {source.path.name} (sha256:{source.sha256}, {len(source.messages)} messages), scaffolded by"
        " agentrig scaffold."
    )


# libyaml's emitter when PyYAML was built with it (the wheels are): ten times faster on a long session.
_SafeDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_SafeDumper):  # pyright: ignore[reportGeneralTypeIssues, reportUntypedBaseClass]
    """Block style; multi-line strings as literal blocks when YAML allows it (PyYAML falls back to a quoted
    scalar for text a block cannot hold exactly: trailing spaces, control characters). No anchors: a value
    written twice (a call's arguments in the script and in its expectation) is written out twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(document: dict[str, Any], header: str) -> str:
    """The scenario file's text: a comment header, then the document in block style, keys in the order built."""
    body = yaml.dump(
        document, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096
    )
    comment = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    return comment + body
