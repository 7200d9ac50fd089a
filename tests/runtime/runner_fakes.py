"""A fake engine for runner, report and CLI tests: turns a scenario's script into TurnRecords without pydantic-ai.

Module-level (not in a test file) so worker processes can import it by reference with `-j 2`.

Script conventions: each text step becomes the turn's output; an `error` step ends the turn with that
error; a step whose text is `CTRL-C` presses Ctrl-C (a real SIGINT to this process, which the run's main thread
receives, then waits to be cancelled: a KeyboardInterrupt the agent raised itself would be its own error, not
Ctrl-C); a step whose text is `CRASH` raises.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from dataclasses import dataclass
from typing import Any

from agentrig.runtime.history.canonical import Message, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.run_records import RunError, ToolCallStatusRecord, TurnRecord
from agentrig.runtime.history.sessions import Session, new_session
from agentrig.runtime.history.usage import Usage
from agentrig.scenarios.loader import LoadedScenario


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeExecution:
    """What `execute_scenario` returns, minus pydantic-ai."""

    turns: tuple[TurnRecord, ...]
    session: Session
    pydantic_ai_dump: bytes
    scripted: bool = True


async def fake_execute(loaded: LoadedScenario, *, model: Any = None) -> FakeExecution:
    """Run the script literally: text steps answer, tool calls are recorded as completed."""
    history: list[Message] = []
    turns: list[TurnRecord] = []
    for index, turn in enumerate(loaded.scenario.turns):
        started = len(history)
        prompt = turn.user if isinstance(turn.user, str) else None  # the fake's scenarios are text only
        history.append(Message.request(TextPart(content=prompt or ""), run_id=f"run-{index}"))
        output: str | None = None
        error: RunError | None = None
        calls: list[ToolCallPart] = []
        usage = Usage()
        for step in turn.model:
            if step.text == "CTRL-C":
                os.kill(os.getpid(), signal.SIGINT)
                await asyncio.sleep(60)  # the run cancels the scenario in flight at once
            if step.text == "CRASH":
                raise RuntimeError("engine exploded\nsecond line")
            if step.delay:
                time.sleep(step.delay)
            if step.error is not None:
                error = RunError(kind=step.error.kind, message=step.error.message or step.error.kind)
                break
            step_usage = step.usage
            usage = usage + Usage(
                requests=1,
                input_tokens=step_usage.input_tokens if step_usage else 0,
                output_tokens=step_usage.output_tokens if step_usage else 0,
            )
            for call in step.tool_calls:
                part = ToolCallPart(tool_call_id=call.id, tool_name=call.name, args=call.args)
                calls.append(part)
                history.append(Message.response(part, run_id=f"run-{index}"))
                history.append(Message.request(ToolReturnPart(tool_call_id=call.id, tool_name=call.name, content="ok")))
            if step.text is not None:
                output = step.text
                history.append(Message.response(TextPart(content=step.text), run_id=f"run-{index}"))
        turns.append(
            TurnRecord(
                index=index,
                request_id=f"{index:08x}",
                prompt=prompt,
                output=output if error is None else None,
                new_messages=tuple(history[started:]),
                tool_calls=tuple(calls),
                tool_statuses=tuple(
                    ToolCallStatusRecord(tool_call_id=c.tool_call_id, tool_name=c.tool_name, status="completed")
                    for c in calls
                ),
                usage=usage,
                error=error,
            )
        )
        if error is not None:
            break
    return FakeExecution(
        turns=tuple(turns),
        session=new_session(working_directory="/work/project", session_id="s-1", messages=history),
        pydantic_ai_dump=b'[{"kind": "request", "parts": []}]',
        scripted=model is None,
    )
