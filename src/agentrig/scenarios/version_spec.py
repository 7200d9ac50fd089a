"""`when_pydantic_ai`: which pydantic-ai versions a per-version expectation is written for.

A specifier is one or more comparisons joined by commas, all of which must hold: `<2.60`, `>=2.60`,
`>=2.40,<2.60`, `==2.38.0`, `!=2.59.0`. Versions compare numerically, missing parts count as 0 (`2.60` is
`2.60.0`). Pure and framework-free: the scenario format validates the text, the engine matches it against the
installed version.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable

__all__ = ["VersionTuple", "parse_version_spec", "version_matches"]

VersionTuple = tuple[int, int, int]

_CLAUSE = re.compile(r"^\s*(<=|>=|==|!=|<|>)\s*(\d+(?:\.\d+){0,2})\s*$")
_OPERATORS: dict[str, Callable[[VersionTuple, VersionTuple], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def _as_version(text: str) -> VersionTuple:
    numbers = [int(piece) for piece in text.split(".")]
    numbers += [0] * (3 - len(numbers))
    return numbers[0], numbers[1], numbers[2]


def parse_version_spec(spec: str) -> tuple[tuple[str, VersionTuple], ...]:
    """The comparisons of `spec`; ValueError naming the clause that is not `OP X.Y[.Z]`."""
    clauses: list[tuple[str, VersionTuple]] = []
    for clause in spec.split(","):
        match = _CLAUSE.match(clause)
        if match is None:
            raise ValueError(
                f"{clause.strip()!r} is not a version comparison: write e.g. '<2.60', '>=2.60' or '>=2.40,<2.60'"
            )
        clauses.append((match.group(1), _as_version(match.group(2))))
    return tuple(clauses)


def version_matches(spec: str, version: VersionTuple) -> bool:
    """Whether `version` satisfies every comparison of `spec` (already validated)."""
    return all(_OPERATORS[op](version, bound) for op, bound in parse_version_spec(spec))
