"""`agentrig run`: NOT YET IMPLEMENTED (placeholder while the verb is being built)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("run", help="(not implemented yet)")
    def run() -> None:  # pyright: ignore[reportUnusedFunction]
        raise NotImplementedError("agentrig run")
