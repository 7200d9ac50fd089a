"""The reads and the look before a write that history/ asks the run folder's package for, instead of the file system.

`recordings.recorded_model`, `sessions.save_session` and `events.read_events` did these themselves; each case is the
one their code told apart (a FIFO, a directory, a dangling link, an empty file, a bad line after a good one).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentrig.errors import HistoryFormatError
from agentrig.runtime.runfolder.jsonio import read_json_file_if_present, read_json_lines
from agentrig.runtime.runfolder.write_targets import target_state


def test_a_json_file_is_read_only_when_a_regular_file_is_there(tmp_path: Path) -> None:
    (tmp_path / "rec.json").write_bytes(b'{"model": "test:a"}')
    os.mkfifo(tmp_path / "fifo")  # never opened: a reader would block on it
    (tmp_path / "folder").mkdir()
    assert read_json_file_if_present(tmp_path / "rec.json") == {"model": "test:a"}
    assert read_json_file_if_present(tmp_path / "absent.json") is None
    assert read_json_file_if_present(tmp_path / "fifo") is None
    assert read_json_file_if_present(tmp_path / "folder") is None
    (tmp_path / "bad.json").write_bytes(b"{")
    with pytest.raises(HistoryFormatError, match="truncated JSON"):
        read_json_file_if_present(tmp_path / "bad.json")


def test_json_lines_are_parsed_as_they_are_taken(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"seq": 1}\n\n  \n{"seq": 2}\n{bad\n')
    values = read_json_lines(path, what="an events log")
    assert next(values) == {"seq": 1}
    assert next(values) == {"seq": 2}
    with pytest.raises(HistoryFormatError, match="line 1"):
        next(values)


def test_json_lines_of_what_is_not_a_regular_file_are_refused_at_once(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError):
        read_json_lines(tmp_path / "folder", what="an events log")


def test_what_a_path_names_before_a_session_is_saved_over_it(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_bytes(b"")
    (tmp_path / "full.json").write_bytes(b"{}")
    (tmp_path / "folder").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "to-empty").symlink_to(tmp_path / "empty.json")
    assert target_state(tmp_path / "absent.json") == "nothing"
    assert target_state(tmp_path / "dangling") == "nothing"
    assert target_state(tmp_path / "empty.json") == "an empty file"
    assert target_state(tmp_path / "to-empty") == "an empty file"
    assert target_state(tmp_path / "full.json") == "something"
    assert target_state(tmp_path / "folder") == "something"
