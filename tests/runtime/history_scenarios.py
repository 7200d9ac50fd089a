"""Real pydantic-ai `Agent` runs on `FunctionModel` that produce the histories the conversion tests use.

Only pydantic-ai and the version shim, so `convert_data/generate_dumps.py` can run it under any pinned
version to write the cross-version dump fixtures. Every scripted response carries explicit usage:
FunctionModel's estimates differ between versions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import pydantic_core
from pydantic_ai import (
    Agent,
    CallDeferred,
    CancellationToken,
    DeferredToolRequests,
    DeferredToolResults,
    ExternalToolset,
    ModelRetry,
    RunCancelled,
    RunContext,
    ToolDefinition,
    ToolDenied,
)
from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponsePart, TextPart, ThinkingPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from agentrig.runtime.models.pydantic_ai_compat import is_output_retry, is_tool_retry

ModelFunction = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def scripted(*parts: ModelResponsePart, step: int = 0) -> ModelResponse:
    """A scripted response with explicit usage (the step number makes counts distinct)."""
    return ModelResponse(parts=list(parts), usage=RequestUsage(input_tokens=100 + step, output_tokens=10 + step))


def responses_so_far(messages: list[ModelMessage]) -> int:
    """How many responses the model already gave in this conversation."""
    return sum(message.kind == "response" for message in messages)


def model_from_script(script: list[list[ModelResponsePart]], *, then: str = "more done") -> FunctionModel:
    """A FunctionModel answering with `script[n]` for the n-th response of the conversation, then text."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = responses_so_far(messages)
        if step < len(script):
            return scripted(*script[step], step=step)
        return scripted(TextPart(f"{then} {step}"), step=step)

    return FunctionModel(respond)


# --- tools, parallel calls, tool retries, malformed arguments, thinking, output retry ---------------------

TOOLS_AND_RETRIES_SCRIPT: list[list[ModelResponsePart]] = [
    [
        ThinkingPart("plan: add, then flaky", signature="sig-1"),
        TextPart("Let me look."),
        ToolCallPart("add", {"a": 1, "b": 2}, tool_call_id="call_add"),  # dict args
        ToolCallPart("flaky", '{"x": 1}', tool_call_id="call_flaky"),  # JSON string args; raises ModelRetry once
        ToolCallPart("add", '{"a": 1, "b": ', tool_call_id="call_bad"),  # malformed JSON: a validation retry
        ToolCallPart("noop", None, tool_call_id="call_noop"),  # no args at all
    ],
    [
        ToolCallPart("flaky", {"x": 2}, tool_call_id="call_flaky_2"),
        ToolCallPart("add", '{"a": 2, "b": 2}', tool_call_id="call_add_2"),
    ],
    [TextPart("a bad answer")],  # the output validator raises ModelRetry on it
    [ThinkingPart("now answer properly"), TextPart("sum is 3")],
]


def tools_and_retries_agent() -> Agent[None, str]:
    """An agent whose scripted run exercises every tool path and an output retry."""
    agent = Agent(model_from_script(TOOLS_AND_RETRIES_SCRIPT), instructions="Be terse.", deps_type=type(None))

    @agent.tool_plain
    def add(a: int, b: int) -> int:  # pyright: ignore[reportUnusedFunction]
        return a + b

    @agent.tool(retries=2)
    def flaky(ctx: RunContext[None], x: int) -> str:  # pyright: ignore[reportUnusedFunction]
        if ctx.retry == 0:
            raise ModelRetry("try again with x=2")
        return f"ok {x}"

    @agent.tool_plain
    def noop() -> dict[str, Any]:  # pyright: ignore[reportUnusedFunction]
        return {"status": "ok", "items": [1, 2]}

    @agent.output_validator
    def no_bad_answers(output: str) -> str:  # pyright: ignore[reportUnusedFunction]
        if "bad" in output:
            raise ModelRetry("not good enough")
        return output

    return agent


def run_tools_and_retries() -> tuple[Agent[None, str], list[ModelMessage]]:
    """The agent and the full history of its scripted run."""
    agent = tools_and_retries_agent()
    result = asyncio.run(agent.run("add 1 and 2"))
    assert result.output == "sum is 3", result.output
    return agent, result.all_messages()


VALIDATION_ERRORS_SCRIPT: list[list[ModelResponsePart]] = [
    [ToolCallPart("add", {}, tool_call_id="call_missing")],  # two validation errors; 2.60+ writes `input` once
    [ToolCallPart("add", {"a": 1, "b": 2}, tool_call_id="call_fixed")],
    [TextPart("3")],
]


def validation_errors_agent() -> Agent[None, str]:
    """An agent whose typed tool rejects a call that misses both required arguments."""
    agent = Agent(model_from_script(VALIDATION_ERRORS_SCRIPT))

    @agent.tool_plain
    def add(a: int, b: int) -> int:  # pyright: ignore[reportUnusedFunction]
        return a + b

    return agent


def run_validation_errors() -> list[ModelMessage]:
    """History of a run whose tool call misses both required arguments once."""
    agent = validation_errors_agent()
    result = asyncio.run(agent.run("add"))
    assert result.output == "3", result.output
    return result.all_messages()


# --- deferred tools: external, approval, CallDeferred ------------------------------------------------------

DEFERRED_SCRIPT: list[list[ModelResponsePart]] = [
    [
        ToolCallPart("ext_search", {"q": "x"}, tool_call_id="ext_1"),  # tool of an ExternalToolset
        ToolCallPart("delete_file", {"path": "/a"}, tool_call_id="approve_1"),  # requires_approval=True
        ToolCallPart("delete_file", {"path": "/b"}, tool_call_id="approve_2"),
        ToolCallPart("long_job", {}, tool_call_id="job_1"),  # raises CallDeferred
        ToolCallPart("quick", {}, tool_call_id="quick_1"),  # runs at once
    ],
    [TextPart("all done")],
]


def deferred_agent() -> Agent[None, str | DeferredToolRequests]:
    """An agent with external, approval-gated and self-deferring tools."""
    external = ExternalToolset(
        [
            ToolDefinition(
                name="ext_search",
                parameters_json_schema={"type": "object", "properties": {"q": {"type": "string"}}},
            )
        ]
    )
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        model_from_script(DEFERRED_SCRIPT),
        output_type=[str, DeferredToolRequests],
        toolsets=[external],
        deps_type=type(None),
    )

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return f"deleted {path}"

    @agent.tool
    def long_job(ctx: RunContext[None]) -> str:  # pyright: ignore[reportUnusedFunction]
        raise CallDeferred(metadata={"job": 42})

    @agent.tool_plain
    def quick() -> str:  # pyright: ignore[reportUnusedFunction]
        return "quick done"

    return agent


def deferred_results() -> DeferredToolResults:
    """Answers for every deferred call of DEFERRED_SCRIPT: a value, a retry, an approval and a denial."""
    return DeferredToolResults(
        calls={"ext_1": "search result", "job_1": ModelRetry("job failed")},
        approvals={"approve_1": True, "approve_2": ToolDenied("not allowed")},
    )


# --- cancellation -------------------------------------------------------------------------------------------

CANCELLED_SCRIPT: list[list[ModelResponsePart]] = [
    [ToolCallPart("fast", {}, tool_call_id="fast_1"), ToolCallPart("slow", {"n": 1}, tool_call_id="slow_1")],
]


def cancellable_agent(token: CancellationToken) -> Agent[None, str]:
    """An agent whose `slow` tool cancels the run (after `fast` has finished) and then never returns."""
    agent = Agent(model_from_script(CANCELLED_SCRIPT, then="resumed ok"))
    fast_finished = asyncio.Event()

    @agent.tool_plain
    async def fast() -> str:  # pyright: ignore[reportUnusedFunction]
        fast_finished.set()
        return "fast done"

    @agent.tool_plain
    async def slow(n: int) -> str:  # pyright: ignore[reportUnusedFunction]
        await fast_finished.wait()
        for _ in range(5):  # let the finished `fast` task be collected before cancelling
            await asyncio.sleep(0)
        token.cancel()
        await asyncio.Event().wait()  # never set: the run is cancelled while this call is in flight
        return "never"

    return agent


def run_cancelled() -> tuple[Agent[None, str], list[ModelMessage]]:
    """The agent and the history `RunCancelled.all_messages()` gives after the cancellation."""
    token = CancellationToken()
    agent = cancellable_agent(token)
    try:
        asyncio.run(agent.run("go", cancellation_token=token))
    except RunCancelled as cancelled:
        return agent, cancelled.all_messages()
    raise AssertionError("the run was not cancelled")


# --- comparing histories ---------------------------------------------------------------------------------

PartSignature = tuple[Any, ...]


def part_signature(part: Any) -> PartSignature:
    """What a part means, without timestamps, provider details or the random id of an output retry."""
    kind = part.part_kind
    if is_output_retry(part):
        return ("output-retry", _json(part.content))
    if kind == "tool-call":
        return (kind, part.tool_call_id, part.tool_name, part.args_as_dict())
    if is_tool_retry(part):
        return (kind, "retry", part.tool_call_id, part.tool_name, _json(part.content))
    if kind == "tool-return":
        return (kind, part.tool_call_id, part.tool_name, _json(part.content), part.outcome)
    if kind == "thinking":
        return (kind, part.content, part.signature)
    if kind in ("text", "user-prompt", "system-prompt"):
        return (kind, _json(part.content))
    return (kind, _json(pydantic_core.to_jsonable_python(part)))


def parts_of(messages: Sequence[ModelMessage]) -> list[Any]:
    """Every part of every message, in order, typed loosely (tests read fields that only some part classes have)."""
    return [part for message in messages for part in message.parts]


def history_signature(messages: Sequence[ModelMessage]) -> list[tuple[str, list[PartSignature]]]:
    """Every message's kind and its parts' signatures, in order."""
    return [(message.kind, [part_signature(part) for part in message.parts]) for message in messages]


def _json(value: Any) -> Any:
    return pydantic_core.to_jsonable_python(value)
