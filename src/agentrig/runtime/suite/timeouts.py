"""How long a scenario's run may take (`sequential` stops it past that). Standard library only: the `-j N`
forkserver's import list and the pytest controller's compute it without loading the runner."""

from __future__ import annotations

__all__ = ["SETUP_FLOOR_S", "budget_of"]

SETUP_FLOOR_S = 5.0
"""The least a scenario with a timeout gets for loading its agent and building and closing its deps."""


def budget_of(timeout: float | None, turns: int) -> float | None:
    """Seconds a scenario of `turns` turns with `timeout` as its `settings.timeout` may take: the timeout per turn,
    plus one more timeout (at least `SETUP_FLOOR_S`) for loading its agent and building and closing its deps; None
    without a timeout."""
    if timeout is None:
        return None
    return timeout * turns + max(timeout, SETUP_FLOOR_S)
