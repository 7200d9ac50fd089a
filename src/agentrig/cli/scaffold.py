"""`agentrig scaffold SOURCES... -o FILE|DIR`: conversations agentrig reads become scenarios that replay them.

Thin: parse, call `runtime.scaffold.scaffold` (one file) or `scaffold_many` (several, a folder), print what was
written (a table for many). Only typer and the standard library are imported at module level; a source the
scenario cannot replay is an `Unreplayable` error (exit 2, nothing written), a row of the table for many.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from agentrig.runtime.scaffold import Row


class ToolCheck(StrEnum):
    """What a scenario with the user's agent checks of its real tools."""

    results = "results"
    calls = "calls"


class ToolResultContents(StrEnum):
    """What the written files hold of each tool result's content."""

    keep = "keep"
    mask = "mask"
    drop = "drop"


HELP = """Write scenarios that replay recorded conversations offline: `prompt --session` files, pydantic-ai dumps
of any supported version, tinyagent messages, tunacode sessions, canonical histories, recordings (`run --record
DIR`), folders of them, and run folders (`run --out DIR`: each scenarios/NAME/ is one conversation).

Each user message becomes a turn; each model response a scripted step (text, thought, tool calls with their ids
and arguments, the recorded usage); the host's answers to paused calls become `approvals:` / `deferred_results:`
turns. The expectations come from the source: the tool calls of each turn, the output, the usage, the
invariants and the golden canonical history (golden/NAME.json beside the scenario).

Without --agent the tools are YAML tools answering what the source recorded, matched by arguments. With
--agent module:attribute your agent's real tools run (with --deps module:attribute building its deps), and the
scenario checks that they return what the source recorded (--check calls: only that they are called as
recorded), and that the model received the same instructions and system prompt.

One SOURCE file and -o FILE.yaml: that scenario. Several sources, a folder, or -o DIR: one scenario per
conversation in DIR (unique names, identical conversations once) and a table of what was scaffolded and what
was refused, and why. A source holding something a scenario cannot replay is refused with the message and the
reason (exit 2). Existing files are replaced only with --force, and only files scaffold wrote and nobody
changed since. See docs/scaffold.md.

Exit codes: 0 written, 2 a source cannot be read or replayed (with several, the worst row), FILE exists (without
--force) or is not a regular file, 3 the disk is full (nothing is written, no folder left behind).

\b
Examples:
    agentrig scaffold chat.json -o regressions/refund.yaml
    agentrig scaffold out/ -o replays/ --agent myapp.agents:support --deps myapp.testing:deps"""


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("scaffold", help=HELP, short_help="Turn recorded conversations into replay scenarios.")
    def scaffold(  # pyright: ignore[reportUnusedFunction]
        sources: Annotated[
            list[Path],
            typer.Argument(
                metavar="SOURCE", help="Sessions, histories, dumps, recordings, folders of them, or run folders."
            ),
        ],
        output: Annotated[
            Path,
            typer.Option(
                "--output", "-o", metavar="PATH", help="The scenario file to write (one source), or the folder."
            ),
        ],
        name: Annotated[
            str | None,
            typer.Option("--name", "-n", metavar="NAME", help="The scenario's name (default: from SOURCE's name)."),
        ] = None,
        agent: Annotated[
            str | None,
            typer.Option(
                "--agent",
                metavar="MODULE:ATTR",
                help="Your agent as module:attribute: its real tools run instead of YAML tools.",
            ),
        ] = None,
        deps: Annotated[
            str | None,
            typer.Option(
                "--deps",
                metavar="MODULE:ATTR",
                help="With --agent: module:attribute building the agent's deps (scenario deps:).",
            ),
        ] = None,
        check: Annotated[
            ToolCheck,
            typer.Option(
                "--check",
                metavar="results|calls",
                help="With --agent: compare the tools' results with the source, or only their calls.",
            ),
        ] = ToolCheck.results,
        tool_results: Annotated[
            ToolResultContents,
            typer.Option(
                "--tool-results",
                metavar="keep|mask|drop",
                help="keep the tool results' contents, mask them ([MASKED]) or drop them (null) in the files.",
            ),
        ] = ToolResultContents.keep,
        last_turns: Annotated[
            int | None,
            typer.Option(
                "--last-turns",
                metavar="N",
                help="Script only the last N turns; the conversation before them is resumed from"
                " (initial_history, written to histories/NAME.json beside FILE). A long session replays faster.",
            ),
        ] = None,
        force: Annotated[
            bool, typer.Option("--force", help="Replace files scaffold wrote earlier (never a file it did not write).")
        ] = False,
    ) -> None:
        from agentrig.runtime.scaffold import ManyOptions, ScaffoldOptions, scaffold_many
        from agentrig.runtime.scaffold import scaffold as write_scenario

        common = {
            "name": name,
            "agent": agent,
            "deps": deps,
            "check": check.value,
            "tool_results": tool_results.value,
            "force": force,
            "last_turns": last_turns,
        }
        if _one_file(sources, output):
            result = write_scenario(ScaffoldOptions(source=sources[0], output=output, **common))  # pyright: ignore[reportArgumentType]
            for warning in result.warnings:
                typer.echo(f"agentrig: warning: {sources[0]}: {warning}", err=True)
            typer.echo(
                f"wrote {result.scenario_path} (scenario {result.name}: {result.turns} turn(s), {result.steps}"
                f" step(s), {len(result.tools)} tool(s), from {result.messages} messages)"
            )
            if result.golden_path is not None:
                typer.echo(f"wrote {result.golden_path}")
            return
        rows = scaffold_many(ManyOptions(sources=tuple(sources), directory=output, **common))  # pyright: ignore[reportArgumentType]
        for row in rows:
            for warning in row.warnings:
                typer.echo(f"agentrig: warning: {row.source}: {warning}", err=True)
        typer.echo(_table(rows), nl=False)
        raise typer.Exit(code=max((row.exit_code for row in rows), default=0))


def _one_file(sources: list[Path], output: Path) -> bool:
    """One source file written to a named scenario file (`-o x.yaml`); anything else fills a folder."""
    return (
        len(sources) == 1
        and not sources[0].is_dir()
        and not output.is_dir()
        and output.suffix.lower() in (".yaml", ".yml")
    )


def _table(rows: list[Row]) -> str:
    """One line per source (what it became, and why when refused), then the counts."""
    lines = [f"{'source':<50} result"]
    for row in rows:
        what = {
            "scaffolded": f"scaffolded {row.scenario}",
            "duplicate": f"duplicate: {row.detail}",
            "refused": f"refused: {row.detail}",
        }[row.outcome]
        lines.append(f"{row.source!s:<50} {what}")
    counts = {
        outcome: sum(1 for row in rows if row.outcome == outcome) for outcome in ("scaffolded", "duplicate", "refused")
    }
    lines.append(f"{counts['scaffolded']} scaffolded, {counts['duplicate']} duplicate(s), {counts['refused']} refused")
    return "\n".join(lines) + "\n"
