"""Benchmark (not a test): what compaction costs.

    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_compaction.py

Prints milliseconds and ratios, in one event loop (no `asyncio.run` start-up inside any timing):

1. on a generated 10,000-message history (user turns with a tool call, its return and an answer):
   `estimate_tokens`, `calculate_retention_boundary`, the check below the threshold (what every request pays),
   the same with a compaction record in force (its boundary is validated on every request), and a full
   compaction with an instant summarizer (estimate, boundary, transcript, new input);
2. the check inside the real orchestrator: `RequestOrchestrator.run` on a FunctionModel agent, with a session
   of 20, 1,000 and 10,000 messages, the compactor timed from inside; the ratio is the check's time over the
   rest of the request (history preparation, conversion, the pydantic-ai run, finalize).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.messages import TextPart as PaiTextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from agentrig.runtime.engine.compaction.controller import (
    CompactionController,
    calculate_retention_boundary,
    estimate_tokens,
)
from agentrig.runtime.engine.orchestrator import RequestOrchestrator
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache, AgentHandle
from agentrig.runtime.engine.pydantic_ai_engine.plain import PydanticAIEngine
from agentrig.runtime.history.canonical import Message, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.run_records import CompactionOutcome
from agentrig.runtime.history.sessions import CompactionRecord, new_session

REPEAT = 7
"""Each figure is the median of this many runs."""
REQUESTS = 5
"""Orchestrated requests per session size."""


def generate(messages: int) -> list[Message]:
    """A history of `messages` messages: user turn, tool call, tool return, answer, repeated."""
    history: list[Message] = []
    turn = 0
    while len(history) < messages:
        history.append(Message.request(TextPart(content=f"please look at file {turn} and tell me what it does")))
        history.append(
            Message.response(ToolCallPart(tool_call_id=f"tc_{turn}", tool_name="read", args={"path": f"src/{turn}.py"}))
        )
        history.append(
            Message.request(
                ToolReturnPart(tool_call_id=f"tc_{turn}", tool_name="read", content="def f():\n    pass\n" * 20)
            )
        )
        history.append(Message.response(TextPart(content=f"File {turn} defines f, which does nothing. " * 3)))
        turn += 1
    return history[:messages]


async def median_seconds(action: Callable[[], Awaitable[object]], repeat: int = REPEAT) -> float:
    timings: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        await action()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


async def median_seconds_sync(action: Callable[[], object], repeat: int = REPEAT) -> float:
    async def wrapped() -> object:
        return action()

    return await median_seconds(wrapped, repeat)


async def never(transcript: str) -> str:
    raise AssertionError("below the threshold the summarizer is never called")


async def instant(transcript: str) -> str:
    return "a summary of earlier work"


class TimedCompactor:
    """The orchestrator's compactor, timed from inside: the time spent in `check_and_compact` per call."""

    def __init__(self, controller: CompactionController) -> None:
        self.controller = controller
        self.timings: list[float] = []

    async def check_and_compact(
        self, history: Sequence[Message], *, force: bool = False
    ) -> tuple[list[Message], CompactionOutcome]:
        started = time.perf_counter()
        result = await self.controller.check_and_compact(history, force=force)
        self.timings.append(time.perf_counter() - started)
        return result


def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[PaiTextPart("ok")], usage=RequestUsage(input_tokens=10, output_tokens=1))


async def orchestrated(size: int, *, with_record: bool) -> tuple[float, float]:
    """Median seconds per request (whole `RequestOrchestrator.run`) and in the compaction check, at `size`."""
    history = generate(size)
    tokens = estimate_tokens(history)
    state = None
    if with_record:
        boundary = calculate_retention_boundary(history, tokens // 2)
        assert boundary is not None
        state = CompactionRecord(
            summary="earlier work",
            compacted_message_count=boundary,
            tokens_before=tokens,
            tokens_after=0,
            count=1,
            previous_summary=None,
            created_at="",
        )
    controller = CompactionController(context_window=tokens * 10, summarizer=never, state=state)
    compactor = TimedCompactor(controller)
    agent = Agent(FunctionModel(reply, model_name="bench"))
    handle = AgentHandle(key=f"bench-{size}", build=lambda: agent, label="bench", cache=AgentCache())
    totals: list[float] = []
    for request in range(REQUESTS):
        # A fresh session of the same size per request, so every request sees `size` messages.
        orchestrator = RequestOrchestrator(PydanticAIEngine(handle), new_session(messages=history), compactor=compactor)
        started = time.perf_counter()
        await orchestrator.run(f"question {request}")
        totals.append(time.perf_counter() - started)
    return statistics.median(totals), statistics.median(compactor.timings)


async def main() -> None:
    history = generate(10_000)
    tokens = estimate_tokens(history)
    estimate = await median_seconds_sync(lambda: estimate_tokens(history))
    boundary = await median_seconds_sync(lambda: calculate_retention_boundary(history, tokens // 10))

    below = CompactionController(context_window=tokens * 2, summarizer=never)
    check = await median_seconds(lambda: below.check_and_compact(history))
    split = calculate_retention_boundary(history, tokens // 2)
    assert split is not None
    in_force = CompactionRecord(
        summary="earlier work",
        compacted_message_count=split,
        tokens_before=tokens,
        tokens_after=0,
        count=1,
        previous_summary=None,
        created_at="",
    )
    with_record = CompactionController(context_window=tokens * 2, summarizer=never, state=in_force)
    check_record = await median_seconds(lambda: with_record.check_and_compact(history))

    async def compact() -> object:
        controller = CompactionController(context_window=tokens // 2, keep_recent=tokens // 10, summarizer=instant)
        return await controller.check_and_compact(history)

    full = await median_seconds(compact)

    print(f"history: 10,000 messages, ~{tokens:,} estimated tokens")
    print(f"  estimate_tokens                       {estimate * 1000:8.2f} ms")
    print(f"  calculate_retention_boundary          {boundary * 1000:8.2f} ms")
    print(f"  check below threshold                 {check * 1000:8.2f} ms")
    print(f"  check below threshold, record applied {check_record * 1000:8.2f} ms")
    print(f"  full compaction (instant summarizer)  {full * 1000:8.2f} ms")
    print()
    print("per request, RequestOrchestrator.run on FunctionModel (median of 5):")
    print(f"  {'messages':>8}  {'request ms':>10}  {'check ms':>9}  {'rest ms':>9}  {'check/rest':>10}")
    for size in (20, 1_000, 10_000):
        for record in (False, True):
            total, in_check = await orchestrated(size, with_record=record)
            rest = total - in_check
            label = f"{size:>8,}{'+rec' if record else '    '}"
            figures = f"{total * 1000:10.2f}  {in_check * 1000:9.3f}  {rest * 1000:9.2f}  {in_check / rest:10.3f}"
            print(f"  {label}  {figures}")


if __name__ == "__main__":
    asyncio.run(main())
