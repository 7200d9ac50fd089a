"""A turn's timeout, said in the user's words, and told apart from a provider that did not answer.

A turn's time limit is the scenario's `settings.timeout`, or `--timeout` of `agentrig run`, `agentrig prompt` and
the pytest plugin when the scenario sets none. The front end that applied its flag says so here (`timeout_flag`),
and the engines' message names what the user wrote: `the turn exceeded --timeout 5s`, not a setting they never set.

When the turn's time runs out while a request waits for the provider's answer, the provider did not answer: that is
`provider_timeout` (a provider error, exit code 3, as in `agentrig prompt`), naming the request and how long it
waited, not `timeout` (the agent's own time, a failure). Framework-free: both engines use it.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar

from agentrig.runtime.history.run_records import RunError
from agentrig.runtime.models.attempt_log import current_attempt_log

__all__ = ["describe_turn_timeout", "timeout_flag", "turn_timeout_error"]

_flag: ContextVar[str | None] = ContextVar("agentrig_timeout_flag", default=None)


@contextmanager
def timeout_flag(flag: str | None) -> Generator[None]:
    """In this context the turn's timeout came from the command line's `flag` (None: from the scenario)."""
    token = _flag.set(flag)
    try:
        yield
    finally:
        _flag.reset(token)


def describe_turn_timeout(seconds: float | None) -> str:
    """`--timeout 5s` when the flag set it, else `settings.timeout = 5.0s`."""
    flag = _flag.get()
    return f"{flag} {seconds:g}s" if flag is not None and seconds is not None else f"settings.timeout = {seconds}s"


def turn_timeout_error(seconds: float | None) -> RunError:
    """The error of a turn whose time ran out: `provider_timeout` when a request was waiting for its answer then."""
    log = current_attempt_log()
    waiting = log.waiting_request() if log is not None else None
    if waiting is not None:
        request, waited = waiting
        return RunError(
            kind="provider_timeout",
            message=f"{request.describe()} had not been answered after {waited:.1f}s when the turn's "
            f"{describe_turn_timeout(seconds)} ran out",
        )
    return RunError(kind="timeout", message=f"the turn exceeded {describe_turn_timeout(seconds)}")
