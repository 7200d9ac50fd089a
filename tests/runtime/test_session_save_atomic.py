"""`save_session` replaces the file atomically: a reader holding the old file keeps reading all of it.

A direct write (open, truncate, write) would change the old file in place, under the reader's feet, and a
crash mid-write would leave half a session; this test fails for such a save.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentrig.runtime.history.canonical import Message, TextPart
from agentrig.runtime.history.sessions import new_session, save_session


def test_save_replaces_the_session_file_without_touching_the_old_one(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    save_session(new_session(messages=[Message.request(TextPart(content="first"))]), path)
    with path.open("rb") as reader:
        save_session(new_session(messages=[Message.request(TextPart(content="second " * 1000))]), path)
        old = json.loads(reader.read())

    assert old["messages"][0]["parts"][0]["content"] == "first"
    assert json.loads(path.read_bytes())["messages"][0]["parts"][0]["content"].startswith("second")
    assert [p.name for p in tmp_path.iterdir()] == ["session.json"]
