"""jsonio: one serializer, errors that name file/line/column, atomic writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentrig.errors import HistoryFormatError
from agentrig.runtime.runfolder.jsonio import dumps, loads, read_json_file, write_atomic


def test_dumps_compact_and_pretty() -> None:
    value = {"b": [1, 2], "a": "é"}
    assert dumps(value) == '{"b":[1,2],"a":"é"}'.encode()
    assert dumps(value, pretty=True) == '{\n  "b": [\n    1,\n    2\n  ],\n  "a": "é"\n}\n'.encode()


def test_loads_accepts_bytes_and_str() -> None:
    assert loads(b'{"a": 1}') == {"a": 1}
    assert loads("[true, null]") == [True, None]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1,\n "b": }', "x.json: invalid JSON (unexpected character, expected a JSON value) at line 2, column 7"),
        ('{"a": [1,\n 2', "x.json: truncated JSON at line 2, column 3"),
        ("", "x.json: the file is empty"),
        ("  \n", "x.json: the file is empty"),
    ],
)
def test_loads_errors_name_source_line_and_column(text: str, expected: str) -> None:
    with pytest.raises(HistoryFormatError) as caught:
        loads(text, source="x.json")
    assert str(caught.value) == expected
    assert caught.value.path == "x.json"


def test_read_json_file_missing_directory_and_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(HistoryFormatError, match=r"nope\.json: no such file"):
        read_json_file(tmp_path / "nope.json")
    with pytest.raises(HistoryFormatError, match="is a directory"):
        read_json_file(tmp_path)

    real_open = os.open

    def denied(path: str | Path, flags: int, *args: int) -> int:
        if Path(path).name == "locked.json":
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)

    # chmod cannot make a file unreadable for root, so the refusal is simulated.
    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(HistoryFormatError, match=r"locked\.json: cannot read the file \(Permission denied\)"):
        read_json_file(tmp_path / "locked.json")


def test_read_json_file_truncated(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_bytes(dumps({"messages": [{"kind": "request", "parts": []}]})[:-7])
    with pytest.raises(HistoryFormatError, match=r"history\.json: truncated JSON at line 1"):
        read_json_file(path)


def test_write_atomic_creates_parents_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.json"
    write_atomic(target, b"[1]")
    assert target.read_bytes() == b"[1]"
    target.chmod(0o640)
    write_atomic(target, b"[2]")
    assert target.read_bytes() == b"[2]"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.json"]


def test_write_atomic_new_file_is_not_private(tmp_path: Path) -> None:
    target = tmp_path / "new.json"
    write_atomic(target, b"{}")
    assert target.stat().st_mode & 0o777 == 0o644


def test_write_atomic_failure_leaves_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "keep.json"
    target.write_bytes(b"old")

    def broken_replace(source: str, destination: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.json"]
