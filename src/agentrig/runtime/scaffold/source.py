"""What `agentrig scaffold` reads: any history or session agentrig reads, as canonical messages plus what the
canonical form leaves out but a scenario can use (per-response usage, the instructions, tool schemas).

The messages always come from the existing readers: `sessions.session_from_json` for pydantic-ai dumps of
every version, legacy dicts, canonical documents, tinyagent messages and agentrig or tunacode session files,
and `record_replay.replay_model` for recordings (`--record DIR`). The extras are looked up in the same parsed
JSON, entry by entry beside the messages the readers decoded, never by a parser of their own:

- usage: the `usage` object of each pydantic-ai response (`kind: response`) or tinyagent assistant message
  (`role: assistant`), or of each recorded exchange; used only when there is one such entry per response;
- instructions: the first request's `instructions` (pydantic-ai), or the recording's; else the system
  prompt parts of the first request;
- tool schemas: a recording's `tools` (what the model was offered);
- the instructions each response answered (a pydantic-ai request's `instructions`, a recorded exchange's),
  which a scenario with the user's agent checks, so a changed prompt fails the replay.

Secrets are redacted here, once, before anything is derived: the scenario, its golden file and the report
all see the same redacted values (`redaction.redact_json`), so the golden still matches the scenario's run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from agentrig.errors import HistoryFormatError
from agentrig.input_files import HISTORY_FILE_LIMIT, InputFileError, read_input_file
from agentrig.runtime.history.canonical import Message, SystemPromptPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.field_inventory import describe_unknown, unknown_fields
from agentrig.runtime.history.redaction import redact, redact_json
from agentrig.runtime.history.sessions import session_from_json, with_referenced_history
from agentrig.runtime.history.tinyagent_sessions import usage_from_tinyagent
from agentrig.runtime.history.tool_kinds import OUTPUT_TOOL_KIND, with_output_tool_kind
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.wire import history_from_json, history_to_json
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.runfolder.jsonio import JSON_INPUT

__all__ = ["RECORDING_FORMAT", "Source", "read_source"]

RECORDING_FORMAT = "agentrig.recording/1"
"""The format tag of `--record` files (`models/record_replay.py`); matched here without importing pydantic-ai."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """A conversation to replay, as read from its file (secrets already redacted)."""

    path: Path
    """The file it was read from."""
    sha256: str
    """The hex SHA-256 of the file's bytes: the scenario's back-link to exactly this file."""
    messages: tuple[Message, ...]
    """The canonical history."""
    response_usage: tuple[Usage | None, ...]
    """The usage recorded for each response message, in order; None where the source recorded none."""
    instructions: str | None = None
    """The agent's instructions (or system prompt) as the source recorded them."""
    tool_schemas: Mapping[str, Mapping[str, Any]] = field(default_factory=dict[str, Mapping[str, Any]])
    """JSON Schemas of the tools the model was offered, by name, when the source recorded them."""
    response_instructions: tuple[str | None, ...] = ()
    """For each response, the instructions of the request it answered (`""`: none); None where the source did
    not record them (agentrig session files, canonical histories)."""
    records_system_prompt: bool = False
    """The source keeps the agent's system prompt parts (a pydantic-ai dump, a recording): their absence means the
    agent had none."""
    unknown_fields: tuple[str, ...] = ()
    """One line for each field of the file the canonical form does not know (`field_inventory.unknown_fields`): what
    the scenario cannot replay because agentrig does not carry it."""


def read_source(path: Path) -> Source:
    """Read `path` with agentrig's readers; a file no reader accepts raises `HistoryFormatError` naming it."""
    try:
        raw_bytes = read_input_file(path, limit=HISTORY_FILE_LIMIT, what=JSON_INPUT)
    except InputFileError as error:
        raise HistoryFormatError(error.reason, path=path) from None
    except OSError as error:
        raise HistoryFormatError(f"cannot read the file ({error.strerror or error})", path=path) from None
    digest = hashlib.sha256(raw_bytes).hexdigest()
    data = jsonio.loads(raw_bytes, source=path)
    if isinstance(data, dict) and cast(dict[str, Any], data).get("format") == RECORDING_FORMAT:
        return _from_recording(path, digest)
    # A run's session.json names its history.json: what follows reads the raw messages (their usage) as well.
    data = with_referenced_history(data, path)
    session = session_from_json(data, source=path)
    messages = _output_kinds_marked(_redacted(session.messages))
    raw_messages = _raw_messages(data)
    responses = sum(1 for m in messages if m.kind == "response")
    usages = _raw_usages(raw_messages, responses, path)
    instructions = _raw_instructions(raw_messages) or _system_prompt(messages)
    per_response = _raw_response_instructions(raw_messages, responses)
    return Source(
        path=path,
        sha256=digest,
        messages=messages,
        response_usage=usages,
        instructions=redact(instructions) if instructions else None,
        response_instructions=per_response,
        records_system_prompt=any(_is_pydantic_ai_request(item) for item in raw_messages),
        unknown_fields=tuple(describe_unknown(field) for field in unknown_fields(data)),
    )


def _redacted(messages: Sequence[Message]) -> tuple[Message, ...]:
    """The messages with every secret redacted (unchanged, and not copied, when none can hold one)."""
    document = history_to_json(messages)
    redacted = redact_json(document)
    if redacted is document:
        return tuple(messages)
    return tuple(history_from_json(redacted))


OUTPUT_TOOL_RETURNS = ("Final result processed.", "Output tool not used - a final result was already processed.")
"""What pydantic-ai answers an output tool's calls with (every release): the mark of an output tool in a history
that does not mark its kind."""


def _output_kinds_marked(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The messages with the output tools' calls marked `tool_kind: output`, as 2.78 and agentrig's histories mark
    them: in a dump of an earlier release, a tool pydantic-ai answered as an output tool is one, whatever its name
    (`ToolOutput(..., name='answer')`), and so is every other call of that name."""
    names = {
        part.tool_name
        for message in messages
        for part in message.parts
        if isinstance(part, ToolReturnPart)
        and part.tool_kind is None
        and part.tool_name is not None
        and part.content in OUTPUT_TOOL_RETURNS
    }
    marked = {
        part.tool_name
        for message in messages
        for part in message.parts
        if isinstance(part, ToolCallPart) and part.tool_kind == OUTPUT_TOOL_KIND
    }
    if not names - marked:
        return messages
    return tuple(with_output_tool_kind(messages, names - marked))


def _raw_messages(data: object) -> list[Any]:
    if isinstance(data, list):
        return cast(list[Any], data)
    if isinstance(data, dict):
        inner = cast(dict[str, Any], data).get("messages")
        if isinstance(inner, list):
            return cast(list[Any], inner)
    return []


def _is_raw_response(item: object) -> bool:
    if not isinstance(item, dict):
        return False
    entry = cast(dict[str, Any], item)
    return entry.get("kind") == "response" or entry.get("role") == "assistant"


def _usage_of(entry: Mapping[str, Any], where: str) -> Usage | None:
    """The usage of one response (one request to the model), as its entry recorded it."""
    usage = entry.get("usage")
    if not isinstance(usage, dict):
        return None
    values = cast(dict[str, Any], usage)
    if "input_tokens" in values or "output_tokens" in values or "request_tokens" in values:
        return replace(Usage.from_json(values, where=where), requests=1)
    if "input" in values or "output" in values:  # tinyagent's names
        return usage_from_tinyagent(values, requests=1, where=where)
    return None


def _raw_usages(raw_messages: Sequence[Any], responses: int, path: Path) -> tuple[Usage | None, ...]:
    """One usage per canonical response, from the raw entries; all None unless they line up one to one."""
    entries = [(index, item) for index, item in enumerate(raw_messages) if _is_raw_response(item)]
    if len(entries) != responses:
        return (None,) * responses
    usages: list[Usage | None] = []
    for index, entry in entries:
        try:
            usages.append(_usage_of(entry, f"messages[{index}].usage"))
        except HistoryFormatError as error:
            raise HistoryFormatError(error.reason, path=path, field=error.field) from None
    return tuple(usages)


def _raw_instructions(raw_messages: Sequence[Any]) -> str | None:
    for item in raw_messages:
        if isinstance(item, dict):
            instructions = cast(dict[str, Any], item).get("instructions")
            if isinstance(instructions, str) and instructions:
                return instructions
    return None


def _is_pydantic_ai_request(item: object) -> bool:
    """A request of a pydantic-ai dump: it records `instructions` (null when the agent had none)."""
    return isinstance(item, dict) and cast(dict[str, Any], item).get("kind") == "request" and "instructions" in item


def _raw_response_instructions(raw_messages: Sequence[Any], responses: int) -> tuple[str | None, ...]:
    """For each response, the instructions of the request before it, when the raw entries record them and line up
    one to one with the canonical responses (secrets redacted); all None otherwise."""
    current: str | None = None
    found: list[str | None] = []
    for item in raw_messages:
        if _is_pydantic_ai_request(item):
            value = cast(dict[str, Any], item)["instructions"]
            current = redact(value) if isinstance(value, str) else ""
        elif _is_raw_response(item):
            found.append(current)
    if len(found) != responses:
        return (None,) * responses
    return tuple(found)


def _system_prompt(messages: Sequence[Message]) -> str | None:
    """The system prompt parts of the first request, joined as pydantic-ai joins them for a provider."""
    if not messages:
        return None
    prompts = [p.content for p in messages[0].parts if isinstance(p, SystemPromptPart)]
    return "\n\n".join(prompts) or None


def _from_recording(path: Path, digest: str) -> Source:
    """A recording (`--record DIR`): the last request's messages and its answer are the whole conversation."""
    from agentrig.runtime.models.record_replay import replay_model  # the recording's own reader

    exchanges = replay_model(path).exchanges
    if not exchanges:
        raise HistoryFormatError("the recording holds no exchange", path=path, field="exchanges")
    last = exchanges[-1].request
    recorded = last.get("messages")
    if not isinstance(recorded, list):
        where = f"exchanges[{len(exchanges) - 1}].request.messages"
        raise HistoryFormatError("expected a list", path=path, field=where)
    answer = exchanges[-1].response  # None: the recording ends with a provider error (recorded since issue 28)
    messages = [*history_from_json(recorded, source=path), *([answer] if answer is not None else [])]
    responses = sum(1 for m in messages if m.kind == "response")
    usages: tuple[Usage | None, ...] = (
        tuple(replace(e.usage, requests=1) for e in exchanges) if responses == len(exchanges) else (None,) * responses
    )
    tools: dict[str, Mapping[str, Any]] = {}
    for exchange in exchanges:
        for tool in cast(list[Any], exchange.request.get("tools") or []):
            if isinstance(tool, dict) and isinstance(cast(dict[str, Any], tool).get("name"), str):
                entry = cast(dict[str, Any], tool)
                tools.setdefault(entry["name"], cast(Mapping[str, Any], redact_json(entry.get("parameters") or {})))
    instructions = next(
        (i for e in exchanges if isinstance(i := e.request.get("instructions"), str) and i), None
    ) or _system_prompt(messages)
    per_response = tuple(redact(i) if isinstance(i := e.request.get("instructions"), str) else "" for e in exchanges)
    return Source(
        path=path,
        sha256=digest,
        messages=_redacted(messages),
        response_usage=usages,
        instructions=redact(instructions) if instructions else None,
        tool_schemas=tools,
        response_instructions=per_response if responses == len(exchanges) else (None,) * responses,
        records_system_prompt=True,
    )
