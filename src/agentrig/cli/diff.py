"""`agentrig diff`: a normalized unified diff of two histories, sessions or run output directories."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from agentrig.runtime.history.canonical import Message

HELP = """Show what differs between two histories, or between two run output directories.

Files may be anything `agentrig convert` reads: canonical or legacy histories, session
files, or pydantic-ai dumps of any supported version. Both sides are normalized to the
canonical history with run_ids dropped (they are random per run), so only real
differences show.

With two directories written by `agentrig run --out`, every scenarios/NAME/history.json
is compared by scenario name; a scenario present on one side only is a difference.

A failed tool result holding the placeholder `agentrig scaffold` writes where a
pydantic-ai dump recorded no error text matches the same call's failed result on the
other side whatever its text; the output says how many texts were set aside.

Examples:

\b
    agentrig diff scenarios/golden/tool-roundtrip.json \\
        agentrig-out/scenarios/tool-roundtrip/history.json
    agentrig diff out-2.38/ out-2.68/   # the same suite on two pydantic-ai versions

Exit codes: 0 identical, 1 different, 2 a file cannot be read.
"""


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("diff", help=HELP)
    def diff(  # pyright: ignore[reportUnusedFunction]
        first: Annotated[Path, typer.Argument(metavar="FIRST", help="History/session file or run output directory.")],
        second: Annotated[Path, typer.Argument(metavar="SECOND", help="History/session file or run output directory.")],
        quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print nothing; only the exit code tells.")] = False,
    ) -> None:
        from agentrig.errors import InputError, UsageError

        for path in (first, second):
            if not path.exists():
                raise InputError(f"{path}: no such file or directory")
        if first.is_dir() != second.is_dir():
            raise UsageError(f"diff compares two files or two directories: {first} and {second} are one of each")
        gaps = [0]  # error texts set aside, over every pair of files compared
        if first.is_dir():
            differences = _diff_directories(first, second, gaps)
        else:
            text = _diff_files(first, second, gaps)
            differences = [text] if text else []
        if not quiet:
            from agentrig.runtime.scaffold.unrecorded import gap_note

            for text in differences:
                sys.stdout.write(text)
            sys.stdout.write("identical\n" if not differences else "")
            sys.stdout.write(gap_note(gaps[0]) if gaps[0] else "")
        raise typer.Exit(code=1 if differences else 0)


def _normalized(messages: list[Message]) -> str:
    """The history as its golden file would hold it, with any key it quotes redacted (never printed)."""
    from agentrig.runtime.checks.history_checks import canonical_golden_bytes
    from agentrig.runtime.history.redaction import redact_json_bytes

    return redact_json_bytes(canonical_golden_bytes(messages), pretty=True).decode("utf-8")


def _diff_files(first: Path, second: Path, gaps: list[int]) -> str:
    """The unified diff of two files (empty: identical), the tool error texts a dump did not record set aside
    (`runtime/scaffold/unrecorded.py`) and counted in `gaps[0]`."""
    from agentrig.runtime.checks.check_support import unified_diff
    from agentrig.runtime.history.sessions import load_history_file
    from agentrig.runtime.scaffold.unrecorded import set_aside_unrecorded_errors

    left, right, count = set_aside_unrecorded_errors(load_history_file(first), load_history_file(second))
    gaps[0] += count
    return unified_diff(_normalized(left), _normalized(right), expected_label=str(first), actual_label=str(second))


def _histories(directory: Path) -> dict[str, Path]:
    from agentrig.errors import InputError

    root = directory / "scenarios"
    if not root.is_dir():
        raise InputError(f"{directory}: no scenarios/ directory (not an agentrig run output directory)")
    return {path.parent.name: path for path in sorted(root.glob("*/history.json"))}


def _diff_directories(first: Path, second: Path, gaps: list[int]) -> list[str]:
    left, right = _histories(first), _histories(second)
    differences: list[str] = []
    for name in sorted(left.keys() | right.keys()):
        if name not in right:
            differences.append(f"only in {first}: {name}\n")
        elif name not in left:
            differences.append(f"only in {second}: {name}\n")
        else:
            text = _diff_files(left[name], right[name], gaps)
            if text:
                differences.append(text)
    return differences
