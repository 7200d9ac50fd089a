"""What `agentrig merge` refuses: an incomplete or mixed set of shards, and paths that leave their directory.

Each shard's report.json records `{"shard": {"index": K, "count": N}}`. A merge of 2 of 4 shards would
report the scenarios it has as the whole suite (a green run with half the suite missing), so a sharded
set must hold every index 1..N exactly once, all of the same N, unless the user allows a partial merge.

Reports are input like any other file: an `output_dir` of `"../../x"` must not make merge read or write
outside the shard's directory or `--out`, and a scenario name of `..` or `<img src=...>` must not reach a folder
name or summary.md. Every entry's name, id and output_dir must be what a run writes (`check_scenario_entries`), and
an input's scenario folder may hold only folders and regular files (`folder_files`).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from agentrig.errors import InputError, UsageError
from agentrig.input_files import HISTORY_FILE_LIMIT, not_a_regular_file, read_input_file

__all__ = [
    "NAME_LENGTH",
    "NAME_PATTERN",
    "SCENARIO_NAME",
    "FolderFiles",
    "check_scenario_entries",
    "check_shard_set",
    "contained_path",
    "describe_partial",
    "folder_files",
]

NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
"""A scenario name as the scenario model accepts it (`scenarios/model.py`: `name`, at most `NAME_LENGTH`; a test
keeps the two equal)."""
NAME_LENGTH = 100
SCENARIO_NAME = re.compile(rf"(?=.{{1,{NAME_LENGTH}}}(@|$)){NAME_PATTERN}(@[0-9]{{2,9}})?")
"""A name a run gives a scenario's entry and folder: the scenario's name, or `NAME@NN` for run NN of `--repeat`
(`@` is never part of a scenario's own name)."""
_PRINTABLE_PATH = re.compile(r"[^\x00-\x1f\x7f]{1,4096}")
# A file a run writes in a scenario's folder (`scenario_files`): a name of its own, in the folder or in subagents/.
_FOLDER_FILE = re.compile(r"(?:subagents/)?(?!\.)[A-Za-z0-9_.:-]{1,255}")


def _shard_of(report: Mapping[str, Any], source: Path) -> tuple[int, int] | None:
    shard = report.get("shard")
    if shard is None:
        return None
    index = shard.get("index") if isinstance(shard, dict) else None
    count = shard.get("count") if isinstance(shard, dict) else None
    valid = isinstance(index, int) and isinstance(count, int) and 1 <= index <= count
    if not valid:
        raise InputError(f"{source / 'report.json'}: shard: expected {{index: K, count: N}} with 1 <= K <= N")
    return index, count  # pyright: ignore[reportReturnType]  (checked just above)


def _indexes(numbers: Sequence[int]) -> str:
    return ", ".join(str(number) for number in numbers)


def check_shard_set(
    sources: Sequence[Path], reports: Sequence[Mapping[str, Any]], *, allow_partial: bool
) -> dict[str, Any] | None:
    """Refuse (UsageError, exit 2) shard sets that are incomplete, repeat a shard or mix shard counts.

    Inputs that are not shards (plain runs) are not checked: merging runs of different paths is allowed.
    Returns what an allowed partial merge lacks, `{"count": N, "missing": [K, ...]}` (the merged report's
    `partial`), or None for a complete set.
    """
    shards = [shard for source, report in zip(sources, reports, strict=True) if (shard := _shard_of(report, source))]
    if not shards:
        return None
    if len(shards) != len(reports):
        raise UsageError("merge: some inputs are shards (--shard K/N) and some are not; merge shards of one run only")
    counts = sorted({count for _, count in shards})
    if len(counts) > 1:
        raise UsageError(f"merge: the inputs are shards of different counts (of {_indexes(counts)}); merge one run")
    count = counts[0]
    # Shards dealt by different plans (one job found the durations file, one did not; two different files) overlap
    # and miss scenarios: the union would look like the suite and not be it. A report from before plans were
    # recorded dealt by count.
    plans = sorted({str(report["shard"].get("plan", "count")) for report in reports})
    if len(plans) > 1:
        raise UsageError(
            f"merge: the shards were dealt by different plans ({', '.join(plans)}); give every shard the same"
            " --durations file (or none)"
        )
    seen = Counter(index for index, _ in shards)
    repeated = sorted(index for index, times in seen.items() if times > 1)
    if repeated:
        raise UsageError(f"merge: shard {_indexes(repeated)} of {count} given more than once")
    missing = [index for index in range(1, count + 1) if index not in seen]
    if missing and not allow_partial:
        raise UsageError(
            f"merge: shard {_indexes(missing)} of {count} missing (got {_indexes(sorted(seen))}); "
            "pass --allow-partial to merge an incomplete set"
        )
    return {"count": count, "missing": missing} if missing else None


def describe_partial(partial: Mapping[str, Any]) -> str:
    """`shard 2, 4 of 4 missing`: how every report of a partial merge says what it lacks."""
    return f"shard {_indexes(partial['missing'])} of {partial['count']} missing"


def contained_path(base: Path, relative: object, report: Path, scenario: object) -> Path:
    """`base / relative`, refused (InputError) unless it stays inside `base` once resolved."""
    if not isinstance(relative, str) or not relative:
        raise InputError(f"{report}: scenario {scenario}: output_dir: expected a relative path such as scenarios/NAME")
    path = base / relative
    root = base.resolve()
    resolved = path.resolve()
    if resolved == root or not resolved.is_relative_to(root):
        raise InputError(f"{report}: scenario {scenario}: output_dir {relative!r} leads outside {base}; refusing it")
    return path


def check_scenario_entries(report: Mapping[str, Any], path: Path) -> None:
    """Refuse (InputError naming `path` and the field) a scenario entry whose name, id or output_dir a run would
    never write: a name outside the scenario name rules, a path holding control characters, an id that is not
    `PATH::NAME`, an output_dir that is not `scenarios/NAME`. Call after `report_shape.check_report_shape`."""
    for index, entry in enumerate(report["scenarios"]):
        where = f"{path}: scenarios[{index}]"
        name, scenario_path = entry["name"], entry["path"]
        if not SCENARIO_NAME.fullmatch(name):
            raise InputError(
                f"{where}: name: {name[:120]!r} is not a scenario name (letters, digits, '_', '.', '-', starting with"
                " a letter or digit, at most 100)"
            )
        if not _PRINTABLE_PATH.fullmatch(scenario_path):
            raise InputError(f"{where}: path: {scenario_path[:120]!r} is not a scenario file path")
        if entry["id"] != f"{scenario_path}::{name}":
            raise InputError(f"{where}: id: {entry['id'][:120]!r} is not {scenario_path + '::' + name!r}")
        if entry["output_dir"] != f"scenarios/{name}":
            raise InputError(f"{where}: output_dir: {entry['output_dir'][:120]!r} is not 'scenarios/{name}'")
        if "files" in entry and not _names_own_files(entry["files"], f"scenarios/{name}/"):
            raise InputError(f"{where}: files: expected an object naming files in scenarios/{name}/ (as a run writes)")


def _names_own_files(files: object, folder: str) -> bool:
    """Whether `files` (an entry's, from an agentrig before them: absent) names only files of the entry's folder, as
    a run writes them: `scenarios/NAME/FILE`, a sub-agent's `scenarios/NAME/subagents/FILE`."""
    if not isinstance(files, dict):
        return False
    paths: list[object] = []
    for value in cast(dict[str, object], files).values():
        paths.extend(cast(list[object], value) if isinstance(value, list) else [value])
    return all(
        isinstance(path, str) and path.startswith(folder) and _FOLDER_FILE.fullmatch(path[len(folder) :]) is not None
        for path in paths
    )


@dataclass(frozen=True, slots=True)
class FolderFiles:
    """The files of one input's scenario folder, found before the merge writes anything."""

    folder: Path
    exists: bool
    files: tuple[str, ...]
    """Relative to `folder`, `/`-separated."""
    subfolders: tuple[str, ...]
    """Relative to `folder`, parents before children."""

    def read(self) -> list[tuple[str, bytes]]:
        """Each file's bytes (a scenario's files are small: the folder is read whole, each file within the limit of a
        JSON input, `input_files`)."""
        return [
            (name, read_input_file(self.folder / name, limit=HISTORY_FILE_LIMIT, what="a file of a run's scenario"))
            for name in self.files
        ]


def folder_files(folder: Path) -> FolderFiles:
    """What `folder` holds; InputError for anything but folders and regular files (a link would pull an outside
    file into the merge, a FIFO would block it)."""
    if not os.path.lexists(folder):
        return FolderFiles(folder=folder, exists=False, files=(), subfolders=())
    if folder.is_symlink() or not folder.is_dir():
        raise InputError(f"{folder}: is not a folder a run writes (a link or a file); merge copies none")
    files: list[str] = []
    subfolders: list[str] = []
    pending = [""]
    while pending:
        current = pending.pop(0)
        with os.scandir(folder / current if current else folder) as entries:
            for entry in sorted(entries, key=lambda item: item.name):
                relative = f"{current}/{entry.name}" if current else entry.name
                if entry.is_dir(follow_symlinks=False):
                    subfolders.append(relative)
                    pending.append(relative)
                elif entry.is_file(follow_symlinks=False):
                    files.append(relative)
                else:  # a link, a FIFO, a device: say which
                    raise InputError(
                        f"{folder / relative}: {not_a_regular_file(entry.stat(follow_symlinks=False).st_mode)}; merge"
                        " copies only the folders and regular files a run writes, and touched nothing"
                    )
    return FolderFiles(folder=folder, exists=True, files=tuple(files), subfolders=tuple(subfolders))
