"""`agentrig report`: report.html from a run folder, a merged shard folder or a matrix folder already on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

HELP = """Write the HTML page of a run output directory: one self-contained file (style, script and data
inline, no network request) that opens from disk, a CI artifact or an email attachment.

DIR is what `agentrig run --out`, `agentrig merge --out` or `agentrig matrix --out` wrote.
A run or merged folder gets report.html (the run at a glance, every scenario's conversation,
checks and diffs); a matrix folder gets compatibility.html (one column per pydantic-ai
version, each scenario's failed checks and canonical diff per version). `agentrig run` and
`agentrig matrix` already write these pages; this command writes them again, or with
--baseline compares the run with another one (e.g. before and after an upgrade): which
scenarios changed status, and the canonical history diff of each.

Examples:

\b
    agentrig report agentrig-out/
    agentrig report out-2.68/ --baseline out-2.38/ -o upgrade.html
    agentrig report matrix-out/

The page is written atomically; -o /dev/stdout or a FIFO is written through (docs/report.md).
Writing DIR's own page again keeps DIR an agentrig output folder (its manifest records it).

Exit codes: 0 written, 2 DIR or --baseline is not an agentrig output folder, or the page
cannot be written there, 3 the disk is full (the page it would replace is unchanged).
"""


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("report", help=HELP)
    def report(  # pyright: ignore[reportUnusedFunction]
        directory: Annotated[Path, typer.Argument(metavar="DIR", help="Run, merged or matrix output directory.")],
        baseline: Annotated[
            Path | None,
            typer.Option(
                "--baseline", metavar="DIR", help="Another run output directory to compare with (the 'before')."
            ),
        ] = None,
        output: Annotated[
            Path | None,
            typer.Option(
                "-o",
                "--output",
                metavar="FILE",
                help="The HTML file [default: DIR/report.html, or DIR/compatibility.html].",
            ),
        ] = None,
    ) -> None:
        from agentrig.runtime.reports.render import default_output, render_folder

        target = output or default_output(directory)
        kind = render_folder(directory, target, baseline=baseline)
        typer.echo(f"wrote {target} ({'matrix' if kind == 'matrix' else 'run'} report)")
