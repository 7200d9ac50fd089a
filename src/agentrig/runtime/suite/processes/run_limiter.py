"""The run's one limiter (docs/providers.md): built when the run talks to a provider, in this process for `-j 1` and
the pytest plugin, served to the workers for `-j N` (`models.limiter_service`), closed when the run ends."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import replace

from agentrig.runtime.models.limiter import Limiter, LimiterCore, LocalLimiter
from agentrig.runtime.models.limiter_service import LimiterService, RemoteLimiter
from agentrig.runtime.suite.options import RunOptions

__all__ = ["run_limiter", "session_limiter", "worker_limiter"]


@contextmanager
def run_limiter(options: RunOptions) -> Generator[tuple[RunOptions, Limiter | None]]:
    """(options, limiter) for the run: with `-j N` the options carry the address the workers reach the limiter at,
    and this process gets none (its workers make the requests). Nothing for a run that sends no request."""
    if not options.provider_bound:
        yield options, None
        return
    core = LimiterCore(options.provider, max_cost_usd=options.max_cost)
    if options.jobs == 1:
        try:
            yield options, LocalLimiter(core)
        finally:
            core.close()
        return
    service = LimiterService(core)
    try:
        yield replace(options, limiter=service.address), None
    finally:
        service.close()


def worker_limiter(options: RunOptions) -> Limiter | None:
    """In a `-j N` worker: the run's limiter, reached over its socket."""
    return RemoteLimiter(options.limiter) if options.limiter is not None else None


def session_limiter(options: RunOptions) -> Limiter | None:
    """For a front end that runs scenarios one at a time (the pytest plugin, `agentrig.testing`): the limiter its
    options name (an xdist controller's), else one of its own; None when it sends no request."""
    if not options.provider_bound:
        return None
    return worker_limiter(options) or LocalLimiter(LimiterCore(options.provider))
