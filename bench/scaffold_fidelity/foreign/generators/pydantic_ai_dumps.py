"""Dump conversations run by pydantic-ai itself (the installed release), the model a FunctionModel script,
with ModelMessagesTypeAdapter.dump_json, as an application saving its history would.

    python pydantic_ai_dumps.py OUT [KIND ...]    # KIND: weather invoice approval union limit (default: all)
"""

import sys
from contextlib import suppress
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


def approval_conversation():
    """A tool that needs approval: the run pauses, the host approves one call and denies the other."""
    from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolDenied

    agent = Agent(output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    model = scripted(
        [
            (
                [
                    ToolCallPart("delete_file", {"path": "a.txt"}, tool_call_id="d1"),
                    ToolCallPart("delete_file", {"path": "/etc/hosts"}, tool_call_id="d2"),
                ],
                (40, 24),
            ),
            ([TextPart("Deleted a.txt; /etc/hosts stays.")], (90, 10)),
        ]
    )
    paused = agent.run_sync("Delete a.txt and /etc/hosts", model=model)
    assert isinstance(paused.output, DeferredToolRequests)
    results = DeferredToolResults(approvals={"d1": True, "d2": ToolDenied("System files stay.")})
    done = agent.run_sync(model=model, message_history=paused.all_messages(), deferred_tool_results=results)
    return done.all_messages()


class Refund(BaseModel):
    order_id: int
    amount_cents: int


class Escalate(BaseModel):
    reason: str


def union_conversation():
    """Two output types (two output tools): the first turn escalates, the second refunds."""
    agent = Agent(output_type=[Refund, Escalate], instructions="Decide refunds.")
    model = scripted(
        [
            ([ToolCallPart("final_result_Escalate", {"reason": "Order not found"}, tool_call_id="u1")], (60, 10)),
            (
                [ToolCallPart("final_result_Refund", {"order_id": 42, "amount_cents": "lots"}, tool_call_id="u2")],
                (90, 12),
            ),
            (
                [ToolCallPart("final_result_Refund", {"order_id": 42, "amount_cents": 1999}, tool_call_id="u3")],
                (120, 12),
            ),
        ]
    )
    first = agent.run_sync("Refund order 41", model=model)
    second = agent.run_sync("Sorry, order 42", model=model, message_history=first.all_messages())
    return second.all_messages()


def limit_conversation():
    """A request limit ends the run; the application keeps what capture_run_messages saw."""
    from pydantic_ai import UsageLimits, capture_run_messages
    from pydantic_ai.exceptions import UsageLimitExceeded

    agent = Agent(instructions="Search until you find it.")

    @agent.tool_plain
    def search(query: str) -> str:
        """Search the index."""
        return f"no results for {query}"

    model = scripted(
        [
            ([ToolCallPart("search", {"query": "alpha"}, tool_call_id="s1")], (30, 8)),
            ([ToolCallPart("search", {"query": "beta"}, tool_call_id="s2")], (50, 8)),
            ([ToolCallPart("search", {"query": "gamma"}, tool_call_id="s3")], (70, 8)),
        ]
    )
    # The application logs the limit and saves the history it captured.
    with capture_run_messages() as messages, suppress(UsageLimitExceeded):
        agent.run_sync("Find the launch date", model=model, usage_limits=UsageLimits(request_limit=2))
    return messages


KINDS = {
    "weather": weather_conversation,
    "invoice": invoice_conversation,
    "approval": approval_conversation,
    "union": union_conversation,
    "limit": limit_conversation,
}

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
version = (
    pydantic_ai.__version__
    if hasattr(pydantic_ai, "__version__")
    else __import__("importlib.metadata").metadata.version("pydantic-ai-slim")
)
for name in sys.argv[2:] or KINDS:
    build = KINDS[name]
    (out / f"pydantic-ai-{version}-{name}.json").write_bytes(ModelMessagesTypeAdapter.dump_json(build(), indent=2))
print(version)
