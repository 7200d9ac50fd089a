"""The scenario format's YAML tools (self-contained agents): canned outcomes instead of real code."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from agentrig.scenarios._strict import Strict as _Strict

JsonValue = Any

__all__ = ["ToolResult", "ToolSpec"]

# --------------------------------------------------------------------------------------------
# Tools declared in YAML (self-contained agents)
# --------------------------------------------------------------------------------------------


class ToolResult(_Strict):
    """One canned outcome of a YAML tool. Rules are tried in order; the first that matches the call is used.
    Exactly one of `return`, `retry`, `fail` or `defer` says what happens; `delay` may be added to any."""

    when: dict[str, JsonValue] | None = None
    """Match only calls whose args contain these key/values (subset match)."""
    call: int | None = Field(default=None, ge=1)
    """Match only the Nth call of this tool in the scenario (1-based)."""
    return_: JsonValue = Field(default=None, alias="return")
    """The value the tool returns."""
    retry: str | None = None
    """Raise `ModelRetry` with this message: the model is asked to try again."""
    fail: str | None = None
    """Raise a non-retryable error with this message: the run fails with a tool error."""
    defer: bool = False
    """Defer the call to the host (`CallDeferred`); the turn ends with pending calls."""
    delay: float = Field(default=0.0, ge=0)
    """Seconds to wait before the outcome (exercises timeouts, parallelism and abort)."""

    @model_validator(mode="after")
    def _one_outcome(self) -> ToolResult:
        chosen = [
            name
            for name, present in (
                ("return", "return_" in self.model_fields_set),
                ("retry", self.retry is not None),
                ("fail", self.fail is not None),
                ("defer", self.defer),
            )
            if present
        ]
        if len(chosen) != 1:
            raise ValueError(f"a tool result needs exactly one of return, retry, fail, defer (got {chosen or 'none'})")
        return self


class ToolSpec(_Strict):
    """A tool of a self-contained agent, with canned outcomes instead of real code."""

    description: str = ""
    """What the tool does, as the model sees it."""
    parameters: dict[str, JsonValue] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON Schema of the tool's arguments."""
    results: tuple[ToolResult, ...] = ()
    """Canned outcomes, tried in order; a call no rule matches fails the scenario with a clear message."""
    retries: int | None = Field(default=None, ge=0)
    """How many retries this tool allows (pydantic-ai's per-tool `retries`); default: the scenario setting."""
    sequential: bool = False
    """Run this tool alone, never in parallel with others."""
