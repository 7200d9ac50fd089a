"""What `merge` (and anything else that reads a report.json back) needs of a report, checked up front.

A report.json edited by hand, truncated by another tool or written by something else must give one line that
names the file and the missing or wrong key, not a KeyError from deep inside the merge. Also what a report's
head says of the environment that wrote it (`installed_pydantic_ai_version`).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from agentrig.errors import InputError

__all__ = ["check_report_shape", "installed_pydantic_ai_version"]

_STATUSES = ("passed", "failed", "error", "skipped")

# key -> (JSON types accepted, what to call them in the message)
_SCENARIO_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "id": ((str,), "a string"),
    "name": ((str,), "a string"),
    "path": ((str,), "a string"),
    "status": ((str,), "a string"),
    "output_dir": ((str,), "a string"),
    "checks": ((list,), "a list"),
    "usage": ((dict,), "an object"),
}


def _require(data: Mapping[str, Any], key: str, kinds: tuple[type, ...], what: str, where: str, path: Path) -> Any:
    if key not in data:
        raise InputError(f"{path}: {where}missing {key!r}")
    value = data[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise InputError(f"{path}: {where}{key!r} must be {what}")
    return value


def check_report_shape(data: Mapping[str, Any], path: Path) -> None:
    """Raise `InputError` naming `path` and the first key a report lacks or holds in the wrong form."""
    summary = _require(data, "summary", (dict,), "an object", "", path)
    _require(summary, "duration_s", (int, float), "a number", "summary: ", path)
    scenarios = _require(data, "scenarios", (list,), "a list", "", path)
    for index, scenario in enumerate(scenarios):
        where = f"scenarios[{index}]: "
        if not isinstance(scenario, dict):
            raise InputError(f"{path}: {where}must be an object")
        for key, (kinds, what) in _SCENARIO_KEYS.items():
            _require(scenario, key, kinds, what, where, path)
        if scenario["status"] not in _STATUSES:
            raise InputError(f"{path}: {where}'status' must be one of {', '.join(_STATUSES)}")
        for number, check in enumerate(scenario["checks"]):
            if not isinstance(check, dict) or not isinstance(check.get("name"), str):
                raise InputError(f"{path}: {where}checks[{number}]: must be an object with a 'name'")
        # Optional: a report of an agentrig before each entry named its files has none.
        if "files" in scenario:
            _require(scenario, "files", (dict,), "an object", where, path)
        # Optional: a report of an agentrig before warnings were recorded has none.
        warned = _require(scenario, "warnings", (list,), "a list", where, path) if "warnings" in scenario else []
        for number, record in enumerate(warned):
            if not _is_warning(record):
                raise InputError(
                    f"{path}: {where}warnings[{number}]: must be an object with a 'category', 'message' and 'module'"
                    " (strings) and a 'count' (a whole number)"
                )


def _is_warning(record: object) -> bool:
    if not isinstance(record, dict):
        return False
    fields: dict[str, Any] = record  # pyright: ignore[reportUnknownVariableType]
    count = fields.get("count", 1)
    texts = all(isinstance(fields.get(key), str) for key in ("category", "message", "module"))
    return texts and isinstance(count, int) and not isinstance(count, bool)


def installed_pydantic_ai_version() -> str | None:
    """The installed pydantic-ai's version, read from its metadata (importing it would cost a second), or None."""
    for distribution in ("pydantic-ai-slim", "pydantic-ai"):
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
    return None
