"""Every package an environment resolved, and what differs from the baseline's: the regression may not be pydantic-ai's.

An upgrade moves more than pydantic-ai: a new pydantic-ai-slim can resolve a new major of one of its dependencies
(2.78's environment got ag-ui-protocol 1.0.0 where the baseline had 0.1.22), and a scenario that breaks then breaks
for that package's sake as much as for pydantic-ai's. So each environment's packages are read from inside it
(`importlib.metadata`, names normalized as PEP 503 does), kept in compatibility.json, and compared with the
baseline's; the report names every other package that changed beside each regression.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PACKAGES_SCRIPT",
    "PYDANTIC_AI_FAMILY",
    "PackageChange",
    "also_changed_sentence",
    "package_changes",
    "read_packages",
]

PACKAGES_SCRIPT = (
    "import importlib.metadata as m, json, re\n"
    "found = {}\n"
    "for d in m.distributions():\n"
    "    name = d.metadata['Name']\n"
    "    if name:\n"
    "        found[re.sub(r'[-_.]+', '-', name).lower()] = d.version\n"
    "print(json.dumps(found, sort_keys=True))\n"
)
"""Run by an environment's own interpreter: {normalized name: version} of every distribution it has."""

PYDANTIC_AI_FAMILY = frozenset({"pydantic-ai", "pydantic-ai-slim", "pydantic-graph", "pydantic-evals"})
"""The distributions a pydantic-ai release moves together (one version number, released as one)."""

MAX_NAMED = 6
"""At most this many other packages are named in one sentence; the rest are counted."""


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class PackageChange:
    """One package whose version differs from the baseline's environment (or that only one of the two has)."""

    name: str
    """The normalized distribution name (`ag-ui-protocol`)."""
    before: str | None
    """Its version in the baseline's environment; None when the baseline has no such package."""
    after: str | None
    """Its version here; None when this environment has no such package."""

    @property
    def is_pydantic_ai(self) -> bool:
        """True for pydantic-ai's own distributions (`PYDANTIC_AI_FAMILY`)."""
        return self.name in PYDANTIC_AI_FAMILY

    def text(self) -> str:
        """`ag-ui-protocol 0.1.22 → 1.0.0`, `starlette 0.47.0 (new)`, `griffe 1.7.3 (gone)`."""
        if self.before is None:
            return f"{self.name} {self.after} (new)"
        if self.after is None:
            return f"{self.name} {self.before} (gone)"
        return f"{self.name} {self.before} → {self.after}"

    def to_json(self) -> dict[str, str | None]:
        return {"name": self.name, "before": self.before, "after": self.after}


def read_packages(env_python: Path, env: Mapping[str, str]) -> tuple[dict[str, str], str | None]:
    """({name: version}, None) of the environment's interpreter, or ({}, why not) when it cannot say."""
    try:
        completed = subprocess.run(
            [str(env_python), "-c", PACKAGES_SCRIPT], capture_output=True, text=True, env=dict(env), timeout=120
        )
    except (OSError, subprocess.SubprocessError) as error:
        return {}, f"cannot run {env_python}: {error}"
    if completed.returncode != 0:
        lines = (completed.stderr or completed.stdout).strip().splitlines()
        return {}, f"listing the packages failed (exit {completed.returncode}): {lines[-1] if lines else 'no output'}"
    try:
        data = json.loads(completed.stdout)
    except ValueError:
        return {}, f"listing the packages printed no JSON: {completed.stdout.strip()[:120]!r}"
    if not isinstance(data, dict):
        return {}, "listing the packages printed no JSON object"
    found: dict[str, str] = {str(name): str(version) for name, version in data.items()}
    return found, None


def package_changes(baseline: Mapping[str, str], other: Mapping[str, str]) -> tuple[PackageChange, ...]:
    """Every package whose version differs between two environments' records, pydantic-ai's first, then by name."""
    changes = [
        PackageChange(name=name, before=baseline.get(name), after=other.get(name))
        for name in sorted(baseline.keys() | other.keys())
        if baseline.get(name) != other.get(name)
    ]
    return tuple(sorted(changes, key=lambda change: (not change.is_pydantic_ai, change.name)))


def also_changed_sentence(changes: Sequence[PackageChange]) -> str | None:
    """The plain sentence for a regression when packages other than pydantic-ai changed too; None when none did."""
    others = [change for change in changes if not change.is_pydantic_ai]
    if not others:
        return None
    named = ", ".join(change.text() for change in others[:MAX_NAMED])
    more = f" and {len(others) - MAX_NAMED} more" if len(others) > MAX_NAMED else ""
    return f"{named}{more} also changed: the regression may be theirs."
