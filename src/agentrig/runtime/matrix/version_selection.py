"""`--versions`: exact pins, `latest`, `locked`, and PEP 440 ranges, resolved to the versions a matrix runs.

    --versions 2.68.0,latest                 the pin, then the newest release on the index
    --versions '>=2.68,<3' --each minor      each minor's newest release in the range, oldest first
    --versions locked,latest --lock uv.lock  the version uv.lock pins, then the newest

The list is read left to right and the first version is the baseline. A range's comma joins its clauses
(`>=2.68,<3` is one item), so items are split on the commas that do not continue a range. Exact pins never need
the index: only `latest` and ranges read it (`package_index`), at run time, so the same command tomorrow runs
tomorrow's release. Pre-releases are skipped unless `--pre` is given (or a range names one, as PEP 440 says).
`--max-versions N` caps what ranges add: their oldest releases are left out (and named) until the matrix holds N
versions; versions named exactly and `latest` always run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from agentrig.errors import UsageError
from agentrig.runtime.matrix.package_index import PROJECT, IndexReleases

__all__ = [
    "DEFAULT_MAX_VERSIONS",
    "EACH_CHOICES",
    "VERSION_PATTERN",
    "Each",
    "Resolution",
    "needs_index",
    "resolve_versions",
    "split_versions",
]

VERSION_PATTERN = re.compile(r"[0-9]+(\.[0-9]+)*([a-z]+[0-9]*)?(\.post[0-9]+|\.dev[0-9]+)?")
"""A release number as pip pins it (2.38.0, 2.61.0b1, 2.60.0.post1)."""
KEYWORDS = ("latest", "locked")
OPERATOR = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)")
Each = Literal["release", "minor"]
EACH_CHOICES: tuple[Each, ...] = ("release", "minor")
DEFAULT_MAX_VERSIONS = 8
"""How many versions a matrix with ranges runs at most, unless `--max-versions` says otherwise."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolution:
    """What `--versions` asked for and what it came to."""

    requested: tuple[str, ...]
    """The items as given (`2.68.0`, `latest`, `>=2.68,<3`)."""
    versions: tuple[str, ...]
    """The versions to run, baseline first."""
    notes: tuple[str, ...] = ()
    """One line per item that needed resolving: what it came to."""
    left_out: tuple[str, ...] = ()
    """Releases a range matched that `--max-versions` left out, oldest first."""
    index: str | None = None
    """The package index read (credentials removed); None when nothing needed it."""

    @property
    def resolved(self) -> bool:
        """True when some item was not an exact version (the page then says what each came to)."""
        return self.index is not None or any(item in KEYWORDS for item in self.requested)


def split_versions(text: str) -> tuple[str, ...]:
    """`2.68.0,>=2.70,<3,latest` -> ("2.68.0", ">=2.70,<3", "latest"): a clause starting with an operator continues
    the range before it."""
    items: list[str] = []
    for raw in text.split(","):
        token = raw.strip()
        if not token:
            continue
        if items and OPERATOR.match(token) and OPERATOR.match(items[-1]):
            items[-1] = f"{items[-1]},{token}"
        else:
            items.append(token)
    return tuple(items)


def _kind(item: str) -> str:
    if item in KEYWORDS:
        return item
    if VERSION_PATTERN.fullmatch(item):
        return "pin"
    if OPERATOR.match(item):
        try:
            SpecifierSet(item)
        except InvalidSpecifier:
            raise UsageError(f"--versions: {item!r} is not a PEP 440 range (like '>=2.68,<3')") from None
        return "range"
    raise UsageError(
        f"--versions: {item!r} is not a version number (like 2.38.0), latest, locked, or a range (like '>=2.68,<3')"
    )


def needs_index(items: Sequence[str]) -> bool:
    """True when some item is `latest` or a range."""
    return any(_kind(item) in ("latest", "range") for item in items)


def _same(version: str) -> Version | str:
    try:
        return Version(version)
    except InvalidVersion:
        return version


def _in_range(spec: SpecifierSet, releases: Sequence[Version], *, pre: bool, each: Each) -> list[Version]:
    # A pre-release only with --pre or when the range itself names one (PEP 440); never the "no final release
    # matched, so take pre-releases" fallback of SpecifierSet.filter (and packaging 25+'s contains() admits
    # pre-releases by default, so it is decided here).
    admit_pre = pre or bool(spec.prereleases)
    matched = [
        version
        for version in releases
        if (admit_pre or not version.is_prerelease) and spec.contains(version, prereleases=True)
    ]
    if each == "minor":
        newest: dict[tuple[int, int], Version] = {}
        for version in matched:
            key = (version.major, version.minor)
            newest[key] = max(newest.get(key, version), version)
        matched = sorted(newest.values())
    return sorted(matched)


def resolve_versions(
    items: Sequence[str],
    *,
    releases: Callable[[], IndexReleases],
    each: Each = "release",
    max_versions: int = DEFAULT_MAX_VERSIONS,
    pre: bool = False,
    locked: str | None = None,
) -> Resolution:
    """The versions `items` name, in order; `releases()` is called once, and only when an item needs the index.
    A usage error for an item that is no version, `locked` without a lock file, a range that matches nothing or an
    exact version listed twice; the index's own failure is its InfrastructureError."""
    if not items:
        raise UsageError("--versions: give at least one pydantic-ai version, e.g. --versions 2.38.0,2.68.0")
    if max_versions < 1:
        raise UsageError(f"--max-versions {max_versions}: give at least 1")
    kinds = [_kind(item) for item in items]
    pins = [item for item, kind in zip(items, kinds, strict=True) if kind == "pin"]
    if len({_same(pin) for pin in pins}) != len(pins):
        raise UsageError(f"--versions {','.join(items)}: a version is listed twice")
    index: IndexReleases | None = releases() if any(kind in ("latest", "range") for kind in kinds) else None
    notes: list[str] = []
    # Each item's versions, with whether a cap may drop them (only a range's may).
    chosen: list[tuple[str, bool]] = []
    for item, kind in zip(items, kinds, strict=True):
        if kind == "pin":
            chosen.append((item, False))
        elif kind == "locked":
            if locked is None:
                raise UsageError("--versions locked: give --lock FILE (the lock file's pydantic-ai is the version)")
            notes.append(f"locked = {locked} (the lock file's pydantic-ai)")
            chosen.append((locked, False))
        elif kind == "latest":
            assert index is not None
            candidates = [v for v in index.releases if pre or not v.is_prerelease]
            if not candidates:
                raise UsageError(f"--versions latest: {index.index} has no {PROJECT} release for this Python")
            found = str(max(candidates))
            notes.append(f"latest = {found} (the newest {PROJECT}{' release' if not pre else ''} on {index.index})")
            chosen.append((found, False))
        else:
            assert index is not None
            matched = _in_range(SpecifierSet(item), index.releases, pre=pre, each=each)
            if not matched:
                hint = "" if pre else "; pre-releases are skipped without --pre"
                raise UsageError(f"--versions {item!r}: no {PROJECT} release on {index.index} matches it{hint}")
            per = "each minor's newest release" if each == "minor" else "each release"
            notes.append(f"{item} ({per}) = {', '.join(map(str, matched))}")
            chosen += [(str(version), True) for version in matched]
    # One run per version: a later item naming a version already chosen adds nothing.
    unique: list[tuple[str, bool]] = []
    for version, droppable in chosen:
        earlier = next((number for number, (seen, _) in enumerate(unique) if _same(seen) == _same(version)), None)
        if earlier is None:
            unique.append((version, droppable))
        elif not droppable:  # named exactly (or `latest`) as well as matched by a range: never left out
            unique[earlier] = (unique[earlier][0], False)
    left_out: list[str] = []
    for _, version in sorted((Version(v), v) for v, droppable in unique if droppable):  # a range's: index versions
        if len(unique) - len(left_out) <= max_versions:
            break
        left_out.append(version)
    if left_out:
        notes.append(
            f"--max-versions {max_versions}: left out {', '.join(left_out)} (the oldest a range matched; "
            "raise --max-versions or narrow the range to run them)"
        )
    return Resolution(
        requested=tuple(items),
        versions=tuple(version for version, _ in unique if version not in left_out),
        notes=tuple(notes),
        left_out=tuple(left_out),
        index=index.index if index is not None else None,
    )
