"""Write tunacode sessions with tunacode-cli's own StateManager.save_session, the conversation run by tinyagent's
own Agent loop (tiny-agent-os) on a scripted stream function in place of a provider."""

import asyncio
import json
import os
import sys
from pathlib import Path

from tinyagent import agent_types as t
from tinyagent.agent import Agent, AgentOptions


class Scripted:
    def __init__(self, message):
        self.message = message
        self._sent = False

    async def result(self):
        return self.message

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self._sent:
            raise StopAsyncIteration
        self._sent = True
        return t.AssistantMessageEvent(type="done", partial=self.message)


def script(steps):
    steps = list(steps)

    async def stream_fn(model, context, options):
        content, usage, stop = steps.pop(0)
        return Scripted(
            t.AssistantMessage(
                content=content,
                stop_reason=stop,
                usage=usage,
                model=model.id,
                provider=model.provider,
                api="openai-completions",
                timestamp=1765100000000,
            )
        )

    return stream_fn


def usage(i, o, cr=0):
    return {
        "input": i,
        "output": o,
        "cache_read": cr,
        "cache_write": 0,
        "total_tokens": i + o,
        "cost": {"input": 0.0, "output": 0.0, "cache_read": 0.0, "cache_write": 0.0, "total": 0.0},
    }


async def read_file(tool_call_id, args, signal=None, on_update=None):
    text = {
        "README.md": "# demo\nA small demo project.",
        "setup.py": "from setuptools import setup\nsetup(name='demo')",
    }.get(args.get("path"))
    if text is None:
        raise FileNotFoundError(f"No such file: {args.get('path')}")
    return t.AgentToolResult(content=[t.TextContent(text=text)])


async def main(kind, out_dir):
    from tunacode.core.session.state import StateManager

    tools = [
        t.AgentTool(
            name="read_file",
            label="read_file",
            description="Read a file.",
            parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            execute=read_file,
        )
    ]
    if kind == "simple":
        steps = [
            (
                [t.ToolCallContent(id="call_a1", name="read_file", arguments={"path": "README.md"})],
                usage(120, 14),
                "tool_use",
            ),
            ([t.TextContent(text="It is a small demo project.")], usage(160, 8, 100), "stop"),
            ([t.TextContent(text="No, it has no tests yet.")], usage(190, 9, 150), "stop"),
        ]
        prompts = ["What is this project?", "Does it have tests?"]
    else:
        steps = [
            (
                [
                    t.ThinkingContent(thinking="Read both files at once.", thinking_signature="sig-1"),
                    t.ToolCallContent(id="call_b1", name="read_file", arguments={"path": "setup.py"}),
                    t.ToolCallContent(id="call_b2", name="read_file", arguments={"path": "missing.cfg"}),
                ],
                usage(200, 30),
                "tool_use",
            ),
            (
                [t.TextContent(text="setup.py names the package demo; missing.cfg does not exist.")],
                usage(260, 15),
                "stop",
            ),
        ]
        prompts = ["Read setup.py and missing.cfg."]
    agent = Agent(AgentOptions(stream_fn=script(steps)))
    agent.set_model(t.Model(provider="openrouter", id="openai/gpt-4.1", api="openai-completions"))
    agent.set_system_prompt("You are tunacode, a coding assistant.")
    agent.set_tools(tools)
    for prompt in prompts:
        await agent.prompt(prompt)
    if os.environ.get("TINYAGENT_MESSAGES"):
        # tinyagent's own messages, as an application on tiny-agent-os would save them (no tunacode session)
        Path(os.environ["TINYAGENT_MESSAGES"]).write_text(
            json.dumps([m.model_dump(exclude_none=True) for m in agent.state.messages], indent=2)
        )
        return
    manager = StateManager()
    session = manager.session
    session.project_id = "demo"
    session.session_id = f"tiny-{kind}"
    session.working_directory = "/home/user/demo"
    session.current_model = "openrouter:openai/gpt-4.1"
    session.conversation.messages = list(agent.state.messages)
    import tunacode.configuration.paths as paths

    paths.get_session_storage_dir = lambda: Path(out_dir)
    assert await manager.save_session()


asyncio.run(main(sys.argv[1], sys.argv[2]))
