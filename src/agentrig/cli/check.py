"""`agentrig check FILE...`: report the invariant violations of history and session files.

Accepts every form `agentrig.runtime.history.sessions.load_session` reads (canonical history, session,
pydantic-ai dump of any 2.x release, legacy dict lists). Never imports pydantic-ai, so it also runs
where pydantic-ai is not installed. Exit codes: 0 no violation, 1 a violation, 2 a file could not
be read (which wins over 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# One paragraph per line: Typer keeps line breaks. Help is plain text (no rich), so `[i]` is written as is.
CHECK_HELP = (
    "Check the invariants of history or session files.\n\n"
    "Prints one line per violation, `FILE: message[i].parts[j]: code: what is wrong`. "
    "Reads canonical histories, session files, pydantic-ai JSON dumps (any 2.x release) and legacy message lists.\n\n"
    "Exit codes: 0 no violation, 1 a violation, 2 a file cannot be read."
)


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("check", help=CHECK_HELP)
    def check(  # pyright: ignore[reportUnusedFunction]
        files: Annotated[
            list[Path], typer.Argument(metavar="FILE", help="History or session files.", show_default=False)
        ],
        as_json: Annotated[bool, typer.Option("--json", help="Print the violations as a JSON list.")] = False,
        only: Annotated[
            list[str] | None,
            typer.Option("--only", metavar="CODE", help="Check only this invariant (repeatable)."),
        ] = None,
    ) -> None:
        from agentrig.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, AgentrigError
        from agentrig.runtime.history.history_files import read_history_noting_fields
        from agentrig.runtime.history.invariants import check_invariants
        from agentrig.runtime.history.violations import INVARIANT_NAMES
        from agentrig.runtime.runfolder.jsonio import dumps

        unknown = sorted(set(only or ()) - set(INVARIANT_NAMES))
        if unknown:
            raise typer.BadParameter(
                f"unknown invariant {unknown[0]!r} (known: {', '.join(INVARIANT_NAMES)})", param_hint="--only"
            )
        found: list[dict[str, object]] = []
        unreadable = 0
        for path in files:
            try:
                history, warnings = read_history_noting_fields(path)
            except AgentrigError as error:
                unreadable += 1
                typer.echo(f"agentrig: error: {error.message}", err=True)
                continue
            for warning in warnings:
                typer.echo(f"agentrig: warning: {path}: {warning}", err=True)
            violations = check_invariants(history, only=only or None)
            for violation in violations:
                found.append(
                    {
                        "file": str(path),
                        "code": violation.code,
                        "message": violation.message,
                        "message_index": violation.message_index,
                        "part_index": violation.part_index,
                    }
                )
                if not as_json:
                    typer.echo(f"{path}: {violation.location}: {violation.code}: {violation.message}")
            if not violations and not as_json:
                typer.echo(f"{path}: OK ({len(history)} messages)")
        if as_json:
            typer.echo(dumps(found, pretty=True).decode(), nl=False)
        raise typer.Exit(EXIT_USAGE if unreadable else EXIT_FAILED if found else EXIT_OK)
