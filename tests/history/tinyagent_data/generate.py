"""Regenerate the tunacode session files in this directory with tunacode's and tinyagent's own code.

Nothing here is written by hand: the messages come from a real `tinyagent.Agent` run (a scripted
stream function stands in for the model; the tools run for real, one of them fails) and the files
are written by tunacode's `StateManager.save_session`. Run it in a scratch venv, never the project's:

    uv venv /tmp/tuna-venv && VIRTUAL_ENV=/tmp/tuna-venv uv pip install tunacode-cli==0.2.3
    /tmp/tuna-venv/bin/python tests/history/tinyagent_data/generate.py

It writes:
- `tunacode_session.json`: a prompt with an image, thinking with a signature, two tool calls (one
  succeeds, one raises, so its result has `is_error: true`), a final answer, then a second prompt and
  answer; per-message usage and the session's total usage with a cost; a compaction record; a thought;
- `tinyagent_messages.json`: the same messages as a bare list (tinyagent's `model_dump` of each).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# tunacode reads its user config from ~ and writes sessions under $XDG_DATA_HOME: keep both in a temp dir.
SCRATCH = Path(tempfile.mkdtemp(prefix="tunacode-fixture-"))
os.environ["HOME"] = str(SCRATCH)
os.environ["XDG_DATA_HOME"] = str(SCRATCH / "data")
os.environ["XDG_CONFIG_HOME"] = str(SCRATCH / "config")

from tinyagent import Agent, AgentOptions  # noqa: E402
from tinyagent.agent_types import (  # noqa: E402
    AgentTool,
    AgentToolResult,
    AssistantMessage,
    AssistantMessageEvent,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    ToolCallContent,
)

# tunacode-cli is not a project dependency (see the docstring): pyright in the project venv cannot resolve it.
from tunacode.core.compaction.types import CompactionRecord  # noqa: E402  # pyright: ignore[reportMissingImports]
from tunacode.core.session.state import StateManager  # noqa: E402  # pyright: ignore[reportMissingImports]
from tunacode.types import UsageMetrics  # noqa: E402  # pyright: ignore[reportMissingImports]

PIXEL = (  # a 1x1 PNG
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _usage(step: int) -> dict[str, Any]:
    inp, out, cached = 100 * (step + 1), 20 + step, 10 * step
    return {
        "input": inp,
        "output": out,
        "cache_read": cached,
        "cache_write": 5,
        "total_tokens": inp + out + cached + 5,
        "cost": {"input": inp * 1e-6, "output": out * 2e-6, "cache_read": 0.0, "cache_write": 0.0, "total": 0.0},
    }


def _script(step: int) -> AssistantMessage:
    if step == 0:
        content: list[Any] = [
            ThinkingContent(thinking="read the file, then count the words", thinking_signature="sig-abc"),
            TextContent(text="Let me look."),
            ToolCallContent(id="call_read", name="read_file", arguments={"path": "notes.txt"}),
            ToolCallContent(id="call_count", name="word_count", arguments={"text": "", "strict": True}),
        ]
        stop = "tool_calls"
    elif step == 1:
        content = [TextContent(text="notes.txt says hello; counting failed on empty text.")]
        stop = "stop"
    else:
        content = [TextContent(text="Yes: one file was read.")]
        stop = "stop"
    return AssistantMessage(
        content=content,
        stop_reason=stop,
        api="openai-completions",
        provider="scripted",
        model="scripted-1",
        usage=_usage(step),
        timestamp=1_700_000_000_000 + step,
    )


class _Scripted:
    """A finished stream (tinyagent's StreamResponse protocol): one `done` event, the whole message as the result."""

    def __init__(self, message: AssistantMessage) -> None:
        self._message = message
        self._sent = False

    async def result(self) -> AssistantMessage:
        return self._message

    def __aiter__(self) -> _Scripted:
        return self

    async def __anext__(self) -> AssistantMessageEvent:
        if self._sent:
            raise StopAsyncIteration
        self._sent = True
        return AssistantMessageEvent(type="done", message=self._message)


async def _read_file(tool_call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=f"{args['path']}: hello")], details={"bytes": 5})


async def _word_count(tool_call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
    raise ValueError("cannot count words of empty text")


def _tool(name: str, execute: Any, properties: dict[str, Any]) -> AgentTool:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": list(properties)}
    return AgentTool(name=name, description=name, parameters=schema, label=name, execute=execute)


async def _run() -> list[Any]:
    steps = iter(range(10))

    async def stream_fn(model: Any, context: Any, options: Any) -> _Scripted:
        return _Scripted(_script(next(steps)))

    agent = Agent(AgentOptions(stream_fn=stream_fn))
    agent.set_model(Model(provider="scripted", id="scripted-1", api="openai-completions"))
    agent.set_system_prompt("You are a test agent.")
    agent.set_tools(
        [
            _tool("read_file", _read_file, {"path": {"type": "string"}}),
            _tool("word_count", _word_count, {"text": {"type": "string"}, "strict": {"type": "boolean"}}),
        ]
    )
    screen = ImageContent(url=PIXEL, mime_type="image/png")
    await agent.prompt("Read notes.txt and count its words; this is the screen:", images=[screen])
    await agent.prompt("Did it work?")
    return list(agent.state.messages)


async def main() -> None:
    messages = await _run()
    manager = StateManager()
    session = manager.session
    session.session_id = "6f1c2d9e-0000-4000-8000-00000000cafe"
    session.project_id = "fixture-project"
    session.created_at = "2026-01-01T00:00:00+00:00"
    session.working_directory = "/work/fixture"
    session.current_model = "openai:gpt-4.1"
    session.selected_skill_names = ["python"]
    session.conversation.messages = messages
    session.conversation.thoughts = ["the user wants a word count"]
    total = UsageMetrics()
    for message in messages:
        if getattr(message, "role", None) == "assistant" and message.usage:
            total.add(UsageMetrics.from_dict(message.usage))
    session.usage.session_total_usage = total
    session.compaction = CompactionRecord(
        summary="earlier: the user set up the project",
        compacted_message_count=4,
        tokens_before=1200,
        tokens_after=300,
        compaction_count=1,
        previous_summary=None,
        last_compacted_at="2026-01-01T00:00:01+00:00",
    )
    if not await manager.save_session():
        sys.exit("save_session failed")
    written = next((SCRATCH / "data" / "tunacode" / "sessions").glob("*.json"))
    data = json.loads(written.read_text())
    data["last_modified"] = "2026-01-01T00:00:02+00:00"  # save_session stamps now; a fixed value keeps diffs quiet
    (HERE / "tunacode_session.json").write_text(json.dumps(data, indent=2) + "\n")
    (HERE / "tinyagent_messages.json").write_text(json.dumps(data["messages"], indent=2) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
