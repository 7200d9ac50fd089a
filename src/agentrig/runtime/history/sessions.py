"""Session files: the persistence contract's stable keys, atomic writes, and loading from any form.

A session file is one JSON object with, in this order: `version, session_id, project_id,
created_at, last_modified, working_directory, current_model, total_tokens, session_total_usage,
thoughts, messages`, then `compaction` when there is one, then `warnings` when its prompts showed
any, then any keys agentrig does not know (kept from the file it was loaded from). `messages` are
canonical messages (`agentrig.history/1`). A run's scenario folder writes its messages once, in history.json:
its session.json holds `"history": "history.json"` where `messages` would be (`session_to_json(history_file=...)`),
and every reader here reads them from that file beside the session (`with_referenced_history`); `save_session`
always writes a session whole.

`load_session` also accepts a canonical history document, a bare list of messages in any
vocabulary the wire reader knows (pydantic-ai dumps of any 2.x release, legacy dicts, whose
`{"thought": ...}` entries become the session's thoughts, tinyagent messages) and sessions whose
messages are in any of those vocabularies, including tunacode's session files (`tinyagent_sessions`).
A file it cannot read raises `HistoryFormatError` naming the file and what is wrong; it is never
modified.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from agentrig.errors import HistoryFormatError, printable_path
from agentrig.runtime.history.canonical import JsonValue, Message
from agentrig.runtime.history.recordings import is_recording, recording_history
from agentrig.runtime.history.redaction import dumps_redacted
from agentrig.runtime.history.tinyagent_sessions import is_tinyagent_session, normalize_session_json
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.warning_records import WarningRecord, warnings_from_json
from agentrig.runtime.history.wire import (
    HISTORY_FORMAT,
    history_and_thoughts_from_json,
    message_to_json,
    messages_from_json,
)
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.runfolder.write_targets import target_state

__all__ = [
    "SESSION_VERSION",
    "CompactionRecord",
    "Session",
    "load_history_file",
    "load_session",
    "new_session",
    "refuse_to_continue",
    "save_session",
    "session_from_json",
    "session_to_json",
    "with_referenced_history",
]

SESSION_VERSION = 1
"""The session file version this agentrig writes and reads."""

# Version values other writers of this format used for the same layout (the seed application wrote strings).
_ACCEPTED_VERSIONS: frozenset[object] = frozenset({1, "1", "1.0"})

_CONTRACT_KEYS = (
    "version",
    "session_id",
    "project_id",
    "created_at",
    "last_modified",
    "working_directory",
    "current_model",
    "total_tokens",
    "session_total_usage",
    "thoughts",
    "messages",
)
HISTORY_REFERENCE = "history"
"""The key that stands in a run's session.json for `messages`: the name of the history file beside it."""
_KNOWN_KEYS = frozenset((*_CONTRACT_KEYS, "compaction", "warnings", HISTORY_REFERENCE))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionRecord:
    """The latest compaction of a session's history."""

    summary: str
    """The summary that replaced the compacted messages."""
    compacted_message_count: int
    """How many messages the summary replaced."""
    tokens_before: int
    """Estimated history tokens before compaction."""
    tokens_after: int
    """Estimated history tokens after compaction."""
    count: int = 1
    """How many times this session has been compacted."""
    previous_summary: str | None = None
    """The summary of the compaction before this one, if any."""
    created_at: str = field(default_factory=_now)
    """When the compaction happened (ISO 8601, UTC)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Session:
    """One persisted session: the removal contract's keys plus optional compaction and unknown extras."""

    version: int = SESSION_VERSION
    """File format version."""
    session_id: str
    """Unique id of the session (32 hex chars for new sessions)."""
    project_id: str
    """Identifies the project the session belongs to."""
    created_at: str
    """When the session was created (ISO 8601, UTC)."""
    last_modified: str
    """When the session was last saved (ISO 8601, UTC); `save_session` sets it."""
    working_directory: str
    """The directory the session ran in."""
    current_model: str | None = None
    """The model in use, e.g. `openai:gpt-4o` or `function:scripted`."""
    total_tokens: int = 0
    """Tokens of the current history (the contract's `update_token_count()` value)."""
    session_total_usage: Usage = field(default_factory=Usage)
    """Usage summed over every request of the session."""
    thoughts: tuple[str, ...] = ()
    """The model's recorded thoughts, kept apart from the messages."""
    messages: tuple[Message, ...] = ()
    """The canonical history."""
    compaction: CompactionRecord | None = None
    """The latest compaction, when the history was compacted."""
    warnings: tuple[WarningRecord, ...] = ()
    """The warnings `agentrig prompt` showed over the session's prompts, one per distinct warning, counted."""
    extras: Mapping[str, JsonValue] = field(default_factory=dict[str, JsonValue])
    """Keys of the loaded file that agentrig does not know; written back unchanged."""


def _project_id_for(working_directory: str) -> str:
    return hashlib.sha256(working_directory.encode()).hexdigest()[:16]


def new_session(
    *,
    working_directory: str | Path | None = None,
    current_model: str | None = None,
    project_id: str | None = None,
    session_id: str | None = None,
    messages: Iterable[Message] = (),
) -> Session:
    """A fresh session. `project_id` defaults to a hash of the working directory (default: the current one)."""
    directory = str(working_directory if working_directory is not None else Path.cwd())
    now = _now()
    return Session(
        session_id=session_id or uuid.uuid4().hex,
        project_id=project_id if project_id is not None else _project_id_for(directory),
        created_at=now,
        last_modified=now,
        working_directory=directory,
        current_model=current_model,
        messages=tuple(messages),
    )


# --- writing ---


def _compaction_to_json(record: CompactionRecord) -> dict[str, Any]:
    return {
        "summary": record.summary,
        "compacted_message_count": record.compacted_message_count,
        "tokens_before": record.tokens_before,
        "tokens_after": record.tokens_after,
        "count": record.count,
        "previous_summary": record.previous_summary,
        "created_at": record.created_at,
    }


def session_to_json(session: Session, *, history_file: str | None = None) -> dict[str, Any]:
    """The session file's JSON object, keys in contract order; with `history_file`, `"history": history_file` in
    place of `messages` (the caller wrote exactly these messages to that file beside the session)."""
    data: dict[str, Any] = {
        "version": session.version,
        "session_id": session.session_id,
        "project_id": session.project_id,
        "created_at": session.created_at,
        "last_modified": session.last_modified,
        "working_directory": session.working_directory,
        "current_model": session.current_model,
        "total_tokens": session.total_tokens,
        "session_total_usage": session.session_total_usage.to_json(),
        "thoughts": list(session.thoughts),
    }
    if history_file is None:
        data["messages"] = [message_to_json(m) for m in session.messages]
    else:
        data[HISTORY_REFERENCE] = history_file
    if session.compaction is not None:
        data["compaction"] = _compaction_to_json(session.compaction)
    if session.warnings:
        data["warnings"] = [record.to_json() for record in session.warnings]
    for key, value in session.extras.items():
        if key not in _KNOWN_KEYS:
            data[key] = value
    return data


def _refuse_to_overwrite(path: Path, *, over_empty: bool) -> None:
    """Raise unless `path` is absent, holds an agentrig session, or is empty and `over_empty` allows it
    (overwriting anything else could destroy data)."""
    state = target_state(path)
    if state == "nothing" or (over_empty and state == "an empty file"):
        return
    try:
        data = jsonio.read_json_file(path)
    except HistoryFormatError as error:
        raise HistoryFormatError(
            f"refusing to overwrite a file that is not an agentrig session ({error.reason})", path=path
        ) from None
    refuse_to_continue(data, path)


def refuse_to_continue(data: object, path: Path, *, doing: str = "refusing to overwrite") -> None:
    """Raise unless `data` (the parsed content of `path`) is an agentrig session this agentrig may write back.

    A canonical history or a bare list of messages loads as a session, but saving a session over it would
    replace someone's file with another format: `agentrig prompt --session` calls this before it sends anything."""
    if not is_session_object(data):
        what = "a canonical history" if isinstance(data, dict) else "a list of messages"
        if not isinstance(data, dict | list):
            what = "not a JSON object"
        raise HistoryFormatError(f"{doing} a file that is not an agentrig session ({what})", path=path)
    assert isinstance(data, dict)
    if data.get("version", SESSION_VERSION) not in _ACCEPTED_VERSIONS:
        raise HistoryFormatError(
            f"{doing} a session of unknown version {data['version']!r} (this agentrig writes "
            f"version {SESSION_VERSION})",
            path=path,
        )


def save_session(session: Session, path: str | Path, *, over_empty: bool = False) -> Session:
    """Write the session atomically and return it with `last_modified` set to now.

    An existing file at `path` is replaced only when it is an agentrig session (or, with `over_empty`, an empty
    file: `prompt --session` locks a new session as one, `session_lock`); a corrupt or foreign file raises
    `HistoryFormatError` and is left untouched.
    """
    target = Path(path)
    _refuse_to_overwrite(target, over_empty=over_empty)
    saved = replace(session, last_modified=_now())
    # API keys never reach a session file, whatever a model or a tool echoed; redacted as values, so the
    # file stays valid JSON whatever the messages quote.
    jsonio.write_atomic(target, dumps_redacted(session_to_json(saved), pretty=True))
    return saved


# --- reading ---


def is_session_object(data: object) -> bool:
    """A session file's object: its messages inline, or named by `history` (a run's session.json)."""
    return isinstance(data, dict) and ("messages" in data or HISTORY_REFERENCE in data) and "format" not in data


def with_referenced_history(data: object, path: str | Path | None) -> object:
    """`data` (the parsed file `path`), with a run's session.json's messages read from the history file it names.

    The name must be a bare file name: the file is beside the session, never elsewhere (a session is input, and
    `../x` or `/etc/passwd` would make a reader read any file). Anything else is returned as it is. An older agentrig
    reading such a session refuses it in one line (an object without `messages`)."""
    if not isinstance(data, dict) or "messages" in data or HISTORY_REFERENCE not in data or "format" in data:
        return data
    fields = cast(dict[str, Any], data)
    name = fields[HISTORY_REFERENCE]
    source = Path(path) if path is not None else None
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\\" in name or Path(name).is_absolute():
        raise HistoryFormatError(
            f"expected a file name in the session's folder (no folder, no '..'), got {name!r:.60}",
            path=source,
            field=HISTORY_REFERENCE,
        )
    if source is None:
        raise HistoryFormatError(f"names {name}, beside a session file: read it from its file", field=HISTORY_REFERENCE)
    target = source.parent / name
    try:
        document = jsonio.read_json_file(target)
    except HistoryFormatError as error:
        # Met by whoever copies a run's session.json away alone: say what keeps it whole.
        hint = f" (a run's session.json reads its messages from {name} beside it: copy the two together)"
        raise HistoryFormatError(
            f"{printable_path(target)}: {error.reason}{hint if error.reason == 'no such file' else ''}",
            path=source,
            field=HISTORY_REFERENCE,
        ) from None
    tagged: dict[str, Any] = cast(dict[str, Any], document) if isinstance(document, dict) else {}
    messages = tagged.get("messages")
    if tagged.get("format") != HISTORY_FORMAT or not isinstance(messages, list):
        raise HistoryFormatError(
            f"{printable_path(target)}: expected an {HISTORY_FORMAT} document with its messages",
            path=source,
            field=HISTORY_REFERENCE,
        )
    return {key: value for key, value in fields.items() if key != HISTORY_REFERENCE} | {"messages": messages}


_TYPE_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


def _field(data: Mapping[str, Any], key: str, kinds: tuple[type, ...], default: Any, path: Path | None) -> Any:
    """`data[key]` when it has one of the JSON types `kinds`, `default` when absent; else an error naming the key."""
    if key not in data:
        return default
    value = data[key]
    # bool is an int to Python, never to this format.
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        wanted = " or ".join(_TYPE_NAMES.get(kind, kind.__name__) for kind in kinds)
        raise HistoryFormatError(f"expected {wanted}, got {value!r:.60}", path=path, field=key)
    return value


_STR = (str,)
_INT = (int,)
_OPTIONAL_STR = (str, type(None))


def _compaction_from_json(data: object, path: Path | None) -> CompactionRecord | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise HistoryFormatError("expected an object", path=path, field="compaction")
    try:
        return CompactionRecord(
            summary=_field(data, "summary", _STR, "", path),
            compacted_message_count=_field(data, "compacted_message_count", _INT, 0, path),
            tokens_before=_field(data, "tokens_before", _INT, 0, path),
            tokens_after=_field(data, "tokens_after", _INT, 0, path),
            count=_field(data, "count", _INT, 1, path),
            previous_summary=_field(data, "previous_summary", _OPTIONAL_STR, None, path),
            created_at=_field(data, "created_at", _STR, "", path),
        )
    except HistoryFormatError as error:
        raise HistoryFormatError(error.reason, path=path, field=f"compaction.{error.field}") from None


def _warnings_from_json(data: object, path: Path | None) -> tuple[WarningRecord, ...]:
    try:
        return warnings_from_json(data, where="warnings")
    except HistoryFormatError as error:
        raise HistoryFormatError(error.reason, path=path, field=error.field) from None


def session_from_json(data: object, *, source: str | Path | None = None) -> Session:
    """A session from parsed JSON: a session object, a canonical history document, or a list of messages."""
    path = Path(source) if source is not None else None
    inline = with_referenced_history(data, path)
    # A message a referenced history holds is named in that file: its error names the file and where in it.
    messages_source = path
    if path is not None and inline is not data and isinstance(data, dict):
        messages_source = path.parent / str(data[HISTORY_REFERENCE])  # pyright: ignore[reportUnknownArgumentType]
    data = inline
    if not is_session_object(data):
        messages, thoughts = _history_or_foreign(data, path)
        session = new_session(working_directory="", project_id="", messages=messages)
        return replace(session, thoughts=tuple(thoughts))
    assert isinstance(data, dict)
    if is_tinyagent_session(data):  # a tunacode session: tinyagent usage names and compaction keys
        data = normalize_session_json(data, source=path)
    version = data.get("version", SESSION_VERSION)
    if version not in _ACCEPTED_VERSIONS:
        raise HistoryFormatError(
            f"unknown session version {version!r} (this agentrig reads version {SESSION_VERSION})",
            path=path,
            field="version",
        )
    messages, embedded_thoughts = messages_from_json(data["messages"], field="messages", source=messages_source)
    thoughts = _field(data, "thoughts", (list,), [], path)
    for index, thought in enumerate(thoughts):
        if not isinstance(thought, str):
            raise HistoryFormatError(f"expected a string, got {thought!r:.60}", path=path, field=f"thoughts[{index}]")
    usage = _field(data, "session_total_usage", (dict,), {}, path)
    try:
        total_usage = Usage.from_json(usage, where="session_total_usage")
    except HistoryFormatError as error:
        raise HistoryFormatError(error.reason, path=path, field=error.field) from None
    created_at = _field(data, "created_at", _STR, "", path)
    return Session(
        version=SESSION_VERSION,
        session_id=_field(data, "session_id", _STR, "", path),
        project_id=_field(data, "project_id", _STR, "", path),
        created_at=created_at,
        last_modified=_field(data, "last_modified", _STR, created_at, path),
        working_directory=_field(data, "working_directory", _STR, "", path),
        current_model=_field(data, "current_model", _OPTIONAL_STR, None, path),
        total_tokens=_field(data, "total_tokens", _INT, 0, path),
        session_total_usage=total_usage,
        # Legacy sessions kept thoughts inside `messages` as {"thought": ...} entries; they join the others.
        thoughts=(*thoughts, *embedded_thoughts),
        messages=tuple(messages),
        compaction=_compaction_from_json(data.get("compaction"), path),
        warnings=_warnings_from_json(data.get("warnings", []), path),
        extras={k: v for k, v in data.items() if k not in _KNOWN_KEYS},
    )


def _history_or_foreign(data: object, path: Path | None) -> tuple[list[Message], list[str]]:
    if is_recording(data):  # `check`, `convert` and `diff` read a recording as the conversation it recorded
        return recording_history(data, source=path), []
    if isinstance(data, dict) and "format" not in data:
        keys = ", ".join(sorted(str(k) for k in data)[:6]) or "none"
        raise HistoryFormatError(
            f"not an agentrig session or history (an object with keys: {keys}; expected messages or a format tag)",
            path=path,
        )
    return history_and_thoughts_from_json(data, source=path)


def load_session(path: str | Path) -> Session:
    """Read a session from a session file, a history document, or a message list in any accepted vocabulary."""
    return session_from_json(jsonio.read_json_file(path), source=path)


def load_history_file(path: str | Path) -> list[Message]:
    """The canonical messages of any file `load_session` accepts."""
    return list(load_session(path).messages)
