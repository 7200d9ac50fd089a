"""Source files for the scaffold tests: the shop conversation as a pydantic-ai dump with usage and instructions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentrig.runtime.history.canonical import Message, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.models.conversion import dump_pydantic_ai_json
from agentrig.runtime.runfolder import jsonio

INSTRUCTIONS = "Convert euro amounts with the convert tool; give the result."
UNKNOWN_YEN = "unknown currency 'JPY'; use one of ['GBP', 'USD']"


def shop_history(usd_result: float = 10.0) -> list[Message]:
    """Two turns with tests/scaffold/shop.py's agent: a conversion (the USD bug) and a retried unknown currency."""
    return [
        Message.request(TextPart(content="Convert 10 EUR to USD.")),
        Message.response(
            TextPart(content="Let me convert."),
            ToolCallPart(tool_call_id="c1", tool_name="convert", args={"amount": 10, "currency": "USD"}),
        ),
        Message.request(ToolReturnPart(tool_call_id="c1", tool_name="convert", content=usd_result)),
        Message.response(TextPart(content=f"10 EUR is {usd_result} USD.")),
        Message.request(TextPart(content="And to yen?\nJust the number.")),
        Message.response(ToolCallPart(tool_call_id="c2", tool_name="convert", args={"amount": 10, "currency": "JPY"})),
        Message.request(RetryPromptPart(tool_call_id="c2", tool_name="convert", content=UNKNOWN_YEN)),
        Message.response(TextPart(content="I cannot convert to yen.")),
    ]


USAGES = [(120, 20), (160, 9), (200, 12), (240, 7)]
"""(input, output) tokens of each response."""


def write_dump(path: Path, history: list[Message], *, instructions: str | None = INSTRUCTIONS) -> Path:
    """`history` as the installed pydantic-ai dumps it, with each response's usage and each request's instructions."""
    messages: list[dict[str, Any]] = jsonio.loads(dump_pydantic_ai_json(history))
    responses = iter(USAGES)
    for message in messages:
        if message["kind"] == "response":
            input_tokens, output_tokens = next(responses, (0, 0))
            message["usage"] = {
                **message.get("usage", {}),
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
            }
        elif instructions is not None:
            message["instructions"] = instructions
    jsonio.write_atomic(path, jsonio.dumps(messages, pretty=True))
    return path
