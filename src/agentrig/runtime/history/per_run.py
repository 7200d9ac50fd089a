"""What differs between two runs of the same conversation, and histories without it.

A history file keeps every id pydantic-ai wrote (an application may key on them), but a golden file, a diff and a
recording compare what was said: ids drawn afresh on every run would make two identical runs differ. One list,
used by all of them (docs/canonical-format.md, "Per-run values"):

- a message's `run_id` and `conversation_id` (pydantic-ai draws both per run, 2.54+ for the conversation);
- a capability part's `record_id` (a uuid7 per record) and `capability_id` (the run id of the capability that
  enqueued it), pydantic-ai 2.78+;
- inside a part kind the canonical model keeps verbatim (`OpaquePart`): its `timestamp` and `record_id`.

Timestamps and durations of known parts and messages are not carried at all (docs/canonical-format.md).

Goldens, diffs and recordings also leave out pydantic-ai's bookkeeping marks in a message's reserved metadata
namespace (`metadata["__pydantic_ai__"]`) other than those that change what a resumed run does (`deferred_pause`,
which agentrig's engine writes on every release): they differ between releases for the same conversation (2.68+
records a UI message's id, `ui_message_id`; 2.38 does not), and history.json keeps them all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from agentrig.runtime.history.canonical import KNOWN_PART_KINDS, CapabilityPart, Message, OpaquePart, Part

__all__ = [
    "COMPARED_FRAMEWORK_MARKS",
    "FRAMEWORK_METADATA_KEY",
    "PER_RUN_CAPABILITY_KEYS",
    "PER_RUN_MESSAGE_KEYS",
    "PER_RUN_OPAQUE_KEYS",
    "message_json_without_per_run_values",
    "without_per_run_values",
]

PER_RUN_MESSAGE_KEYS: tuple[str, ...] = ("run_id", "conversation_id")
"""Keys of a message that are drawn per run."""

PER_RUN_CAPABILITY_KEYS: tuple[str, ...] = ("record_id", "capability_id")
"""Keys of a capability part that are drawn per run."""

PER_RUN_OPAQUE_KEYS: tuple[str, ...] = ("timestamp", "record_id")
"""Keys of a verbatim (opaque) part that are per run."""

FRAMEWORK_METADATA_KEY = "__pydantic_ai__"
"""pydantic-ai's reserved namespace in a message's metadata."""

COMPARED_FRAMEWORK_MARKS: frozenset[str] = frozenset({"deferred_pause"})
"""The marks of that namespace that goldens, diffs and recordings compare."""


def _compared_metadata(metadata: dict[str, Any] | None) -> dict[str, Any] | None:
    if metadata is None or FRAMEWORK_METADATA_KEY not in metadata:
        return metadata
    namespace = metadata[FRAMEWORK_METADATA_KEY]
    rest = {key: value for key, value in metadata.items() if key != FRAMEWORK_METADATA_KEY}
    if type(namespace) is dict:
        kept = {key: value for key, value in namespace.items() if key in COMPARED_FRAMEWORK_MARKS}
        if kept:
            rest[FRAMEWORK_METADATA_KEY] = kept
    return rest or None


def _part(part: Part) -> Part:
    if isinstance(part, CapabilityPart):
        if part.record_id is None and "capability_id" not in part.data:
            return part
        data = {key: value for key, value in part.data.items() if key != "capability_id"}
        return replace(part, record_id=None, data=data)
    if isinstance(part, OpaquePart) and any(key in part.data for key in PER_RUN_OPAQUE_KEYS):
        return replace(part, data={key: value for key, value in part.data.items() if key not in PER_RUN_OPAQUE_KEYS})
    return part


def _message(message: Message) -> Message:
    parts = tuple(_part(part) for part in message.parts)
    changed = any(new is not old for new, old in zip(parts, message.parts, strict=True))
    metadata = _compared_metadata(message.metadata)
    if not changed and message.run_id is None and message.conversation_id is None and metadata is message.metadata:
        return message
    return replace(message, parts=parts, run_id=None, conversation_id=None, metadata=metadata)


def without_per_run_values(history: Iterable[Message]) -> list[Message]:
    """The history as goldens, diffs and recordings compare it: without its per-run values and the framework marks
    they do not compare (the module docstring's lists); other values untouched."""
    return [_message(message) for message in history]


def message_json_without_per_run_values(message: dict[str, Any]) -> dict[str, Any]:
    """A canonical message's JSON object without its per-run values (for JSON read back from a file)."""
    result = {key: value for key, value in message.items() if key not in PER_RUN_MESSAGE_KEYS}
    if type(message.get("metadata")) is dict:
        metadata = _compared_metadata(message["metadata"])
        if metadata is None:
            del result["metadata"]
        else:
            result["metadata"] = metadata
    parts = message.get("parts")
    if type(parts) is list:
        result["parts"] = [_part_json(part) for part in parts]
    return result


def _part_json(part: Any) -> Any:
    if type(part) is not dict:
        return part
    kind = part.get("part_kind")
    if kind == "capability":
        return {key: value for key, value in part.items() if key not in PER_RUN_CAPABILITY_KEYS}
    if kind not in KNOWN_PART_KINDS:
        return {key: value for key, value in part.items() if key not in PER_RUN_OPAQUE_KEYS}
    return part
