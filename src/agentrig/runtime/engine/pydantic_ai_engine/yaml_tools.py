"""Tools declared in a scenario's YAML, turned into a pydantic-ai toolset with canned outcomes.

Each `ToolSpec` becomes a `Tool.from_schema` tool (the YAML JSON Schema is what the model sees) in the agent's
own toolset. `Tool.from_schema` validates nothing, so the tool's validator is replaced by one built from the
schema (`scenarios.json_schema_validation`, unless `validate_args: false`): pydantic-ai then answers arguments
that do not fit with the retry prompt a real function's arguments would get, and the rules see the validated
arguments. When the model calls a tool, its `results` rules are tried in order; the first rule whose `when` is a
subset of the arguments and whose `call` matches the call's ordinal is used:

    return  -> the value is the tool's result; with `outcome: failed` pydantic-ai's `ToolFailed(return)` (a
               failed result the model reads, the run goes on), with `outcome: denied` `ToolDenied(return)`
    retry   -> `ModelRetry(message)`: the model is asked to try again (counts against the tool's retries)
    fail    -> `ScriptedToolFailure`: a non-retryable error, the turn ends with `tool_failed`
    defer   -> `CallDeferred()`: the turn ends with the call pending (the agent's output type must allow
               `DeferredToolRequests`; `agents.py` arranges that)
    ask_approval -> `ApprovalRequired()` until the host approves the call (`approvals:`); approved, the rule's
               outcome, the call keeping its ordinal (`ToolCallCounts.asked_approval`)
    abort   -> the run is cancelled while the tool runs (`run_control.request_abort`, as an abort step)
    delay   -> sleep first (combines with any of the above)

A call no rule matches ends the turn with `script_mismatch`, naming the tool, the call number and the args.
Call ordinals count every call of a tool in the whole scenario (1-based). They live in `ToolCallCounts`,
passed as the run's `deps`, so a cached agent can serve many scenarios without sharing counts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pydantic_ai import ApprovalRequired, CallDeferred, ModelRetry, RunContext, Tool, ToolDenied
from pydantic_ai.exceptions import ToolFailed
from pydantic_core import SchemaValidator, core_schema

from agentrig.runtime.engine.tool_rules import ToolCallCounts, can_defer, describe_args, matching_result
from agentrig.runtime.models.run_control import request_abort
from agentrig.runtime.models.stops import ScriptedToolFailure, ScriptMismatch
from agentrig.scenarios.json_schema_validation import schema_validator
from agentrig.scenarios.model import ToolSpec

__all__ = ["ToolCallCounts", "build_tools", "can_defer", "matching_result", "tools_may_fail"]

ANY_OBJECT = SchemaValidator(core_schema.dict_schema())
"""The arguments of a tool that validates nothing else (`validate_args: false`): a JSON object."""


def _raised(class_name: str, message: str) -> Exception:
    """An exception of a class named `class_name`, as the real tool the scenario stands for raised."""
    return type(class_name, (Exception,), {"__module__": "builtins"})(message)


def _tool_function(name: str, spec: ToolSpec) -> Any:
    async def run_yaml_tool(ctx: RunContext[Any], **args: Any) -> Any:
        counts = ctx.deps if isinstance(ctx.deps, ToolCallCounts) else None
        if counts is None:
            raise ScriptMismatch(f"tool {name!r}: YAML tools need ToolCallCounts as the run's deps")
        ordinal = counts.next_ordinal(name, ctx.tool_call_id if ctx.tool_call_approved else None)
        result = matching_result(spec, args, ordinal)
        if result is None:
            raise ScriptMismatch(
                f"tool {name!r} call #{ordinal} with args {describe_args(args)}: no result rule matches"
            )
        if result.ask_approval and not ctx.tool_call_approved:
            if ctx.tool_call_id is not None:
                counts.asked_approval[ctx.tool_call_id] = ordinal
            raise ApprovalRequired()
        if result.delay:
            await asyncio.sleep(result.delay)
        if result.retry is not None:
            raise ModelRetry(result.retry)
        if result.fail is not None and result.raises is not None:
            raise _raised(result.raises, result.fail)  # named by the engine as a real tool's exception
        if result.fail is not None:
            raise ScriptedToolFailure(
                f"tool {name!r} call #{ordinal} failed: {result.fail}", tool_call_id=ctx.tool_call_id
            )
        if result.defer:
            raise CallDeferred()
        if result.abort:
            request_abort(None, where=f"tool {name!r} call #{ordinal}")
            await asyncio.Event().wait()  # never returns: the cancellation wakes this await
        if result.outcome == "failed":
            raise ToolFailed(str(result.return_))
        if result.outcome == "denied":
            return ToolDenied(str(result.return_))
        return result.return_

    run_yaml_tool.__name__ = name
    return run_yaml_tool


def tools_may_fail(tools: Mapping[str, ToolSpec]) -> bool:
    """Whether a call of one of these YAML tools can raise an exception of its own (not one of pydantic-ai's
    signals): a `fail` result, or a call no rule matches (a tool without a result that has neither `when` nor
    `call`). Without one, no run of them needs `HeldFailures` (held_failures.py), which costs every tool call and
    step of the run a capability's hooks."""
    return any(
        any(result.fail is not None for result in spec.results)
        or not any(result.when is None and result.call is None for result in spec.results)
        for spec in tools.values()
    )


def build_tools(tools: Mapping[str, ToolSpec]) -> list[Tool[Any]]:
    """Every YAML tool as a pydantic-ai tool, in the order they are declared.

    They go into the agent's own function toolset (`Agent(tools=...)`), not a toolset of their own: with a second
    toolset, pydantic-ai's combined toolset gathers over both at every step (`for_run_step`, `get_tools`, the
    instructions), each gather a task group with a task per toolset, which cost a self-contained scenario about 4%
    of its CPU time (bench/bench_per_scenario.py --profile: the event loop's share fell from 42 to 30 ms)."""
    built: list[Tool[Any]] = []
    for name, spec in tools.items():
        tool: Tool[Any] = Tool.from_schema(
            _tool_function(name, spec),
            name=name,
            description=spec.description or None,
            json_schema=dict(spec.parameters),
            takes_ctx=True,
            sequential=spec.sequential,
        )
        tool.max_retries = spec.retries  # None: the agent's `retries['tools']` (from_schema has no such argument)
        # from_schema accepts any JSON as arguments (any_schema, 2.38 and 2.68): arguments that are not an object
        # (`[1, 2]`) would then crash the tool with a TypeError where a typed tool answers "Input should be a valid
        # dictionary". The schema's validator answers as a typed tool does; without it, only an object is required.
        validator = schema_validator(spec.parameters) if spec.validate_args else ANY_OBJECT
        tool.function_schema.validator = validator
        built.append(tool)
    return built
