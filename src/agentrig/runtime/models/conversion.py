"""pydantic-ai message objects <-> the canonical history, and pydantic-ai JSON dumps for the installed version.

The mapping itself lives at the dict level in `agentrig.runtime.history.wire` (which imports no pydantic-ai):
objects become the dicts pydantic-ai's `ModelMessagesTypeAdapter` would dump, read by `wire.history_from_json`;
the way back asks `wire.to_pydantic_ai_dicts` for the retry shape the installed version validates
(`pydantic_ai_compat.RETRY_SHAPE`). So pydantic-ai decides how its objects look as JSON and agentrig
decides what they mean, in one place.

Round trip guarantee (tests/runtime/test_convert.py, test_agent_histories.py, tests/history/test_field_inventory.py):
pydantic-ai -> canonical -> JSON -> canonical -> pydantic-ai keeps every part, its order and every tool-bound
`tool_call_id`; tool-call arguments keep their meaning (`args_as_dict()` is unchanged). Every field of every message
and part class is either carried or on the one list of what is not, with the reason
(`agentrig.runtime.history.field_inventory`, docs/canonical-format.md): timestamps and durations, per-response usage
and model names, request instructions, a response's provider bookkeeping, and the random id pydantic-ai < 2.60 gave
output retries (it references no call).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.canonical import Message, UserContentPart, UserPrompt
from agentrig.runtime.history.pydantic_ai_dicts import to_pydantic_ai_dicts, user_prompt_dict
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.wire import history_from_json, no_cyclic_gc
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.runfolder import jsonio

__all__ = [
    "dump_pydantic_ai_json",
    "load_pydantic_ai_json",
    "response_usage",
    "to_canonical",
    "to_pydantic_ai",
    "usage_from_run",
    "user_prompt_to_pydantic_ai",
]


def to_canonical(messages: Sequence[ModelMessage]) -> list[Message]:
    """The canonical form of pydantic-ai messages of the installed version.

    Each message becomes the JSON dict `wire.history_from_json` reads, so that reader alone decides what every
    part means. The common parts are read off the objects directly; a message holding anything else
    (multi-modal content, typed tool parts, non-JSON values, part kinds of newer releases) is dumped with
    pydantic-ai's own serializer instead. Both give the same dicts (tests/runtime/test_convert.py checks it);
    the direct read is about 6x faster than `ModelMessagesTypeAdapter.dump_python` (bench/bench_convert.py).
    """
    with no_cyclic_gc():
        return history_from_json([_message_json(message) for message in messages])


class _NeedsPydanticDump(Exception):
    """A value the direct read does not handle; the message is dumped by pydantic-ai instead."""


_JSON_SCALARS: tuple[type, ...] = (str, int, bool, type(None))


def _plain_json(value: Any) -> Any:
    """`value` as JSON-mode pydantic would write it, for plain JSON values only (tuples become lists)."""
    kind = type(value)
    if kind in _JSON_SCALARS:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        raise _NeedsPydanticDump  # pydantic writes inf/nan as null
    if kind is list or kind is tuple:
        return [_plain_json(item) for item in value]
    if kind is dict and all(type(key) is str for key in value):
        return {key: _plain_json(item) for key, item in value.items()}
    raise _NeedsPydanticDump


def _provider_json(part: Any, data: dict[str, Any]) -> dict[str, Any]:
    details = part.provider_details
    data["id"] = part.id
    data["provider_name"] = part.provider_name
    data["provider_details"] = None if details is None else _plain_json(details)
    return data


def _tool_marks_json(part: Any, data: dict[str, Any]) -> dict[str, Any]:
    data["tool_kind"] = part.tool_kind
    data["ui_visibility"] = getattr(part, "ui_visibility", None)  # 2.78+
    return data


def _retry_json(part: Any) -> dict[str, Any] | None:
    retry = getattr(part, "retry", None)  # 2.60+
    return None if retry is None else {"cause": retry.cause}


def _part_json(part: Any) -> dict[str, Any]:
    """The keys of `ModelMessagesTypeAdapter.dump_python(mode='json')` that the canonical reader uses."""
    kind = type(part)
    if kind is TextPart:
        if getattr(part, "citations", None) is not None:  # 2.68+: objects pydantic-ai serializes itself
            raise _NeedsPydanticDump
        return _provider_json(part, {"part_kind": "text", "content": part.content})
    if kind is UserPromptPart and type(part.content) is str:
        return {"part_kind": "user-prompt", "content": part.content}
    if kind is SystemPromptPart:
        return {
            "part_kind": "system-prompt",
            "content": part.content,
            "dynamic_ref": part.dynamic_ref,
            "context_id": getattr(part, "context_id", None),  # 2.68+
            "scope": getattr(part, "scope", None),  # 2.68+
            "metadata": _plain_json(getattr(part, "metadata", None)),  # 2.68+
        }
    if kind is ThinkingPart:
        return _provider_json(part, {"part_kind": "thinking", "content": part.content, "signature": part.signature})
    if kind is ToolCallPart:
        args = part.args if part.args is None or type(part.args) is str else _plain_json(part.args)
        data = {"part_kind": "tool-call", "tool_name": part.tool_name, "tool_call_id": part.tool_call_id, "args": args}
        return _provider_json(part, _tool_marks_json(part, data))
    if kind is ToolReturnPart:
        # Content holding file items is dumped by pydantic-ai, which also writes its `content_file_digests`.
        data = {
            "part_kind": "tool-return",
            "tool_name": part.tool_name,
            "tool_call_id": part.tool_call_id,
            "content": _plain_json(part.content),
            "outcome": part.outcome,
            "metadata": _plain_json(part.metadata),
            "retry": _retry_json(part),
        }
        return _tool_marks_json(part, data)
    if part.part_kind == "retry-prompt":  # every version can hold one (2.60+ only when built in memory)
        return {
            "part_kind": "retry-prompt",
            "content": _plain_json(part.content),
            "tool_name": part.tool_name,
            "tool_call_id": part.tool_call_id,
        }
    if part.part_kind == "retry-feedback":
        return {"part_kind": "retry-feedback", "content": _plain_json(part.content), "retry": _retry_json(part)}
    raise _NeedsPydanticDump


def _message_json(message: ModelMessage) -> dict[str, Any]:
    try:
        if getattr(message, "failed_attempts", None) or getattr(message, "workspace_ref", None) is not None:
            raise _NeedsPydanticDump  # 2.68+ objects pydantic-ai serializes itself
        parts = [_part_json(part) for part in message.parts]
        metadata = _plain_json(message.metadata)
    except _NeedsPydanticDump:
        dumped: dict[str, Any] = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
        return dumped
    # `state` ('interrupted' after a cancellation) tells the next run to close the calls left unanswered.
    return {
        "kind": message.kind,
        "parts": parts,
        "run_id": message.run_id,
        "state": message.state,
        "conversation_id": getattr(message, "conversation_id", None),
        "metadata": metadata,
    }


def to_pydantic_ai(
    history: Sequence[Message], *, source: str | Path | None = None, start: int = 0
) -> list[ModelMessage]:
    """pydantic-ai messages of the installed version for a canonical history (with `start`: for `history[start:]`,
    as they are converted within the whole history).

    Raises HistoryFormatError when the installed version cannot represent a part, e.g. an opaque part
    kind written by a newer pydantic-ai (`source` names the file in the message).
    """
    try:
        data = to_pydantic_ai_dicts(
            history,
            retry_shape=pydantic_ai_compat.RETRY_SHAPE,
            start=start,
            tool_kinds=pydantic_ai_compat.ACCEPTED_TOOL_KINDS,
        )
    except ValueError as error:  # a part in the wrong kind of message, e.g. a tool call in a request
        raise HistoryFormatError(str(error), path=source) from None
    try:
        with no_cyclic_gc():
            return ModelMessagesTypeAdapter.validate_python(data)
    except ValidationError as error:
        raise HistoryFormatError(
            f"pydantic-ai {pydantic_ai_compat.PYDANTIC_AI_VERSION_TEXT} cannot represent this history: "
            + _first_error(error),
            path=source,
        ) from None


def user_prompt_to_pydantic_ai(prompt: UserPrompt | None) -> str | list[Any] | None:
    """The `user_prompt` of `Agent.iter` for a canonical prompt: text, or a list of text and pydantic-ai's
    `BinaryContent` / `ImageUrl` / `DocumentUrl` / ... (through the one mapping `pydantic_ai_dicts` writes)."""
    if prompt is None or isinstance(prompt, str):
        return prompt
    request = {"kind": "request", "parts": [user_prompt_dict(UserContentPart(content=prompt))]}
    (message,) = ModelMessagesTypeAdapter.validate_python([request])
    part: Any = message.parts[0]
    return list(part.content)


def dump_pydantic_ai_json(
    history: Sequence[Message], *, pretty: bool = False, source: str | Path | None = None
) -> bytes:
    """A pydantic-ai JSON dump of a canonical history, loadable with the installed version's
    `ModelMessagesTypeAdapter.validate_json` (`source`: the file the history came from, named in an error)."""
    messages = to_pydantic_ai(history, source=source)
    with no_cyclic_gc():
        return jsonio.dumps(ModelMessagesTypeAdapter.dump_python(messages, mode="json"), pretty=pretty)


def load_pydantic_ai_json(data: bytes | str, *, source: str | Path | None = None) -> list[ModelMessage]:
    """pydantic-ai messages of the installed version from a dump of any supported version (or any history
    form agentrig reads: canonical, legacy dicts, a session file).

    A dump the installed version validates natively is loaded as is, losing nothing (2.60+ reads the
    older retry parts itself). Anything else goes through the canonical form: a 2.60+ dump does not
    validate on 2.38-2.59 (`outcome='retried'` and `retry-feedback` are unknown there).
    """
    raw = jsonio.loads(data, source=source)
    if isinstance(raw, list):
        try:
            return ModelMessagesTypeAdapter.validate_python(raw)
        except ValidationError:
            pass  # another version's dump, or another history form: the canonical reader knows them all
    return to_pydantic_ai(history_from_json(raw, source=source), source=source)


def usage_from_run(result_or_run: Any, *, estimated: bool = False) -> Usage:
    """Normalized usage of an `AgentRunResult`, an `AgentRun` or a `RunCancelled`, on every version.

    pydantic-ai keeps no record of which responses it estimated, so `estimated` is the caller's knowledge
    (the scripted model knows whether each response carried explicit usage).
    """
    return Usage.from_object(pydantic_ai_compat.run_usage(result_or_run), estimated=estimated)


def response_usage(response: ModelResponse, *, estimated: bool = False) -> Usage:
    """Normalized usage of one model response (one request).

    Estimation cannot be detected from the response: `FunctionModel` replaces an all-zero `RequestUsage`
    with its estimate in place (`models/function.py`, every 2.x version), and the estimate looks like
    real counts. The scripted model, which knows whether it supplied usage, passes `estimated`.
    """
    return Usage.from_object(response.usage, estimated=estimated)


def _first_error(error: ValidationError) -> str:
    details = error.errors(include_url=False)
    if not details:
        return str(error).splitlines()[0]
    first = details[0]
    location = ".".join(str(step) for step in first.get("loc", ()))
    more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
    return f"{location}: {first.get('msg', 'invalid')}{more}"
