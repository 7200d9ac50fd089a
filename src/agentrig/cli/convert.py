"""`agentrig convert FILE`: any history form in, a canonical history or a pydantic-ai dump out.

Only typer and the standard library are imported here; the engine is imported inside the command, and
`--to canonical` never imports pydantic-ai at all.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class TargetFormat(StrEnum):
    """What `agentrig convert` writes."""

    canonical = "canonical"
    pydantic_ai = "pydantic-ai"


HELP = """Convert a history file: a pydantic-ai JSON dump of any supported version, a legacy dict history,
a session file or a canonical history. Of a session file only the messages are converted (its thoughts
and usage are not part of a history).

--to canonical (the default) writes the canonical history ({"format": "agentrig.history/1", "messages": [...]}).
--to pydantic-ai writes a dump that the installed pydantic-ai loads with ModelMessagesTypeAdapter.validate_json.
Output goes to stdout unless -o is given; -o writes atomically and never overwrites the input file."""


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("convert", help=HELP, short_help="Convert pydantic-ai dumps, legacy and session files.")
    def convert(  # pyright: ignore[reportUnusedFunction]
        file: Annotated[Path, typer.Argument(help="The history, session or pydantic-ai dump to read.")],
        to: Annotated[TargetFormat, typer.Option("--to", help="The output form.")] = TargetFormat.canonical,
        output: Annotated[
            Path | None, typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.")
        ] = None,
    ) -> None:
        from agentrig.errors import UsageError
        from agentrig.runtime.history import jsonio
        from agentrig.runtime.history.sessions import load_history_file

        if output is not None and _same_file(file, output):
            raise UsageError(f"{output}: refusing to overwrite the input file; choose another output path")
        if output is not None and output.is_dir():
            raise UsageError(f"-o {output}: is a directory; name the file to write")
        history = load_history_file(file)
        if to is TargetFormat.canonical:
            from agentrig.runtime.history.wire import dumps_history

            data = dumps_history(history, pretty=True)
        else:
            from agentrig.runtime.models.conversion import dump_pydantic_ai_json

            data = dump_pydantic_ai_json(history, pretty=True)
        if output is None:
            typer.echo(data, nl=False)  # bytes go to the binary stream untouched
        else:
            try:
                jsonio.write_atomic(output, data)
            except OSError as error:
                raise UsageError(f"-o {output}: cannot write there ({error.strerror or error})") from None


def _same_file(first: Path, second: Path) -> bool:
    """Whether two paths name the same file (also through symlinks and hard links)."""
    try:
        return os.path.samefile(first, second)
    except OSError:  # the output does not exist yet (or cannot be inspected): compare the resolved paths
        return first.resolve() == second.resolve()
