"""A tinyagent agent built the way tunacode builds its own (`tunacode.core.agents.agent_components.agent_config`).

tunacode's `get_or_create_agent` makes an `Agent(AgentOptions(stream_fn=..., session_id=..., get_api_key=...,
transform_context=..., should_stop_after_turn=...))`, then sets a system prompt (a prompt file plus the
project's guide), the model and its tools, each wrapped in a concurrency limiter. This module does the same
with two small, real tools over a project folder, so a scenario (tunacode_session.yaml) can pin a multi-turn
session with compaction and an abort, and tunacode's own loader can read the session it leaves.

cd examples && agentrig run tinyagent_app/tunacode_session.yaml --engine tinyagent
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tinyagent import Agent, AgentOptions
from tinyagent.agent_types import AgentTool, AgentToolResult, Model, TextContent

PROJECT = Path(__file__).parent / "project"
SYSTEM_PROMPT = "You are a coding agent. Read before you answer; keep answers short."
MAX_ITERATIONS = 10
MAX_PARALLEL_TOOL_CALLS = 2


async def read_file(tool_call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
    """Read a file of the project; a missing file is an error the model sees."""
    path = PROJECT / str(args.get("path", ""))
    if not path.is_file() or PROJECT not in path.resolve().parents:
        raise FileNotFoundError(f"no file {args.get('path')!r} in the project")
    return AgentToolResult(content=[TextContent(text=path.read_text(encoding="utf-8"))])


async def list_files(tool_call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
    """The project's files, one a line."""
    names = sorted(p.relative_to(PROJECT).as_posix() for p in PROJECT.rglob("*") if p.is_file())
    return AgentToolResult(content=[TextContent(text="\n".join(names))])


def _limited(tool: AgentTool, limiter: asyncio.Semaphore) -> AgentTool:
    """tunacode's `_wrap_tool_with_concurrency_limit`: at most N tool calls at once."""
    execute = tool.execute
    assert execute is not None

    async def run(tool_call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        async with limiter:
            return await execute(tool_call_id, args, signal, on_update)

    return AgentTool(
        name=tool.name, description=tool.description, parameters=tool.parameters, label=tool.label, execute=run
    )


async def _provider_stream(model: Any, context: Any, options: Any) -> Any:
    """tunacode streams from its provider here; this example has no provider (agentrig answers from a script)."""
    raise RuntimeError(f"no provider configured for {model.provider}:{model.id}")


async def _transform_context(messages: list[Any], signal: Any) -> list[Any]:
    """tunacode compacts here (its CompactionController); agentrig's compaction settings stand in for it."""
    return messages


def _should_stop_after_turn(message: Any, tool_results: list[Any], context: Any, new_messages: list[Any]) -> bool:
    """tunacode's iteration guard: stop once a request has taken MAX_ITERATIONS model turns."""
    return sum(1 for m in new_messages if getattr(m, "role", None) == "assistant") >= MAX_ITERATIONS


def build_agent() -> Agent:
    """The agent, as tunacode's `get_or_create_agent` assembles it."""
    agent = Agent(
        AgentOptions(
            stream_fn=_provider_stream,
            session_id="example-session",
            get_api_key=lambda provider: None,
            transform_context=_transform_context,
            should_stop_after_turn=_should_stop_after_turn,
        )
    )
    agent.set_system_prompt(SYSTEM_PROMPT + "\n\n<user_context>\nThe project is a small release tool.\n</user_context>")
    agent.set_model(Model(provider="openrouter", id="openai/gpt-4.1-mini", api="openai-completions"))
    object_schema: dict[str, Any] = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    tools = [
        AgentTool(
            name="read_file", description="Read a file.", parameters=object_schema, label="read", execute=read_file
        ),
        AgentTool(
            name="list_files",
            description="List the project's files.",
            parameters={"type": "object", "properties": {}},
            label="list",
            execute=list_files,
        ),
    ]
    limiter = asyncio.Semaphore(MAX_PARALLEL_TOOL_CALLS)
    agent.set_tools([_limited(tool, limiter) for tool in tools])
    return agent
