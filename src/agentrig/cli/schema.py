"""`agentrig schema`: print (or write) the JSON Schema of the scenario format, for editors.

Imports only typer and the standard library at module level; the command prints the schema file stored with
the package (generated from the models by scripts/gen_scenario_docs.py), so it imports neither the models nor
pydantic-ai.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

HELP = """Print the JSON Schema (draft 2020-12) of scenario files, for editor completion and checks.

Example, for editors using yaml-language-server (VS Code YAML, Neovim, Helix):

    agentrig schema -o scenario.schema.json

then start each scenario file with

    # yaml-language-server: $schema=../scenario.schema.json

-o writes atomically; /dev/stdout, /dev/null or a FIFO is written through, never replaced; a dangling link, a
block device or a socket is refused.

Exit codes: 0 written, 2 -o cannot be written there, 3 the disk is full (the file -o names is unchanged).
"""


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("schema", help=HELP)
    def schema(  # pyright: ignore[reportUnusedFunction]
        output: Annotated[
            Path | None,
            typer.Option(
                "--output", "-o", metavar="FILE", help="Write the schema to this file (atomically) instead of stdout."
            ),
        ] = None,
    ) -> None:
        from agentrig.errors import UsageError
        from agentrig.runtime.runfolder.jsonio import write_atomic
        from agentrig.scenarios.schema import STORED_SCHEMA_PATH

        document = STORED_SCHEMA_PATH.read_bytes()
        if output is None:
            typer.echo(document.decode(), nl=False)
            return
        # A file error (exit 2), as `convert -o` says it: what to write is the user's choice, not infrastructure.
        if output.is_dir():
            raise UsageError(f"-o {output}: is a directory; name the file to write")
        try:
            write_atomic(output, document)
        except OSError as error:
            raise UsageError(f"-o {output}: cannot write there ({error.strerror or error})") from None
        typer.echo(f"wrote {output}", err=True)
