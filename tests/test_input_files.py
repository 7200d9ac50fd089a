"""`agentrig.input_files`: regular files only, within a limit that holds whatever size a file reports."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from agentrig.input_files import InputFileError, read_input_file, read_input_stream, read_input_text


def test_a_regular_file_is_read_as_read_bytes_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b'{"messages": []}\n')
    assert read_input_file(path, limit=17, what="a test file") == path.read_bytes()


def test_a_file_one_byte_over_is_refused_from_its_size(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"x" * 18)
    with pytest.raises(InputFileError) as refused:
        read_input_file(path, limit=17, what="a test file")
    assert refused.value.message == f"{path}: the file is 18 bytes, over the 17 bytes limit for a test file"


def test_a_file_that_reports_no_size_is_still_read_with_a_cap() -> None:
    """/proc files say they hold 0 bytes; so would a file that grows while it is read."""
    assert os.stat("/proc/self/status").st_size == 0
    with pytest.raises(InputFileError) as refused:
        read_input_file("/proc/self/status", limit=10, what="a test file")
    assert refused.value.reason == "the file is over the 10 bytes limit for a test file"


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError) as refused:  # opening it for reading would block: it must not
        read_input_file(fifo, limit=10, what="a test file")
    assert refused.value.reason == "is a FIFO (named pipe), not a regular file"


def test_a_directory_and_a_missing_file_raise_what_read_bytes_raises(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        read_input_file(tmp_path, limit=10, what="a test file")
    with pytest.raises(FileNotFoundError):
        read_input_file(tmp_path / "missing", limit=10, what="a test file")


def test_text_is_read_as_read_text_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes("name: café\r\nturns: []\rend\n".encode())
    assert read_input_text(path, limit=100, what="a test file") == path.read_text(encoding="utf-8")


def test_a_stream_is_read_to_its_end_or_refused_past_the_limit() -> None:
    assert read_input_stream(io.BytesIO(b"x" * 10), limit=10, subject="the input") == b"x" * 10
    with pytest.raises(InputFileError) as refused:
        read_input_stream(io.BytesIO(b"x" * 11), limit=10, subject="the input")
    assert refused.value.message == "the input is over the 10 bytes limit"
