"""Regenerate `pydantic_ai_<version>_dump.json`: one run touching every part kind the wire reader maps.

Run it with the pydantic-ai version to capture (a throwaway venv for 2.38, the project venv for 2.68):

    cd tests/runtime/data && python make_pydantic_ai_dumps.py > pydantic_ai_2_68_dump.json

The run: a system prompt, thinking with a signature, three tool calls (dict args, '{}' args, malformed
args), a success, a ModelRetry tool retry, an argument-validation retry, an output-validator retry.
"""

from __future__ import annotations

import asyncio
import os
import sys

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")

from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    step = sum(m.kind == "response" for m in messages)
    usage = RequestUsage(input_tokens=10 * (step + 1), output_tokens=5)
    if step == 0:
        parts = [
            ThinkingPart("plan the calls", signature="sig-1"),
            ToolCallPart("get", {"k": "a"}, tool_call_id="c1"),
            ToolCallPart("flaky", "{}", tool_call_id="c2"),
            ToolCallPart("get", '{"k": 1', tool_call_id="c3"),
        ]
        return ModelResponse(parts=parts, usage=usage)
    return ModelResponse(parts=[TextPart("draft" if step == 1 else "done")], usage=usage)


agent = Agent(FunctionModel(scripted_model), system_prompt="Be terse.", retries=2)


@agent.tool_plain
def get(k: str) -> str:
    return f"value-{k}"


@agent.tool_plain
def flaky() -> str:
    raise ModelRetry("bad input")


@agent.output_validator
def reject_drafts(output: str) -> str:
    if output == "draft":
        raise ModelRetry("not good enough")
    return output


async def main() -> None:
    result = await agent.run("go")
    sys.stdout.buffer.write(ModelMessagesTypeAdapter.dump_json(result.all_messages(), indent=2))


if __name__ == "__main__":
    asyncio.run(main())
