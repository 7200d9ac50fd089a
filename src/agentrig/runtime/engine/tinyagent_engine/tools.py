"""A scenario's YAML tools as tinyagent `AgentTool`s, with the outcomes of the pydantic-ai engine's rules.

The rules (`tool_rules`) are shared; where tinyagent has no word for an outcome, the tool tells the engine
through `ToolOutcomes`, and the engine writes the canonical part pydantic-ai would have written:

- `retry`: tinyagent has only error results; the call's id is remembered and its error result becomes a
  retry prompt in the canonical history (and in what the model is shown);
- `fail`: the loop contract ends the turn (`tool_failed`); tinyagent hands the error to the model, so the
  engine's `after_tool_call` hook ends the loop after the batch;
- `outcome: failed`: an error result the model reads, and the loop goes on (pydantic-ai's `ToolFailed`);
- `outcome: denied`: the message as the result; the call's id is remembered and its return becomes `denied`;
- `abort`: the engine is asked to stop the run as an interruption (`ToolOutcomes.request_abort`), and the tool
  waits for tinyagent's abort signal;
- arguments that do not fit the tool's schema: the engine's `before_tool_call` answers them with a retry
  (pydantic's error details, `argument_errors`), as pydantic-ai does, and the rules see the validated arguments;
- `defer`: the call is left to the host; tinyagent answers every call in the turn it was made, so the
  engine drops the placeholder result and ends the run with the call open;
- a structured `return`: the model reads its JSON text (tinyagent results are text blocks), the history
  keeps the value.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from pydantic_core import SchemaValidator
from tinyagent.agent_types import AgentTool, AgentToolResult, TextContent

from agentrig.runtime.engine.tool_rules import ToolCallCounts, describe_args, matching_result
from agentrig.scenarios.json_schema_validation import schema_validator
from agentrig.scenarios.tool_model import ToolSpec

__all__ = [
    "DEFERRED_PLACEHOLDER",
    "RunAborted",
    "ToolFailed",
    "ToolOutcomes",
    "argument_errors",
    "wait_unless_aborted",
    "yaml_tools",
]

DEFERRED_PLACEHOLDER = "deferred to the host"
"""The text of the placeholder result a deferred call gets inside tinyagent's loop (never kept)."""


class ToolFailed(Exception):
    """A YAML `fail` rule, or no rule matching: the loop contract ends the turn."""


class _ToolRetry(Exception):
    """A YAML `retry` rule: the model is told why and may try again."""


class RunAborted(Exception):
    """tinyagent's abort signal was set while the tool waited: the run is being stopped."""


class _FailedResult(Exception):
    """An `outcome: failed` rule: an error result the model reads; the run goes on."""


@dataclass(slots=True)
class ToolOutcomes:
    """What the YAML tools did that tinyagent's messages do not say (per scenario: ids are unique)."""

    retried: set[str] = field(default_factory=set[str])
    denied: set[str] = field(default_factory=set[str])
    """Calls answered by an `outcome: denied` rule (their return is `denied`, as pydantic-ai's `ToolDenied`)."""
    validators: dict[str, SchemaValidator] = field(default_factory=dict[str, SchemaValidator])
    """Each YAML tool's argument validator (tools with `validate_args: false` have none)."""
    request_abort: Callable[[], None] | None = None
    """Set by the engine for each run: stop it as an interruption (an `abort` rule)."""
    aborted: set[str] = field(default_factory=set[str])
    """Calls of this run whose tool was still running when the run was stopped (their result is no result:
    pydantic-ai cancels such a call, and the run's end closes it as interrupted)."""
    returned: dict[str, Any] = field(default_factory=dict[str, Any])
    """Structured `return` values, by call id (the model read their JSON text)."""
    retry_details: dict[str, Any] = field(default_factory=dict[str, Any])
    """A retry prompt's content when it is not the error text (validation errors of malformed arguments)."""
    deferred: set[str] = field(default_factory=set[str])
    failure: tuple[str, str] | None = None
    """(tool_call_id, message) of this run's `fail`, or of a call no rule matched (`script_mismatch`)."""
    mismatch: bool = False
    max_retries: dict[str, int] = field(default_factory=dict[str, int])
    """Each YAML tool's retry budget (its `retries`, else `settings.tool_retries`)."""
    retries_before: dict[str, int] = field(default_factory=dict[str, int])
    """pydantic-ai's count: the steps in a row, up to the current one, in which the tool was retried."""
    retried_in_step: set[str] = field(default_factory=set[str])
    exhausted: tuple[str, int] | None = None
    """(tool name, budget) of a retry over the budget: the run ends (`unexpected_model_behavior`)."""

    def begin_run(self) -> None:
        self.failure, self.mismatch, self.exhausted = None, False, None
        self.retries_before, self.retried_in_step = {}, set()
        self.aborted = set()  # an earlier run's aborted calls are settled in the history by now

    def next_step(self) -> None:
        """A new model response: tools retried in the step before carry their count on, the others start over."""
        self.retries_before = {name: self.retries_before.get(name, 0) + 1 for name in self.retried_in_step}
        self.retried_in_step = set()

    def may_retry(self, tool_name: str) -> bool:
        """Whether the tool may ask the model to retry once more (pydantic-ai's per-tool `max_retries`)."""
        self.retried_in_step.add(tool_name)
        budget = self.max_retries.get(tool_name, 1)
        if self.retries_before.get(tool_name, 0) >= budget:
            self.exhausted = self.exhausted or (tool_name, budget)
            return False
        return True


async def wait_unless_aborted(seconds: float, signal: asyncio.Event | None) -> bool:
    """Wait `seconds` (a scripted delay), or less when tinyagent's abort signal is set meanwhile; True if it was."""
    if signal is None:
        await asyncio.sleep(seconds)
        return False
    try:
        await asyncio.wait_for(signal.wait(), timeout=seconds)
    except TimeoutError:
        return False
    return True


def argument_errors(outcomes: ToolOutcomes, tool_name: str, arguments: dict[str, Any]) -> list[dict[str, Any]] | None:
    """pydantic's error details for arguments that do not fit the YAML tool's schema (None when they fit, or the
    tool validates nothing)."""
    validator = outcomes.validators.get(tool_name)
    if validator is None:
        return None
    try:
        validator.validate_python(arguments)
    except ValidationError as error:
        details = error.errors(include_url=False, include_context=False)
        return [{**detail, "loc": list(detail["loc"])} for detail in details]
    return None


def yaml_tools(
    specs: Mapping[str, ToolSpec], counts: ToolCallCounts, outcomes: ToolOutcomes, *, tool_retries: int
) -> list[AgentTool]:
    """One `AgentTool` per YAML tool, answering from its rules (`tool_retries`: the default retry budget)."""
    outcomes.max_retries.update(
        (name, spec.retries if spec.retries is not None else tool_retries) for name, spec in specs.items()
    )
    outcomes.validators.update(
        (name, schema_validator(spec.parameters)) for name, spec in specs.items() if spec.validate_args
    )

    def executor(name: str, spec: ToolSpec) -> Any:
        async def execute(tool_call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
            ordinal = counts.next_ordinal(name)
            validator = outcomes.validators.get(name)
            if validator is not None:  # the rules see what pydantic-ai's tool would get: defaults filled in
                args = validator.validate_python(args)
            result = matching_result(spec, args, ordinal)
            if result is None:
                message = f"tool {name!r} call #{ordinal} with args {describe_args(args)}: no result rule matches"
                outcomes.failure = outcomes.failure or (tool_call_id, message)
                outcomes.mismatch = True
                raise ToolFailed(message)
            if result.delay and await wait_unless_aborted(result.delay, signal):
                outcomes.aborted.add(tool_call_id)
                raise RunAborted("the run was stopped while the tool ran")
            if result.defer:
                outcomes.deferred.add(tool_call_id)
                return AgentToolResult(content=[TextContent(text=DEFERRED_PLACEHOLDER)])
            if result.abort:
                if outcomes.request_abort is not None:
                    outcomes.request_abort()
                await wait_unless_aborted(3600, signal)
                outcomes.aborted.add(tool_call_id)
                raise RunAborted("the run was stopped while the tool ran")
            if result.retry is not None:
                if not outcomes.may_retry(name):
                    raise ToolFailed(f"Tool {name!r} exceeded max retries count of {outcomes.max_retries[name]}")
                outcomes.retried.add(tool_call_id)
                raise _ToolRetry(result.retry)
            if result.fail is not None:
                message = (
                    f"tool {name!r} (call {tool_call_id}) raised {result.raises}: {result.fail}"  # as pydantic-ai's
                    if result.raises is not None
                    else f"tool {name!r} call #{ordinal} failed: {result.fail}"
                )
                outcomes.failure = outcomes.failure or (tool_call_id, message)
                raise ToolFailed(message)
            value = result.return_
            if result.outcome == "failed":
                raise _FailedResult(str(value))
            if result.outcome == "denied":
                outcomes.denied.add(tool_call_id)
            if isinstance(value, str):
                return AgentToolResult(content=[TextContent(text=value)])
            outcomes.returned[tool_call_id] = value
            return AgentToolResult(content=[TextContent(text=json.dumps(value))])

        return execute

    return [
        AgentTool(
            name=name,
            description=spec.description,
            parameters=dict(spec.parameters),
            label=name,
            execute=executor(name, spec),
        )
        for name, spec in specs.items()
    ]
