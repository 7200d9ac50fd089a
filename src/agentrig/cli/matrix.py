"""`agentrig matrix`: NOT YET IMPLEMENTED (placeholder while the verb is being built)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("matrix", help="(not implemented yet)")
    def matrix() -> None:  # pyright: ignore[reportUnusedFunction]
        raise NotImplementedError("agentrig matrix")
