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
    tinyagent = "tinyagent"


HELP = """Convert a history file: a pydantic-ai JSON dump of any supported version, a legacy dict history,
tinyagent messages, a session file (agentrig's or tunacode's) or a canonical history. Of a session file
only the messages are converted (its thoughts and usage are not part of a history), except with --to tinyagent.

--to canonical (the default) writes the canonical history ({"format": "agentrig.history/1", "messages": [...]}).
--to pydantic-ai writes a dump that the installed pydantic-ai loads with ModelMessagesTypeAdapter.validate_json.
--to tinyagent writes a list of tinyagent messages; from a session file (or with --session) a whole session
file that tunacode's load_session accepts.
Output goes to stdout unless -o is given; -o writes atomically and never overwrites the input file.
-o /dev/stdout, /dev/null or a FIFO is written through, never replaced; a dangling link, a block device or a
socket is refused.

Exit codes: 0 converted, 2 the file cannot be read or -o cannot be written there, 3 the disk is full (the
file -o names is unchanged)."""


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("convert", help=HELP, short_help="Convert pydantic-ai dumps, legacy and session files.")
    def convert(  # pyright: ignore[reportUnusedFunction]
        file: Annotated[Path, typer.Argument(metavar="FILE", help="The history, session or pydantic-ai dump to read.")],
        to: Annotated[
            TargetFormat, typer.Option("--to", metavar="canonical|pydantic-ai|tinyagent", help="The output form.")
        ] = TargetFormat.canonical,
        output: Annotated[
            Path | None,
            typer.Option("--output", "-o", metavar="FILE", help="Write here (atomically) instead of stdout."),
        ] = None,
        session: Annotated[
            bool, typer.Option("--session", help="With --to tinyagent: write a tunacode session file.")
        ] = False,
    ) -> None:
        from agentrig.errors import UsageError
        from agentrig.runtime.history.history_files import read_history_noting_fields
        from agentrig.runtime.runfolder import jsonio

        if output is not None and _same_file(file, output):
            raise UsageError(f"{output}: refusing to overwrite the input file; choose another output path")
        if output is not None and output.is_dir():
            raise UsageError(f"-o {output}: is a directory; name the file to write")
        from agentrig.runtime.history.redaction import dumps_redacted, redact_json_bytes

        if session and to is not TargetFormat.tinyagent:
            raise UsageError("--session needs --to tinyagent")
        # A history may quote a key (a tool that echoed the environment): the copy never carries it on.
        history, warnings = read_history_noting_fields(file)
        for warning in warnings:
            typer.echo(f"agentrig: warning: {file}: {warning}", err=True)
        if to is TargetFormat.tinyagent:
            from agentrig.runtime.history.tinyagent_export import file_to_tinyagent

            data = redact_json_bytes(file_to_tinyagent(file, session=session), pretty=True)
        elif to is TargetFormat.canonical:
            from agentrig.runtime.history.wire import history_to_json

            data = dumps_redacted(history_to_json(history), pretty=True)
        else:
            from agentrig.runtime.models.conversion import dump_pydantic_ai_json

            data = redact_json_bytes(dump_pydantic_ai_json(history, pretty=True, source=file), pretty=True)
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
