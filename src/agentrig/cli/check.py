"""`agentrig check`: NOT YET IMPLEMENTED (placeholder while the verb is being built)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("check", help="(not implemented yet)")
    def check() -> None:  # pyright: ignore[reportUnusedFunction]
        raise NotImplementedError("agentrig check")
