"""Benchmark (not a test): the cost of compaction checks.

Measures, in one run, on a generated 10,000-message history:
  - token estimation and the retention-boundary search;
  - the per-request compaction check below the threshold (what every request pays), relative to the
    rest of the work of one request: a one-request `Agent.run` on FunctionModel with a 20-message history.
Prints times and ratios. Run: `python bench/bench_compaction.py` (or `nox -s bench`).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable

from agentrig.runtime.canonical import Message, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.compaction import CompactionController, calculate_retention_boundary, estimate_tokens

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")


def generate(messages: int) -> list[Message]:
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


def best_of(repeat: int, action: Callable[[], object]) -> float:
    timings: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return min(timings)


async def _never(transcript: str) -> str:
    raise AssertionError("below the threshold the summarizer is never called")


def one_request_seconds() -> float:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.messages import TextPart as PaiText
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import RequestUsage

    from agentrig.runtime.convert import to_pydantic_ai

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[PaiText("ok")], usage=RequestUsage(input_tokens=10, output_tokens=1))

    agent = Agent(FunctionModel(reply))
    history = to_pydantic_ai(generate(20))
    return best_of(20, lambda: asyncio.run(agent.run("next", message_history=history)))


def main() -> None:
    history = generate(10_000)
    estimate = best_of(5, lambda: estimate_tokens(history))
    tokens = estimate_tokens(history)
    boundary = best_of(5, lambda: calculate_retention_boundary(history, tokens // 10))
    controller = CompactionController(context_window=tokens * 2, summarizer=_never)
    check = best_of(5, lambda: asyncio.run(controller.check_and_compact(history)))
    request = one_request_seconds()
    print(f"history: 10,000 messages, ~{tokens:,} estimated tokens")
    print(f"estimate_tokens:               {estimate * 1000:8.2f} ms")
    print(f"retention boundary search:     {boundary * 1000:8.2f} ms")
    print(f"check below threshold (10k):   {check * 1000:8.2f} ms")
    print(f"one Agent.run request (20 msg):{request * 1000:8.2f} ms")
    small = CompactionController(context_window=tokens * 2, summarizer=_never)
    small_history = generate(20)
    check_small = best_of(50, lambda: asyncio.run(small.check_and_compact(small_history)))
    print(f"check below threshold (20 msg):{check_small * 1000:8.2f} ms")
    print(f"ratio check/request at 20 messages: {check_small / request:.3f}")
    print(f"ratio check/request at 10,000 messages: {check / request:.3f}")


if __name__ == "__main__":
    main()
