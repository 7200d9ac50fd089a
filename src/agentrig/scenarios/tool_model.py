"""The scenario format's YAML tools (self-contained agents): canned outcomes instead of real code."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from agentrig.scenarios._strict import JsonValue
from agentrig.scenarios._strict import Strict as _Strict
from agentrig.scenarios.json_schema_validation import check_json_schema

__all__ = ["ToolOutcome", "ToolResult", "ToolSpec"]

ToolOutcome = Literal["success", "failed", "denied"]
"""How a returned result ends the call, as its tool-return part records it."""

# --------------------------------------------------------------------------------------------
# Tools declared in YAML (self-contained agents)
# --------------------------------------------------------------------------------------------


class ToolResult(_Strict):
    """One canned outcome of a YAML tool. Rules are tried in order; the first that matches the call is used.
    Exactly one of `return`, `retry`, `fail`, `defer` or `abort` says what happens (`ask_approval` alone: return
    null once approved); `delay` may be added to any."""

    when: dict[str, JsonValue] | None = None
    """Match only calls whose args contain these key/values (subset match)."""
    call: int | None = Field(default=None, ge=1)
    """Match only the Nth call of this tool in the scenario (1-based)."""
    return_: JsonValue = Field(default=None, alias="return")
    """The value the tool returns."""
    outcome: ToolOutcome = "success"
    """How the returned call ends: `failed` (pydantic-ai's `ToolFailed`: the model reads `return` as the failure
    and the run goes on, unlike `fail`) or `denied` (the tool answers `ToolDenied(return)`); `return` is then the
    message, a string."""
    retry: str | None = None
    """Raise `ModelRetry` with this message: the model is asked to try again."""
    fail: str | None = None
    """Raise a non-retryable error with this message: the run fails with a tool error."""
    raises: str | None = Field(default=None, pattern=r"^[A-Za-z_]\w*$")
    """With `fail`: the name of the exception class the tool raises, as a real tool's would (e.g. `ValueError`); the
    failure then reads `tool 'NAME' (call ID) raised CLASS: MESSAGE`, as a real tool's does (without it:
    `tool 'NAME' call #N failed: MESSAGE`). `agentrig scaffold` writes it to replay a real tool's failure."""
    defer: bool = False
    """Defer the call to the host (`CallDeferred`); the turn ends with pending calls."""
    ask_approval: bool = False
    """The call asks the host for approval first (pydantic-ai's `ApprovalRequired`, as a tool with
    `requires_approval=True`): the turn ends with it pending, and the next turn's `approvals` decide it. Approved,
    the tool runs and this rule's outcome applies (the call keeps its number); denied, the tool never runs."""
    abort: bool = False
    """Cancel the run while the tool runs, as Ctrl-C would: the call is closed as `interrupted` and the turn ends
    with an `[INTERRUPTED]` response (expect it with `interrupted: true`)."""
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
                ("abort", self.abort),
            )
            if present
        ]
        if self.ask_approval and (self.defer or self.abort):
            raise ValueError("ask_approval runs the tool once approved: not with defer or abort")
        if self.ask_approval and not chosen:
            return self  # approved, the tool returns null
        if len(chosen) != 1:
            raise ValueError(
                f"a tool result needs exactly one of return, retry, fail, defer, abort (got {chosen or 'none'})"
            )
        if self.outcome != "success" and not (chosen == ["return"] and isinstance(self.return_, str)):
            raise ValueError(f"outcome {self.outcome} needs `return` with the message, a string")
        if self.raises is not None and chosen != ["fail"]:
            raise ValueError("raises names the exception a `fail` raises: give fail too")
        return self


class ToolSpec(_Strict):
    """A tool of a self-contained agent, with canned outcomes instead of real code."""

    description: str = ""
    """What the tool does, as the model sees it."""
    parameters: dict[str, JsonValue] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON Schema of the tool's arguments. The model's arguments are validated against it as pydantic-ai validates
    a function's: arguments that do not fit get pydantic's error details as a retry prompt and never reach
    `results` (which see the validated arguments, defaults filled in)."""
    results: tuple[ToolResult, ...] = ()
    """Canned outcomes, tried in order; a call no rule matches fails the scenario with a clear message."""
    retries: int | None = Field(default=None, ge=0)
    """How many retries this tool allows (pydantic-ai's per-tool `retries`); default: the scenario setting."""
    sequential: bool = False
    """Run this tool alone, never in parallel with others."""
    validate_args: bool = True
    """Validate the arguments against `parameters` (off: every call reaches `results` as the model wrote it, as
    pydantic-ai's `Tool.from_schema` does)."""

    @model_validator(mode="after")
    def _readable_schema(self) -> ToolSpec:
        if self.validate_args:
            check_json_schema(self.parameters, field="parameters")
        return self
