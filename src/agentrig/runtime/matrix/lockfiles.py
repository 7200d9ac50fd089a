"""`agentrig matrix --lock FILE`: the packages a user's lock file pins, so every environment is that lock with only
pydantic-ai moved.

    lock = read_lock(Path("uv.lock"), python_version="3.11.9")
    lock.pydantic_ai            # "2.68.0": the version `--versions locked` names
    lock.preferences()          # ["ag-ui-protocol==0.1.22", ...]: the resolver keeps these unless it must move them
    lock.requirements()         # ["ag-ui-protocol", "colorama ; sys_platform == 'win32'", ...]: what to install

Four formats, read with tomllib or as text (no resolver, no network):

- `uv.lock`: the packages reachable from the workspace's own members (their dependencies and `dev` group, as
  `uv sync` installs by default), each edge's marker evaluated for the environments' Python;
- `poetry.lock`: every package that is not optional (extras), with its `markers`;
- `pylock.toml` (PEP 751, also `pylock.NAME.toml`): every package with a version, with its `marker`;
- anything else is a requirements file of pins (`pip freeze`, `uv pip compile`): `name==version` lines, markers
  and `--hash` options allowed; `-e` lines are skipped (the project is `--project`), `-r`/`-c` refused.

Packages from git, a URL or a local path are not pinned here (their names are kept in `unpinned`). pydantic-ai's
own distributions (`packages.PYDANTIC_AI_FAMILY`) are never preferred: each environment pins them to its version.
A file that cannot be read, or that pins no pydantic-ai, is a usage error naming it (and its line where it has one).
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.markers import InvalidMarker, Marker, default_environment
from packaging.requirements import InvalidRequirement, Requirement

from agentrig.errors import InputError
from agentrig.input_files import SCENARIO_FILE_LIMIT, InputFileError, read_input_text, reason_of
from agentrig.runtime.matrix.packages import PYDANTIC_AI_FAMILY

__all__ = ["LockFile", "LockedPackage", "lock_format", "normalize", "read_lock"]

LOCK_FILE_LIMIT = SCENARIO_FILE_LIMIT
"""The largest lock file read (16 MiB: a lock of a thousand packages is well under 1 MiB)."""


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class LockedPackage:
    """One package the lock pins."""

    name: str
    """Its normalized name (PEP 503)."""
    version: str
    """The version pinned."""
    extras: tuple[str, ...] = ()
    """Extras a requirements line asked for (`name[extra]==1.0`)."""
    marker: str | None = None
    """Where it applies (PEP 508); None: everywhere, or already evaluated (uv.lock)."""
    line: int | None = None
    """Its line in a requirements file."""

    def requirement(self) -> str:
        """The package as a requirement without its pin: the resolver may move it, the preference keeps it."""
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        return f"{self.name}{extras}" + (f" ; {self.marker}" if self.marker else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class LockFile:
    """A lock file, read."""

    path: Path
    """The file."""
    format: str
    """`uv.lock`, `poetry.lock`, `pylock.toml` or `requirements`."""
    sha256: str
    """The digest of its bytes (an environment built from it is reused only while it is unchanged)."""
    packages: tuple[LockedPackage, ...]
    """Every package it pins that applies here, pydantic-ai's included, sorted by name."""
    pydantic_ai: str
    """The pydantic-ai version it pins (pydantic-ai-slim's, else pydantic-ai's)."""
    full_pydantic_ai: bool = False
    """True when it pins `pydantic-ai` itself (not only pydantic-ai-slim): the environments pin it too."""
    unpinned: tuple[str, ...] = ()
    """Packages it names from git, a URL or a path: not pinned (the resolver chooses)."""

    def pins(self) -> dict[str, str]:
        """{name: version} of every package it pins."""
        return {package.name: package.version for package in self.packages}

    def preferences(self) -> list[str]:
        """`name==version` of every package but pydantic-ai's: the versions the resolver keeps unless forced."""
        return [f"{p.name}=={p.version}" for p in self.packages if p.name not in PYDANTIC_AI_FAMILY]

    def requirements(self) -> list[str]:
        """Every package but pydantic-ai's, unpinned (with its marker): what each environment installs."""
        return [p.requirement() for p in self.packages if p.name not in PYDANTIC_AI_FAMILY]


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_format(path: Path) -> str:
    """The format a file's name says."""
    name = path.name.lower()
    if name == "uv.lock":
        return "uv.lock"
    if name == "poetry.lock":
        return "poetry.lock"
    if re.fullmatch(r"pylock(\.[^.]+)?\.toml", name):
        return "pylock.toml"
    return "requirements"


def _refuse(path: Path, reason: str, line: int | None = None) -> InputError:
    where = f"{path}:{line}" if line is not None else str(path)
    return InputError(f"--lock {where}: {reason}")


def _marker_holds(marker: str | None, environment: Mapping[str, str]) -> bool:
    if not marker:
        return True
    try:
        return Marker(marker).evaluate(dict(environment))
    except (InvalidMarker, KeyError, ValueError):  # a marker it cannot judge is kept: the resolver judges it again
        return True


def _environment(python_version: str) -> dict[str, str]:
    environment = {key: str(value) for key, value in default_environment().items()}
    environment["extra"] = ""
    environment["python_full_version"] = python_version
    environment["python_version"] = ".".join(python_version.split(".")[:2])
    return environment


def _uv_lock(path: Path, data: dict[str, Any], environment: Mapping[str, str]) -> tuple[list[LockedPackage], list[str]]:
    entries: list[dict[str, Any]] = [item for item in data.get("package", []) if isinstance(item, dict)]
    if not entries:
        raise _refuse(path, "no [[package]] entries (not a uv.lock)")
    by_name: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        if not isinstance(entry.get("name"), str):
            raise _refuse(path, "a [[package]] without a name")
        by_name.setdefault(normalize(entry["name"]), []).append(entry)

    def source(entry: dict[str, Any]) -> dict[str, Any]:
        value = entry.get("source")
        return value if isinstance(value, dict) else {}

    def pick(edge: dict[str, Any]) -> dict[str, Any] | None:
        candidates = by_name.get(normalize(str(edge.get("name", ""))), [])
        if "version" in edge:
            candidates = [entry for entry in candidates if entry.get("version") == edge["version"]] or candidates
        for entry in candidates:  # a forked resolution: the entry whose resolution markers hold here
            markers = entry.get("resolution-markers") or []
            if not markers or any(_marker_holds(str(marker), environment) for marker in markers):
                return entry
        return candidates[0] if candidates else None

    roots = [entry for entry in entries if {"editable", "virtual"} & source(entry).keys()]
    reached: dict[int, dict[str, Any]] = {}
    edges: list[Any] = []
    for root in roots or entries:
        reached[id(root)] = root
        edges += root.get("dependencies", [])
        dev = root.get("dev-dependencies", {})
        edges += dev.get("dev", []) if isinstance(dev, dict) else []
    while edges:
        edge = edges.pop()
        if not isinstance(edge, dict) or not _marker_holds(edge.get("marker"), environment):
            continue
        target = pick(edge)
        if target is None:
            continue
        extras = [str(extra) for extra in edge.get("extra", [])]
        first_visit = id(target) not in reached
        reached[id(target)] = target
        if first_visit:
            edges += target.get("dependencies", [])
        optional = target.get("optional-dependencies", {})
        for extra in extras:
            edges += optional.get(extra, []) if isinstance(optional, dict) else []
    packages: list[LockedPackage] = []
    unpinned: list[str] = []
    for entry in reached.values():
        kind = source(entry)
        if {"editable", "virtual"} & kind.keys():
            continue  # the project itself: `--project`
        if "registry" in kind and isinstance(entry.get("version"), str):
            packages.append(LockedPackage(name=normalize(entry["name"]), version=entry["version"]))
        else:
            unpinned.append(normalize(entry["name"]))
    return packages, unpinned


def _poetry_lock(path: Path, data: dict[str, Any]) -> tuple[list[LockedPackage], list[str]]:
    packages: list[LockedPackage] = []
    unpinned: list[str] = []
    entries = data.get("package", [])
    if not isinstance(entries, list) or not entries:
        raise _refuse(path, "no [[package]] entries (not a poetry.lock)")
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise _refuse(path, "a [[package]] without a name")
        if entry.get("optional"):
            continue  # installed only for an extra
        kind = (entry.get("source") or {}).get("type")
        name = normalize(entry["name"])
        if kind not in (None, "legacy") or not isinstance(entry.get("version"), str):
            unpinned.append(name)
            continue
        markers: Any = entry.get("markers")
        if isinstance(markers, dict):  # Poetry 2: one marker per group
            markers = " or ".join(f"({value})" for value in markers.values()) or None
        packages.append(LockedPackage(name=name, version=entry["version"], marker=str(markers) if markers else None))
    return packages, unpinned


def _pylock(path: Path, data: dict[str, Any]) -> tuple[list[LockedPackage], list[str]]:
    entries = data.get("packages")
    if not isinstance(entries, list) or "lock-version" not in data:
        raise _refuse(path, "no lock-version and [[packages]] (not a PEP 751 pylock.toml)")
    packages: list[LockedPackage] = []
    unpinned: list[str] = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise _refuse(path, "a [[packages]] entry without a name")
        name = normalize(entry["name"])
        if {"vcs", "directory", "archive"} & entry.keys() or not isinstance(entry.get("version"), str):
            unpinned.append(name)
            continue
        marker = entry.get("marker")
        packages.append(LockedPackage(name=name, version=entry["version"], marker=str(marker) if marker else None))
    return packages, unpinned


_IGNORED_OPTIONS = re.compile(
    r"^(-i|--index-url|--extra-index-url|-f|--find-links|--trusted-host|--pre|--no-binary|--only-binary|"
    r"--prefer-binary|--require-hashes|--no-index|--hash)\b"
)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    lines: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(^|\s)#.*$", "", raw)
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        lines.append((start, (pending + line).strip()))
        pending = ""
    if pending.strip():
        lines.append((start, pending.strip()))
    return [(number, line) for number, line in lines if line]


def _requirements(path: Path, text: str) -> tuple[list[LockedPackage], list[str]]:
    packages: list[LockedPackage] = []
    unpinned: list[str] = []
    for number, line in _logical_lines(text):
        if line.startswith(("-r", "--requirement", "-c", "--constraint")):
            raise _refuse(
                path,
                "a nested requirements file is not followed: give one pinned file (pip freeze, uv pip compile)",
                number,
            )
        if line.startswith(("-e", "--editable")):
            continue  # the project itself, or a path: `--project`
        if line.startswith("-"):
            if not _IGNORED_OPTIONS.match(line):
                raise _refuse(path, f"{line.split()[0]}: an option agentrig does not read here", number)
            continue
        requirement_text = re.split(r"\s--hash[=\s]", line, maxsplit=1)[0].strip()
        try:
            requirement = Requirement(requirement_text)
        except InvalidRequirement as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else "unreadable"
            raise _refuse(path, f"not a requirement ({first})", number) from None
        name = normalize(requirement.name)
        if requirement.url:
            unpinned.append(name)
            continue
        clauses = list(requirement.specifier)
        if len(clauses) != 1 or clauses[0].operator not in ("==", "===") or "*" in clauses[0].version:
            raise _refuse(path, f"{requirement_text!r} is not a pin (name==version): a lock pins every package", number)
        packages.append(
            LockedPackage(
                name=name,
                version=clauses[0].version,
                extras=tuple(sorted(requirement.extras)),
                marker=str(requirement.marker) if requirement.marker else None,
                line=number,
            )
        )
    return packages, unpinned


def _toml(path: Path, text: str, what: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        found = re.search(r"\(at line (\d+), column \d+\)", str(error))
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(error))
        raise _refuse(
            path, f"not valid TOML, so not a {what} ({reason})", int(found.group(1)) if found else None
        ) from None


def read_lock(path: Path, *, python_version: str) -> LockFile:
    """The lock file read, for environments of Python `python_version` (X.Y.Z); a usage error (exit 2) for a file
    that cannot be read, is not of its format, or pins no pydantic-ai."""
    try:
        text = read_input_text(path, limit=LOCK_FILE_LIMIT, what="a lock file")
    except (OSError, InputFileError, UnicodeDecodeError) as error:
        reason = "not UTF-8 text" if isinstance(error, UnicodeDecodeError) else reason_of(error)
        raise _refuse(path, f"cannot read it ({reason})") from None
    kind = lock_format(path)
    environment = _environment(python_version)
    if kind == "requirements":
        packages, unpinned = _requirements(path, text)
    else:
        data = _toml(path, text, kind)
        if kind == "uv.lock":
            packages, unpinned = _uv_lock(path, data, environment)
        elif kind == "poetry.lock":
            packages, unpinned = _poetry_lock(path, data)
        else:
            packages, unpinned = _pylock(path, data)
    # The environments are built on this machine for that Python: a package whose marker fails there is not theirs.
    packages = _one_per_name(path, [package for package in packages if _marker_holds(package.marker, environment)])
    pins = {package.name: package.version for package in packages}
    version = pins.get("pydantic-ai-slim") or pins.get("pydantic-ai")
    if version is None:
        raise _refuse(path, "pins no pydantic-ai (no pydantic-ai-slim or pydantic-ai with a version)")
    return LockFile(
        path=path,
        format=kind,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        packages=tuple(sorted(packages)),
        pydantic_ai=version,
        full_pydantic_ai="pydantic-ai" in pins,
        unpinned=tuple(sorted(set(unpinned))),
    )


def _one_per_name(path: Path, packages: Sequence[LockedPackage]) -> list[LockedPackage]:
    """One pin per name: two versions of one package that both apply here cannot both be installed."""
    chosen: dict[str, LockedPackage] = {}
    for package in packages:
        earlier = chosen.get(package.name)
        if earlier is not None and earlier.version != package.version:
            raise _refuse(path, f"pins {package.name} twice ({earlier.version} and {package.version})", package.line)
        chosen.setdefault(package.name, package)
    return list(chosen.values())
