"""Dump conversations run by pydantic-ai itself (the installed release), the model a FunctionModel script,
with ModelMessagesTypeAdapter.dump_json, as an application saving its history would."""

import sys
from pathlib import Path

import pydantic_ai
from pydantic import BaseModel, Field
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage


def scripted(steps):
    steps = list(steps)

    def answer(messages, info: AgentInfo) -> ModelResponse:
        parts, (i, o) = steps.pop(0)
        return ModelResponse(parts=parts, usage=RequestUsage(input_tokens=i, output_tokens=o))

    return FunctionModel(answer)


def weather_conversation():
    agent = Agent(instructions="Answer in one sentence.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return {"Paris": "sunny, 21 C", "Oslo": "snow, -3 C"}[city]

    @agent.tool_plain
    def get_time(city: str) -> str:
        """The local time in a city."""
        if city not in ("Paris", "Oslo"):
            raise ModelRetry(f"Unknown city {city!r}; use Paris or Oslo.")
        return "14:05"

    model = scripted(
        [
            (
                [
                    ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="c1"),
                    ToolCallPart("get_weather", {"city": "Oslo"}, tool_call_id="c2"),
                ],
                (50, 20),
            ),
            ([TextPart("Paris is sunny at 21 C; Oslo has snow at -3 C.")], (90, 15)),
            ([ToolCallPart("get_time", {"city": "Tromso"}, tool_call_id="c3")], (120, 10)),
            ([ToolCallPart("get_time", {"city": "Oslo"}, tool_call_id="c4")], (150, 10)),
            ([TextPart("It is 14:05 in Oslo.")], (170, 8)),
        ]
    )
    first = agent.run_sync("Weather in Paris and Oslo?", model=model)
    second = agent.run_sync("What time is it in Tromso?", model=model, message_history=first.all_messages())
    return second.all_messages()


class Invoice(BaseModel):
    number: str
    total_cents: int = Field(ge=0)


def invoice_conversation():
    agent = Agent(output_type=Invoice, system_prompt="Extract the invoice.", retries=2)

    @agent.output_validator
    def check(ctx: RunContext[None], output: Invoice) -> Invoice:
        if not output.number.startswith("INV-"):
            raise ModelRetry("Invoice numbers start with INV-.")
        return output

    model = scripted(
        [
            ([ToolCallPart("final_result", {"number": "INV-7", "total_cents": -5}, tool_call_id="o1")], (80, 12)),
            ([ToolCallPart("final_result", {"number": "7", "total_cents": 500}, tool_call_id="o2")], (120, 12)),
            ([ToolCallPart("final_result", {"number": "INV-7", "total_cents": 500}, tool_call_id="o3")], (150, 12)),
        ]
    )
    return agent.run_sync("Invoice 7, total 5.00 EUR", model=model).all_messages()


out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
version = (
    pydantic_ai.__version__
    if hasattr(pydantic_ai, "__version__")
    else __import__("importlib.metadata").metadata.version("pydantic-ai-slim")
)
for name, build in (("weather", weather_conversation), ("invoice", invoice_conversation)):
    (out / f"pydantic-ai-{version}-{name}.json").write_bytes(ModelMessagesTypeAdapter.dump_json(build(), indent=2))
print(version)
