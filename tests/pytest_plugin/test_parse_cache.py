"""The pytest-xdist controller's reading of the scenario files (`parse_cache`): a worker gets a file's scenarios from
it only while the file is what the controller read, and reads the file itself otherwise."""

from __future__ import annotations

import gc
import os
import pickle
import threading
import time
from pathlib import Path

import pytest

from agentrig.pytest_plugin.parse_cache import (
    ParseCacheReader,
    ParseCacheWriter,
    scenario_files_under,
    without_cyclic_collection,
)
from tests.pytest_plugin.project import scenario


def _filled(files: list[Path], base: Path) -> tuple[ParseCacheWriter, ParseCacheReader]:
    writer = ParseCacheWriter()
    reader = ParseCacheReader(writer.directory)
    writer.start(lambda: files, base)
    writer.wait()
    return writer, reader


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scenarios").mkdir()
    path = tmp_path / "scenarios" / "alpha.yaml"
    path.write_text(scenario("alpha"), encoding="utf-8")
    return path


def test_an_unchanged_file_is_served_from_the_controllers_reading(suite: Path, tmp_path: Path) -> None:
    writer, reader = _filled([suite], tmp_path)
    try:
        served = reader.scenarios(suite, Path("scenarios/alpha.yaml"))
    finally:
        writer.close()
    assert served is not None
    assert [(cached.name, cached.line, cached.tags) for cached in served] == [("alpha", 1, ())]
    assert [(loaded.name, loaded.path, loaded.line) for loaded in (cached.load() for cached in served)] == [
        ("alpha", Path("scenarios/alpha.yaml"), 1)
    ]
    assert reader.used == 1
    assert not os.path.exists(writer.directory)  # the controller's folder goes with its session


def _rewrite_same_size(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert len(old) == len(new)
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_file_changed_since_is_read_again_even_at_the_same_size(suite: Path, tmp_path: Path) -> None:
    writer, reader = _filled([suite], tmp_path)
    try:
        before = os.stat(suite)
        _rewrite_same_size(suite, "alpha", "omega")
        os.utime(suite, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
        assert reader.scenarios(suite, Path("scenarios/alpha.yaml")) is None
    finally:
        writer.close()
    assert reader.used == 0


def test_a_file_of_another_size_with_the_old_mtime_is_read_again(suite: Path, tmp_path: Path) -> None:
    writer, reader = _filled([suite], tmp_path)
    try:
        before = os.stat(suite)
        suite.write_text(scenario("alphabet"), encoding="utf-8")
        os.utime(suite, ns=(before.st_atime_ns, before.st_mtime_ns))  # as a coarse clock or a restore would
        assert reader.scenarios(suite, Path("scenarios/alpha.yaml")) is None
    finally:
        writer.close()


def test_a_file_replaced_by_another_with_equal_size_and_mtime_is_read_again(suite: Path, tmp_path: Path) -> None:
    writer, reader = _filled([suite], tmp_path)
    try:
        before = os.stat(suite)
        replacement = suite.with_name("new.yaml")
        replacement.write_text(scenario("alpha").replace("alpha", "omega"), encoding="utf-8")
        os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
        os.replace(replacement, suite)  # another inode: an editor's save, a git checkout
        assert os.stat(suite).st_size == before.st_size
        assert reader.scenarios(suite, Path("scenarios/alpha.yaml")) is None
    finally:
        writer.close()


def test_a_file_named_otherwise_is_read_again(suite: Path, tmp_path: Path) -> None:
    # Messages and reports name a file as the worker's session shows it: never another session's spelling.
    writer, reader = _filled([suite], tmp_path)
    try:
        assert reader.scenarios(suite, Path("alpha.yaml")) is None
        assert reader.scenarios(suite, suite) is None
        assert reader.scenarios(suite, Path("scenarios/alpha.yaml")) is not None
    finally:
        writer.close()


def test_an_invalid_file_has_no_entry_and_a_damaged_entry_is_ignored(suite: Path, tmp_path: Path) -> None:
    broken = suite.with_name("broken.yaml")
    broken.write_text("name: broken\nturns: 3\n", encoding="utf-8")
    writer, reader = _filled([suite, broken], tmp_path)
    try:
        assert reader.scenarios(broken, Path("scenarios/broken.yaml")) is None  # the worker raises its own error
        for entry in Path(writer.directory).glob("*.pickle"):
            entry.write_bytes(pickle.dumps("not an entry")[:5])
        assert reader.scenarios(suite, Path("scenarios/alpha.yaml")) is None
    finally:
        writer.close()


def test_the_files_a_session_can_collect(tmp_path: Path) -> None:
    roots = tmp_path / "scenarios"
    (roots / "b").mkdir(parents=True)
    (roots / ".hidden").mkdir()
    for name in ("b/two.yaml", "one.yml", ".hidden/no.yaml", "notes.txt"):
        (roots / name).write_text("", encoding="utf-8")
    elsewhere = tmp_path / "other.yaml"
    elsewhere.write_text("", encoding="utf-8")

    found = scenario_files_under([tmp_path], [roots], [elsewhere], lambda path: True)

    assert found == [roots / "b" / "two.yaml", roots / "one.yml", elsewhere]
    assert scenario_files_under([tmp_path / "tests"], [roots], [], lambda path: True) == []
    assert scenario_files_under([tmp_path], [roots], [], lambda path: path.name != "one.yml") == [
        roots / "b" / "two.yaml"
    ]


def test_imports_run_without_cyclic_collection_and_leave_it_as_it_was() -> None:
    assert gc.isenabled()
    with without_cyclic_collection():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with without_cyclic_collection():
            pass
        assert not gc.isenabled()  # a caller's own choice is kept
    finally:
        gc.enable()


def test_the_end_of_a_session_does_not_wait_for_ever_on_a_reading_thread_that_cannot_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As after a Ctrl-C inside an import of the main thread, which can leave that module's import lock held: the
    # thread, importing beside it, would wait for ever, and so would a session that joined it without a bound.
    monkeypatch.setattr("agentrig.pytest_plugin.parse_cache.CLOSE_WAIT_S", 0.2)
    never = threading.Event()
    writer = ParseCacheWriter()
    directory = Path(writer.directory)
    writer.start(lambda: [Path(str(never.wait()))], tmp_path)  # blocks where the thread would block
    closing = threading.Thread(target=writer.close, daemon=True)
    started = time.monotonic()

    closing.start()
    closing.join(30)

    assert not closing.is_alive()
    assert time.monotonic() - started < 10
    assert not directory.exists()
    never.set()
