"""`agentrig validate`: NOT YET IMPLEMENTED (placeholder while the verb is being built)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("validate", help="(not implemented yet)")
    def validate() -> None:  # pyright: ignore[reportUnusedFunction]
        raise NotImplementedError("agentrig validate")
