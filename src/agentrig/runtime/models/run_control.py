"""Cancellation of the run in progress: why it stopped, and the partial text to keep.

The orchestrator opens one `RunControl` per agent run (a context variable, so code running inside the run —
the scripted model's abort step, a tool, a user's hook — can reach it without a handle being threaded
through pydantic-ai). Cancelling goes through pydantic-ai's `CancellationToken` (2.38+), which cancels the
task driving the run; the run then raises `RunCancelled` carrying everything it completed.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

from pydantic_ai import CancellationToken

__all__ = ["RunControl", "current_run_control", "open_run_control", "request_abort"]

StopReason = Literal["abort", "timeout"]


@dataclass(slots=True, kw_only=True)
class RunControl:
    """The cancellation state of one agent run."""

    token: CancellationToken = field(default_factory=CancellationToken)
    """Passed to `agent.iter(cancellation_token=...)`."""
    reason: StopReason | None = None
    """Why the run was cancelled; None while it runs."""
    partial_text: str | None = None
    """Text the model had produced when it was aborted (kept in the `[INTERRUPTED]` response)."""
    where: str = ""
    """Where the stop was requested (e.g. `turn 2, step 1`), for messages."""

    def stop(self, reason: StopReason, *, partial_text: str | None = None, where: str = "") -> None:
        """Cancel the run; the first reason wins."""
        if self.reason is None:
            self.reason = reason
            self.partial_text = partial_text
            self.where = where
        self.token.cancel()


_current: ContextVar[RunControl | None] = ContextVar("agentrig_run_control", default=None)


def current_run_control() -> RunControl | None:
    """The control of the run in progress in this context, if any."""
    return _current.get()


@contextmanager
def open_run_control(control: RunControl) -> Generator[RunControl]:
    """Make `control` the current run's control for the duration of the block."""
    token = _current.set(control)
    try:
        yield control
    finally:
        _current.reset(token)


def request_abort(partial_text: str | None, *, where: str = "") -> None:
    """Abort the current run as Ctrl-C would, keeping `partial_text`. Outside a run this is an error."""
    control = _current.get()
    if control is None:
        raise RuntimeError(f"{where}: an abort step needs a run started by the RequestOrchestrator")
    control.stop("abort", partial_text=partial_text, where=where)
