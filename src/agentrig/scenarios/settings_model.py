"""The scenario format's run settings: limits, retries, timeout, pruning, compaction."""

from __future__ import annotations

from pydantic import Field, model_validator

from agentrig.scenarios._strict import Strict as _Strict
from agentrig.scenarios.provider_settings import ProviderSettings

__all__ = ["CompactionSettings", "Settings"]


class CompactionSettings(_Strict):
    """Context compaction for long sessions (see docs/compaction.md)."""

    context_window: int = Field(ge=1)
    """The model's context window in tokens (`max_tokens` of the controller)."""
    reserve: int = Field(default=0, ge=0)
    """Tokens kept free for the model's answer."""
    keep_recent: int = Field(default=0, ge=0)
    """Tokens of recent history never summarized."""

    @model_validator(mode="after")
    def _leaves_room(self) -> CompactionSettings:
        # The threshold is context_window - reserve - keep_recent: it must leave room for a history.
        if self.context_window <= self.reserve + self.keep_recent:
            raise ValueError(
                f"context_window ({self.context_window}) must exceed reserve ({self.reserve}) + keep_recent "
                f"({self.keep_recent})"
            )
        return self


class Settings(_Strict):
    """Run settings that change behaviour."""

    max_iterations: int = Field(default=20, ge=1)
    """Model requests per turn before the run is stopped."""
    tool_retries: int = Field(default=1, ge=0)
    """Retries allowed per tool (pydantic-ai's default is 1). Given for a user's agent, it replaces the agent's
    own budget for the scenario's runs (`retries=` of the run); a tool's own `retries=` still wins."""
    output_retries: int = Field(default=1, ge=0)
    """Retries allowed when the output fails validation; given for a user's agent, it replaces the agent's own."""
    timeout: float | None = Field(default=None, gt=0)
    """Seconds per turn before the run is interrupted (a `timeout` error). It bounds the whole scenario too: past a
    timeout per turn plus one more (at least 5 s) for its agent and deps, a scenario that blocks is abandoned."""
    request_limit: int | None = Field(default=None, ge=1)
    """pydantic-ai `UsageLimits.request_limit`: model requests per turn before a `usage_limit` error."""
    tool_calls_limit: int | None = Field(default=None, ge=0)
    """pydantic-ai `UsageLimits.tool_calls_limit`: tool calls per turn before a `usage_limit` error."""
    input_tokens_limit: int | None = Field(default=None, ge=0)
    """pydantic-ai `UsageLimits.input_tokens_limit`."""
    output_tokens_limit: int | None = Field(default=None, ge=0)
    """pydantic-ai `UsageLimits.output_tokens_limit`."""
    total_tokens_limit: int | None = Field(default=None, ge=0)
    """pydantic-ai `UsageLimits.total_tokens_limit`."""
    prune_keep_recent_tool_outputs: int | None = Field(default=None, ge=0)
    """Prune the content of all but the N most recent tool returns before each request."""
    compaction: CompactionSettings | None = None
    """Compact the history when it nears the context window. Omitted: no compaction."""
    prepare_history: bool = True
    """agentrig's own history preparation before each run (the loop contract's step 3: dangling calls and
    orphaned results removed, consecutive requests merged, a trailing request dropped, old tool outputs pruned).
    `false` hands the stored history to pydantic-ai as it is, so a scenario proves what pydantic-ai's own run
    pipeline does with a damaged history (its public cleanup closes dangling calls as interrupted and drops
    orphaned results); `expect_input` shows what the model received. What a turn stores is still finalized
    (an interrupted turn's `[INTERRUPTED]`, calls an error left open closed)."""
    pass_rate: float | None = Field(default=None, ge=0, le=1)
    """The fraction of its runs under `agentrig run --repeat N` the scenario must pass, 0 to 1 (omitted: `--pass-rate`,
    else 1, every run). A real model is not deterministic: `pass_rate: 0.8` with `--repeat 10` accepts 2 failures."""
    provider: ProviderSettings | None = None
    """Retries and the request timeout against a real model (`--model`); omitted: the flags of `agentrig run`."""
