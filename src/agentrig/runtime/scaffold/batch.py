"""`agentrig scaffold SOURCES... -o DIR`: many conversations at once, one scenario each, and a row per source
saying what became of it.

Sources are files, folders of them (searched recursively), and run folders (`agentrig run --out`): a run's
scenario folder (`scenarios/NAME/`, told by its `usage.json`) is one conversation, read from the
richest of its files (`pydantic_ai_dump.json`, which records usage and instructions, else `session.json`, else
`history.json`) and named after the folder; its `subagents/` are the sub-agents' scripts, not sources.

Each scenario gets a name of its own (from its file, or its folder when the file's name says nothing:
`session.json`), made unique with `-2`, `-3`, ... so no scenario or golden is written over another; a
conversation identical to one already scaffolded (the same golden history) is kept once. A source that cannot
be read or replayed, or whose files may not be written (`writing.py`), is refused on its row; the others are
written all the same. The command's exit code is the worst row's.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentrig.errors import AgentrigError
from agentrig.runtime.scaffold.scenario import AgentInfo, Planned, PlanOptions, plan_scenario
from agentrig.runtime.scaffold.source import read_source
from agentrig.runtime.scaffold.writing import MANIFEST, ScenarioFolder

__all__ = ["RUN_FILES", "Found", "Outcome", "Row", "discover", "name_from", "scaffold_all"]

RUN_FILES = ("pydantic_ai_dump.json", "session.json", "history.json")
"""A run's scenario folder holds one conversation three ways; the first present is read."""

_RUN_MARKERS = ("usage.json",)
# checks.json: an earlier agentrig wrote one in every scenario folder. The folder of a scenario that did not run holds
# none of RUN_FILES, so its files are looked at one by one: its checks are not a conversation.
_NOT_SOURCES = frozenset({"report.json", "checks.json", "usage.json", MANIFEST})
_GENERIC_STEMS = frozenset({"session", "history", "pydantic_ai_dump"})
"""The file names of a run's scenario folder: they say nothing of the conversation, its folder does."""
_NAME_LIMIT = 100

Outcome = Literal["scaffolded", "duplicate", "refused"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Found:
    """A source to scaffold and the name its scenario would take."""

    path: Path
    name: str
    problem: str | None = None
    """Why it cannot even be read (a missing path, a FIFO): refused without reading."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """What became of one source."""

    source: Path
    outcome: Outcome
    scenario: Path | None = None
    detail: str = ""
    planned: Planned | None = None
    exit_code: int = 0
    warnings: tuple[str, ...] = ()
    """What the source holds that the scenario does not carry (fields the canonical form does not know)."""


def name_from(path: Path) -> str:
    """A scenario name from a file: its stem, or its folder's name when the stem says nothing (`session.json`)."""
    import re

    stem = path.stem if path.stem not in _GENERIC_STEMS else path.resolve().parent.name or path.stem
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-._")
    return (name or "scaffolded")[:_NAME_LIMIT]


def discover(paths: Sequence[Path], *, skip: Path | None = None) -> list[Found]:
    """The sources under `paths`, in a stable order (`skip`: the output folder, never read as input)."""
    found: list[Found] = []
    for path in paths:
        try:
            info = path.stat()
        except OSError as error:
            found.append(Found(path=path, name=name_from(path), problem=error.strerror or "cannot read it"))
            continue
        if stat.S_ISDIR(info.st_mode):
            found.extend(_in_folder(path, skip))
        elif stat.S_ISREG(info.st_mode):
            found.append(Found(path=path, name=name_from(path)))
        else:
            found.append(Found(path=path, name=name_from(path), problem="not a regular file"))
    return found


def _in_folder(root: Path, skip: Path | None) -> Iterable[Found]:
    skipped = skip.resolve() if skip is not None else None
    for folder, folders, files in os.walk(root):
        here = Path(folder)
        folders[:] = sorted(
            name
            for name in folders
            if not name.startswith(".") and (here / name).resolve() != skipped and not (here / name / MANIFEST).exists()
        )
        names = set(files)
        if names & set(_RUN_MARKERS) and names & set(RUN_FILES):  # a run's scenario folder: one conversation
            chosen = next(name for name in RUN_FILES if name in names)
            folders[:] = []  # its subagents/ hold scripts, not conversations
            yield Found(path=here / chosen, name=name_from(here / chosen))
            continue
        for name in sorted(files):
            if name.endswith(".json") and name not in _NOT_SOURCES and not name.startswith("."):
                path = here / name
                if path.is_file():
                    yield Found(path=path, name=name_from(path))


def scaffold_all(
    found: Sequence[Found],
    folder: ScenarioFolder,
    *,
    plan_options: Callable[[str], PlanOptions],
    agent_for: Callable[[Path], AgentInfo | None],
) -> list[Row]:
    """Plan and write each source's scenario into `folder`; one row per source, in order."""
    rows: list[Row] = []
    taken: set[str] = set()
    conversations: dict[str, str] = {}
    for entry in found:
        if entry.problem is not None:
            rows.append(Row(source=entry.path, outcome="refused", detail=f"{entry.path}: {entry.problem}", exit_code=2))
            continue
        name = _unique(entry.name, taken)
        try:
            source = read_source(entry.path)
            planned = plan_scenario(source, plan_options(name), agent_for(entry.path))
            if planned.conversation in conversations:
                rows.append(
                    Row(
                        source=entry.path,
                        outcome="duplicate",
                        detail=f"the same conversation as {conversations[planned.conversation]}",
                    )
                )
                continue
            folder.write(planned.files)
        except AgentrigError as error:
            rows.append(Row(source=entry.path, outcome="refused", detail=error.message, exit_code=error.exit_code))
            continue
        taken.add(name)
        conversations[planned.conversation] = name
        scenario = folder.directory / planned.files[-1][0]
        rows.append(
            Row(
                source=entry.path,
                outcome="scaffolded",
                scenario=scenario,
                planned=planned,
                warnings=source.unknown_fields,
            )
        )
    return rows


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    number = 2
    while f"{name[: _NAME_LIMIT - 6]}-{number}" in taken:
        number += 1
    return f"{name[: _NAME_LIMIT - 6]}-{number}"
