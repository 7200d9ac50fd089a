"""Every shape an output folder given to run, merge, the pytest plugin or matrix can take, with sentinel files that
must come through untouched (issue 27, item 1), and a snapshot of a folder to compare before and after."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MANIFEST_NAME = ".agentrig-manifest.jsonl"  # written here, not imported: the tests run against older code too
SCENARIO = "name: {name}\nturns:\n  - user: hi\n    model:\n      - text: hello\n"


def write_suite(folder: Path, names: tuple[str, ...] = ("alpha", "beta")) -> Path:
    """A folder of passing scenarios."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.yaml").write_text(SCENARIO.format(name=name), encoding="utf-8")
    return folder


def snapshot(root: Path) -> dict[str, str]:
    """Every entry under `root` (links not followed): a file's digest, a link's target, `dir` for a folder."""
    entries: dict[str, str] = {}
    for directory, folders, files in os.walk(root):
        for name in [*folders, *files]:
            path = Path(directory, name)
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                entries[relative] = "-> " + os.readlink(path)
            elif path.is_dir():
                entries[relative] = "dir"
            else:
                entries[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return entries


@dataclass(frozen=True, slots=True)
class Shape:
    """An --out folder as a user might hand it over: `prepare(tmp_path, earlier_run)` makes it and returns it
    (`earlier_run(folder)` fills a folder with a real agentrig output first, for the shapes that need one), and
    `outside` are the files outside it that must survive too."""

    id: str
    prepare: Callable[[Path, Callable[[Path], None]], Path]
    says: str
    """What the one-line refusal says."""


def _project(tmp_path: Path) -> Path:
    """A project root: scenarios, a README, a sub-folder, and the report.json the run's own help shows how to make."""
    project = tmp_path / "project"
    write_suite(project / "scenarios")
    (project / "README.md").write_text("# my project\n", encoding="utf-8")
    (project / "sub").mkdir()
    (project / "sub" / "keep.txt").write_text("keep me\n", encoding="utf-8")
    (project / "report.json").write_text('{"format": "agentrig.report/1", "scenarios": []}\n', encoding="utf-8")
    return project


def _dot(tmp_path: Path, earlier_run: Callable[[Path], None]) -> Path:
    project = _project(tmp_path)
    os.chdir(project)
    return Path(".")


def _project_root(tmp_path: Path, earlier_run: Callable[[Path], None]) -> Path:
    return _project(tmp_path)


def _foreign_report(tmp_path: Path, earlier_run: Callable[[Path], None]) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "report.json").write_text('{"format": "agentrig.report/1", "scenarios": []}\n', encoding="utf-8")
    (folder / "notes.txt").write_text("mine\n", encoding="utf-8")
    return folder


def _earlier_agentrig(tmp_path: Path, earlier_run: Callable[[Path], None]) -> Path:
    """What an agentrig without manifests left: its files, no manifest (they cannot be told from a user's)."""
    folder = tmp_path / "out"
    earlier_run(folder)
    (folder / MANIFEST_NAME).unlink()
    return folder


def _tampered(line: str) -> Callable[[Path, Callable[[Path], None]], Path]:
    def prepare(tmp_path: Path, earlier_run: Callable[[Path], None]) -> Path:
        folder = tmp_path / "out"
        earlier_run(folder)
        outside = tmp_path / "x"
        outside.write_text("outside\n", encoding="utf-8")
        digest = hashlib.sha256(b"outside\n").hexdigest()
        with (folder / MANIFEST_NAME).open("a", encoding="utf-8") as manifest:
            manifest.write(line.format(outside=outside, digest=digest) + "\n")
        return folder

    return prepare


def _link_to_outside(tmp_path: Path, earlier_run: Callable[[Path], None]) -> Path:
    folder = tmp_path / "out"
    earlier_run(folder)
    outside = tmp_path / "outside.json"
    target = folder / "scenarios" / "alpha" / "history.json"
    outside.write_bytes(target.read_bytes())  # the very bytes agentrig recorded: a link is refused all the same
    target.unlink()
    target.symlink_to(outside)
    return folder


def _linked_parent(tmp_path: Path, earlier_run: Callable[[Path], None]) -> Path:
    folder = tmp_path / "out"
    earlier_run(folder)
    moved = tmp_path / "elsewhere"
    (folder / "scenarios").rename(moved)  # the same files, recorded as they are, reached through a link
    (folder / "scenarios").symlink_to(moved)
    return folder


def _replaced_by_the_user(tmp_path: Path, earlier_run: Callable[[Path], None]) -> Path:
    folder = tmp_path / "out"
    earlier_run(folder)
    (folder / "summary.md").write_text("my notes on this run\n", encoding="utf-8")
    return folder


def _replaced_with_the_same_size(tmp_path: Path, earlier_run: Callable[[Path], None]) -> Path:
    """Only the digest tells this one: the user's bytes are as many as agentrig's."""
    folder = tmp_path / "out"
    earlier_run(folder)
    path = folder / "scenarios" / "alpha" / "usage.json"
    data = path.read_bytes()
    path.write_bytes(data.replace(b"0", b"7"))
    assert path.stat().st_size == len(data)
    assert path.read_bytes() != data
    return folder


def _added_by_the_user(tmp_path: Path, earlier_run: Callable[[Path], None]) -> Path:
    folder = tmp_path / "out"
    earlier_run(folder)
    (folder / "scenarios" / "alpha" / "notes.txt").write_text("mine\n", encoding="utf-8")
    return folder


NOT_OURS = "touched nothing"
REFUSED_SHAPES = [
    Shape("dot", _dot, "holds report.json but no .agentrig-manifest.jsonl"),
    Shape("project-root", _project_root, "holds report.json but no .agentrig-manifest.jsonl"),
    Shape("foreign-report-json", _foreign_report, "holds report.json but no .agentrig-manifest.jsonl"),
    Shape("earlier-agentrig", _earlier_agentrig, "holds report.json but no .agentrig-manifest.jsonl"),
    Shape(
        "manifest-lists-dot-dot",
        _tampered('{{"file": "../x", "size": 8, "sha256": "{digest}"}}'),
        ".agentrig-manifest.jsonl:",
    ),
    Shape(
        "manifest-lists-an-absolute-path",
        _tampered('{{"file": "{outside}", "size": 8, "sha256": "{digest}"}}'),
        "is absolute",
    ),
    Shape(
        "manifest-lists-etc-passwd",
        # A wrong size and digest: even a broken check could never match the real file.
        _tampered('{{"file": "/etc/passwd", "size": 1, "sha256": "' + "0" * 64 + '"}}'),
        "'/etc/passwd' is absolute",
    ),
    Shape(
        "manifest-lists-a-file-run-never-writes",
        _tampered('{{"file": "README.md", "size": 8, "sha256": "{digest}"}}'),
        "lists 'README.md', which agentrig run never writes",
    ),
    Shape("recorded-file-now-a-link", _link_to_outside, "scenarios/alpha/history.json: "),
    Shape("recorded-folder-now-a-link", _linked_parent, "on its way is a link or not a folder"),
    Shape("file-replaced-by-the-user", _replaced_by_the_user, "summary.md: changed since agentrig wrote it"),
    Shape(
        "file-replaced-with-as-many-bytes",
        _replaced_with_the_same_size,
        "scenarios/alpha/usage.json: changed since agentrig wrote it",
    ),
    Shape("file-added-by-the-user", _added_by_the_user, "scenarios/alpha/notes.txt: agentrig did not write it"),
]
