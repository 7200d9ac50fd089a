"""A history file read for a command that also tells the user what agentrig does not carry of it.

`convert`, `check` and `diff` read any history form (`sessions.load_session`); a pydantic-ai dump may hold fields a
newer release added that the canonical form does not know. They are not carried, so the command says so, one
warning line per field (`field_inventory.unknown_fields`), instead of dropping them in silence.
"""

from __future__ import annotations

from pathlib import Path

from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.field_inventory import describe_unknown, unknown_fields
from agentrig.runtime.history.sessions import session_from_json, with_referenced_history
from agentrig.runtime.runfolder import jsonio

__all__ = ["read_history_noting_fields"]


def read_history_noting_fields(path: str | Path) -> tuple[list[Message], list[str]]:
    """The canonical messages of a file `load_session` accepts, and one warning per field it does not carry."""
    data = with_referenced_history(jsonio.read_json_file(path), path)  # a run's session.json: its history.json's
    messages = list(session_from_json(data, source=path).messages)
    return messages, [describe_unknown(field) for field in unknown_fields(data)]
