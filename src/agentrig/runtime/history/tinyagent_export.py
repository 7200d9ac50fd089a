"""Writing the tinyagent format: message lists and tunacode-shaped session files.

`session_to_tinyagent_json` writes the keys tunacode's `StateManager.save_session` writes, in its
order, so tunacode's `load_session` restores the session: tinyagent messages, `session_total_usage`
with tinyagent's names and a `cost` (the one kept from a tunacode file, else zero), and the
compaction with tunacode's key names. agentrig's `total_tokens` and any extra keys follow; tunacode
ignores keys it does not know.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.sessions import Session, is_session_object, session_from_json
from agentrig.runtime.history.tinyagent_format import messages_to_tinyagent
from agentrig.runtime.history.tinyagent_sessions import COST_KEY, usage_to_tinyagent
from agentrig.runtime.runfolder import jsonio

__all__ = ["dumps_tinyagent", "file_to_tinyagent", "read_session_input", "session_to_tinyagent_json"]

# Keys tunacode writes itself; an extra key of the same name would be a stale copy.
_WRITTEN = frozenset(
    {
        "version",
        "session_id",
        "project_id",
        "created_at",
        "last_modified",
        "working_directory",
        "selected_skill_names",
        "current_model",
        "session_total_usage",
        "thoughts",
        "messages",
        "compaction",
        "total_tokens",
        COST_KEY,
    }
)


def read_session_input(path: str | Path) -> tuple[Session, bool]:
    """The session of any file `load_session` reads, and whether the file itself was a session object."""
    data = jsonio.read_json_file(path)
    return session_from_json(data, source=path), is_session_object(data)


def session_to_tinyagent_json(session: Session) -> dict[str, Any]:
    """A session file tunacode's `load_session` accepts."""
    cost = session.extras.get(COST_KEY)
    skills = session.extras.get("selected_skill_names", [])
    data: dict[str, Any] = {
        "version": 1,
        "session_id": session.session_id,
        "project_id": session.project_id,
        "created_at": session.created_at,
        "last_modified": session.last_modified,
        "working_directory": session.working_directory,
        "selected_skill_names": skills,
    }
    if session.current_model is not None:  # tunacode falls back to its default model when the key is absent
        data["current_model"] = session.current_model
    data["session_total_usage"] = usage_to_tinyagent(
        session.session_total_usage, cost=cost if isinstance(cost, dict) else None
    )
    data["thoughts"] = list(session.thoughts)
    data["messages"] = messages_to_tinyagent(session.messages)
    record = session.compaction
    data["compaction"] = (
        None
        if record is None
        else {
            "summary": record.summary,
            "compacted_message_count": record.compacted_message_count,
            "tokens_before": record.tokens_before,
            "tokens_after": record.tokens_after,
            "compaction_count": max(record.count, 1),  # tunacode requires a positive count
            "previous_summary": record.previous_summary,
            "last_compacted_at": record.created_at,
        }
    )
    data["total_tokens"] = session.total_tokens
    data.update((key, value) for key, value in session.extras.items() if key not in _WRITTEN)
    return data


def dumps_tinyagent(messages: list[Message] | tuple[Message, ...], *, pretty: bool = False) -> bytes:
    """A history as a JSON list of tinyagent messages."""
    return jsonio.dumps(messages_to_tinyagent(messages), pretty=pretty)


def file_to_tinyagent(path: str | Path, *, session: bool = False) -> bytes:
    """Any file `load_session` reads as tinyagent JSON: a tunacode session file when the input is a session
    object or `session` is set, else a list of messages. A part with no tinyagent form raises
    `HistoryFormatError` naming the file and the part."""
    loaded, is_session = read_session_input(path)
    try:
        if session or is_session:
            return jsonio.dumps(session_to_tinyagent_json(loaded), pretty=True)
        return dumps_tinyagent(loaded.messages, pretty=True)
    except HistoryFormatError as error:
        raise HistoryFormatError(error.reason, path=path, field=error.field) from None
