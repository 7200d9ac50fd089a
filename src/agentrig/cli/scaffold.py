"""`agentrig scaffold SOURCE -o FILE`: a conversation agentrig reads becomes a scenario that replays it offline.

Thin: parse, call `runtime.scaffold.scaffold`, print what was written. Only typer and the standard library are
imported at module level; a source the scenario cannot replay is an `Unreplayable` error (exit 2, nothing written).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class ToolCheck(StrEnum):
    """What a scenario with the user's agent checks of its real tools."""

    results = "results"
    calls = "calls"


class ToolResultContents(StrEnum):
    """What the written files hold of each tool result's content."""

    keep = "keep"
    mask = "mask"
    drop = "drop"


HELP = """Write a scenario that replays a recorded conversation offline: a `prompt --session` file, a pydantic-ai
dump of any supported version, tinyagent messages, a tunacode session, a canonical history or a recording
(`run --record DIR`).

Each user message becomes a turn; each model response a scripted step (text, thought, tool calls with their ids
and arguments, the recorded usage). The expectations come from the source: the tool calls of each turn, the
output, the usage, the invariants and the golden canonical history (written to golden/NAME.json beside FILE).

Without --agent the tools are YAML tools answering what the source recorded, matched by arguments. With
--agent module:attribute your agent's real tools run, and the scenario checks that they return what the source
recorded (--check calls: only that they are called as recorded).

A source holding something a scenario cannot replay is refused with the message and the reason (exit 2);
nothing is written then. The scenario, its golden and histories are written all or none. See docs/scaffold.md.

Exit codes: 0 written, 2 the source cannot be read or replayed, FILE exists (without --force) or is not a
regular file, 3 the disk is full (nothing is written, no folder left behind)."""


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("scaffold", help=HELP, short_help="Turn a recorded conversation into a replay scenario.")
    def scaffold(  # pyright: ignore[reportUnusedFunction]
        source: Annotated[Path, typer.Argument(help="The session, history, dump or recording to replay.")],
        output: Annotated[Path, typer.Option("--output", "-o", help="The scenario file to write.")],
        name: Annotated[
            str | None, typer.Option("--name", "-n", help="The scenario's name (default: from SOURCE's name).")
        ] = None,
        agent: Annotated[
            str | None,
            typer.Option("--agent", help="Your agent as module:attribute: its real tools run instead of YAML tools."),
        ] = None,
        check: Annotated[
            ToolCheck,
            typer.Option(
                "--check", help="With --agent: compare the tools' results with the source, or only their calls."
            ),
        ] = ToolCheck.results,
        tool_results: Annotated[
            ToolResultContents,
            typer.Option(
                "--tool-results",
                help="keep the tool results' contents, mask them ([MASKED]) or drop them (null) in the files.",
            ),
        ] = ToolResultContents.keep,
        last_turns: Annotated[
            int | None,
            typer.Option(
                "--last-turns",
                help="Script only the last N turns; the conversation before them is resumed from"
                " (initial_history, written to histories/NAME.json beside FILE). A long session replays faster.",
            ),
        ] = None,
        force: Annotated[bool, typer.Option("--force", help="Overwrite an existing scenario file.")] = False,
    ) -> None:
        from agentrig.runtime.scaffold import ScaffoldOptions
        from agentrig.runtime.scaffold import scaffold as write_scenario

        result = write_scenario(
            ScaffoldOptions(
                source=source,
                output=output,
                name=name,
                agent=agent,
                check=check.value,
                tool_results=tool_results.value,
                force=force,
                last_turns=last_turns,
            )
        )
        typer.echo(
            f"wrote {result.scenario_path} (scenario {result.name}: {result.turns} turn(s), {result.steps} step(s),"
            f" {len(result.tools)} tool(s), from {result.messages} messages)"
        )
        if result.golden_path is not None:
            typer.echo(f"wrote {result.golden_path}")
