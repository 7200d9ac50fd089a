"""`agentrig merge`: combine the output directories of sharded runs into one report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

HELP = """Combine the output directories of sharded runs (`agentrig run --shard K/N`) into one.

Writes OUT/report.json, junit.xml and summary.md for all scenarios together, sorted by
scenario id as an unsharded run lists them, and copies every OUT/scenarios/NAME/. The
merged duration is the slowest shard's. Inputs must come from the same pydantic-ai
version and may not share a scenario. Shards must form a complete set (each of 1..N
once, all of the same N); --allow-partial merges an incomplete one.

Example:

\b
    agentrig run --shard 1/2 --out out/1
    agentrig run --shard 2/2 --out out/2
    agentrig merge out/1 out/2 --out out/all

--out is replaced only if agentrig can prove every file there its own (its manifest, as
`agentrig run --out`): an empty or new folder, or an earlier agentrig output (docs/exit-codes.md).

Exit codes: 0 every scenario passed, 1 some failed, 3 some errored or the disk is full,
130 a shard was interrupted, 2 an input is not a run output directory, shards are missing
or repeated, a report names a scenario or a path a run never writes, or --out holds files
agentrig did not write.
"""


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("merge", help=HELP)
    def merge(  # pyright: ignore[reportUnusedFunction]
        directories: Annotated[
            list[Path], typer.Argument(metavar="DIR", help="Run output directories (from `agentrig run --out`).")
        ],
        out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Where the merged output goes.")] = Path(
            "agentrig-out"
        ),
        as_json: Annotated[bool, typer.Option("--json", help="Print the merged report.json to stdout.")] = False,
        allow_partial: Annotated[
            bool, typer.Option("--allow-partial", help="Merge an incomplete set of shards (some K of N missing).")
        ] = False,
    ) -> None:
        from agentrig.runtime.reports.merge_checks import describe_partial
        from agentrig.runtime.reports.report_files import summary_line
        from agentrig.runtime.runfolder.jsonio import dumps
        from agentrig.runtime.suite.outputs.reports import append_step_summary, merge_reports
        from agentrig.runtime.suite.runner import exit_code_for

        report = merge_reports(directories, out, allow_partial=allow_partial)
        summary = report["summary"]
        append_step_summary(out)
        if as_json:
            sys.stdout.write(dumps(report, pretty=True).decode())
        human = sys.stderr if as_json else sys.stdout
        partial = f" (partial: {describe_partial(report['partial'])})" if report.get("partial") else ""
        human.write(f"merged {len(directories)} outputs into {out}{partial}\n")
        human.write(summary_line(summary) + "\n")
        raise typer.Exit(code=exit_code_for(summary, interrupted=bool(report.get("interrupted"))))
