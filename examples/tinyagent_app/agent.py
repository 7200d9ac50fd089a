"""A small tinyagent application: an agent with one real tool, pinned with a scenario (word_count.yaml).

cd examples && agentrig run tinyagent_app/word_count.yaml --engine tinyagent
"""

from __future__ import annotations

from typing import Any

from tinyagent import Agent, AgentOptions
from tinyagent.agent_types import AgentTool, AgentToolResult, Model, TextContent


async def word_count(tool_call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
    """Count the words of `text`; empty text is an error the model sees."""
    text = str(args.get("text", ""))
    if not text.strip():
        raise ValueError("cannot count the words of empty text")
    return AgentToolResult(content=[TextContent(text=str(len(text.split())))])


def build_agent() -> Agent:
    """The application's agent (a real deployment would leave the model to its configuration)."""
    agent = Agent(AgentOptions())
    agent.set_system_prompt("You count words with the word_count tool.")
    agent.set_model(Model(provider="openai", id="gpt-4.1-mini", api="openai-completions"))
    schema: dict[str, Any] = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    agent.set_tools(
        [AgentTool(name="word_count", description="Count words.", parameters=schema, label="count", execute=word_count)]
    )
    return agent
