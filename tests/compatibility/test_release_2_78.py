"""What pydantic-ai 2.78 added to histories survives a round trip through agentrig's canonical form unchanged in
behaviour: a history dumped by pydantic-ai, converted to canonical JSON and back (`agentrig convert --to canonical`,
then `--to pydantic-ai`), does what the native dump does.

Each case runs on the releases that have the feature (2.78 and later) and says why it is skipped elsewhere; on every
release the canonical form of the same run is the same (the engine writes 2.78's marks on earlier ones too:
tests/runtime/test_release_marks.py).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai import messages as pai_messages
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentrig.runtime.history.wire import dumps_history, loads_history
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.models.conversion import to_canonical, to_pydantic_ai

NEWER = pydantic_ai_compat.PYDANTIC_AI_VERSION >= (2, 78, 0)
needs_2_78 = pytest.mark.skipif(not NEWER, reason="pydantic-ai 2.78 added the field; earlier releases have none")


def round_trip(messages: list[ModelMessage]) -> list[ModelMessage]:
    """pydantic-ai messages -> canonical JSON bytes -> canonical -> pydantic-ai messages (the convert round trip)."""
    return to_pydantic_ai(loads_history(dumps_history(to_canonical(messages))))


PER_RUN = ("timestamp", "request_timestamp", "duration")
"""Not carried by the canonical form (docs/canonical-format.md): new on every conversion."""


def without_per_run(value: Any) -> Any:
    """`value` (parsed JSON) without the timestamps and durations the canonical form does not carry (and what held
    only them: a UI message's `metadata.pydantic_ai` with its timestamp)."""
    if isinstance(value, dict):
        kept = {key: without_per_run(item) for key, item in value.items() if key not in PER_RUN}
        return {key: item for key, item in kept.items() if item != {} and item != {"pydantic_ai": {}}}
    if isinstance(value, list):
        return [without_per_run(item) for item in value]
    return value


def dump(messages: list[ModelMessage]) -> list[dict[str, Any]]:
    """pydantic-ai's JSON of the messages' parts and metadata: what the canonical form carries (a response's usage,
    model name and provider bookkeeping are not: they live in usage.json and the report)."""
    data: list[dict[str, Any]] = json.loads(ModelMessagesTypeAdapter.dump_json(messages))
    kept = ("kind", "parts", "metadata", "state", "run_id", "conversation_id", "failed_attempts")
    return [without_per_run({key: message.get(key) for key in kept}) for message in data]


def tool_then_text(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if not any(message.kind == "response" for message in messages):
        return ModelResponse(parts=[ToolCallPart("lookup_secret", {}, tool_call_id="s1")])
    return ModelResponse(parts=[TextPart("done")])


@needs_2_78
def test_a_redacted_tool_result_stays_hidden_from_a_vercel_ai_client_after_the_round_trip() -> None:
    from pydantic_ai.ui.vercel_ai import VercelAIAdapter

    agent = Agent(FunctionModel(tool_then_text))

    @agent.tool_plain(ui_visibility="redacted")
    def lookup_secret() -> str:
        return "the account number is 12345"

    native = asyncio.run(agent.run("go")).all_messages()

    def client_view(messages: list[ModelMessage]) -> Any:
        return without_per_run([message.model_dump(mode="json") for message in VercelAIAdapter.dump_messages(messages)])

    assert "12345" not in json.dumps(client_view(native))  # what the native dump hides ...
    assert client_view(round_trip(native)) == client_view(native)  # ... the round-tripped one hides too


def call_and_deferred(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if not any(message.kind == "response" for message in messages):
        return ModelResponse(parts=[ToolCallPart("get", {}, tool_call_id="g1"), ToolCallPart("slow", {}, "d1")])
    return ModelResponse(parts=[TextPart("answered")])


def deferred_agent() -> Agent[None, Any]:
    from pydantic_ai.exceptions import CallDeferred
    from pydantic_ai.tools import DeferredToolRequests

    agent: Agent[None, Any] = Agent(FunctionModel(call_and_deferred), output_type=[str, DeferredToolRequests])

    @agent.tool_plain
    def get() -> str:
        return "value"

    @agent.tool_plain
    def slow() -> str:
        raise CallDeferred

    return agent


@needs_2_78
def test_a_round_tripped_paused_history_pauses_again_on_resume_as_the_native_one_does() -> None:
    agent = deferred_agent()
    paused = asyncio.run(agent.run("go")).all_messages()

    native = asyncio.run(agent.run(None, message_history=paused)).output
    resumed = asyncio.run(agent.run(None, message_history=round_trip(paused))).output

    assert type(native).__name__ == "DeferredToolRequests"  # 2.78: a resumed pause pauses again
    assert type(resumed).__name__ == type(native).__name__
    assert [call.tool_call_id for call in resumed.calls] == [call.tool_call_id for call in native.calls] == ["d1"]


@needs_2_78
def test_a_custom_named_output_tool_is_still_an_output_tool_after_the_round_trip() -> None:
    from pydantic import BaseModel
    from pydantic_ai.output import ToolOutput, is_output_tool_part

    class Answer(BaseModel):
        n: int

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"n": 1}, tool_call_id="o1")])

    agent = Agent(FunctionModel(answer), output_type=ToolOutput(Answer, name="give_answer"))
    native = asyncio.run(agent.run("go")).all_messages()

    def output_parts(messages: list[ModelMessage]) -> list[str]:
        return [part.part_kind for message in messages for part in message.parts if is_output_tool_part(part)]

    assert output_parts(native) == ["tool-call", "tool-return"]  # by `tool_kind='output'`: the name is not the default
    assert output_parts(round_trip(native)) == output_parts(native)
    assert dump(round_trip(native)) == dump(native)


@needs_2_78
def test_failed_attempts_keep_their_kind_and_the_wait_the_provider_asked_for() -> None:
    from pydantic_ai.capabilities import RetryOnModelErrors
    from pydantic_ai.exceptions import ModelRateLimitError

    calls: list[int] = []

    def flaky(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        if len(calls) == 1:
            raise ModelRateLimitError("function:flaky", "slow down", retry_after=0.01)
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(flaky), capabilities=[RetryOnModelErrors(max_attempts=2, max_delay=0.01)])
    native = asyncio.run(agent.run("go")).all_messages()
    response = native[-1]
    assert isinstance(response, ModelResponse)
    assert response.failed_attempts
    assert [(attempt.kind, attempt.retry_after) for attempt in response.failed_attempts] == [("retry", 0.01)]

    back = round_trip(native)[-1]
    assert isinstance(back, ModelResponse)
    assert back.failed_attempts
    kept = ("model_name", "provider_name", "outcome", "error", "kind", "retry_after")
    assert [[getattr(a, key) for key in kept] for a in back.failed_attempts] == [
        [getattr(a, key) for key in kept] for a in response.failed_attempts
    ]


@needs_2_78
def test_a_capability_part_comes_back_with_its_kind_content_fields_and_record_id() -> None:
    agent = Agent(FunctionModel(tool_then_text))

    @agent.tool
    def lookup_secret(ctx: RunContext[object]) -> str:
        ctx.enqueue(WEATHER(source=pai_messages.UserSource(), content="sunny", city="Oslo"))
        return "checked"

    native = asyncio.run(agent.run("go")).all_messages()
    (part,) = [part for message in native for part in message.parts if part.part_kind == "capability"]
    back = round_trip(native)
    (again,) = [part for message in back for part in message.parts if part.part_kind == "capability"]

    assert (again.kind, again.record_id) == (part.kind, part.record_id)
    assert dump(back) == dump(native)
    # A second run enqueues a new record (a new id): the canonical form as goldens hold it is the same.
    from agentrig.runtime.history.per_run import without_per_run_values

    other = asyncio.run(agent.run("go")).all_messages()
    assert without_per_run_values(to_canonical(other)) == without_per_run_values(to_canonical(native))


def _weather_part() -> Any:
    if not NEWER:
        return None
    from dataclasses import dataclass

    @dataclass(kw_only=True)
    class Weather(
        pai_messages.DataCapabilityPart[str], namespace="agentrig_tests", tag="weather", attributes=("city",)
    ):
        city: str = ""

    return Weather


WEATHER: Any = _weather_part()


@pytest.mark.skipif(not pydantic_ai_compat.HAS_RETRY_FEEDBACK, reason="pydantic-ai 2.60 added retry causes")
def test_a_no_output_retry_is_sent_to_the_model_in_the_same_voice_after_the_round_trip() -> None:
    seen: list[list[ModelMessage]] = []

    def empty_then_text(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        if len(seen) == 1:
            return ModelResponse(parts=[])
        return ModelResponse(parts=[TextPart("text at last")])

    agent = Agent(FunctionModel(empty_then_text))
    native = asyncio.run(agent.run("go")).all_messages()
    retry = [part for message in native for part in message.parts if part.part_kind == "retry-feedback"]
    assert [part.retry.cause for part in retry] == ["no_output"]

    def without_counts(messages: list[dict[str, Any]]) -> str:
        # A retry's attempt counts are derived (the run counts again); its cause is carried.
        return json.dumps(messages).replace('"attempt": 1, "max_retries": 1', '"attempt": null, "max_retries": null')

    assert without_counts(dump(round_trip(native))) == without_counts(dump(native))

    def replay(messages: list[ModelMessage]) -> list[ModelMessage]:
        seen.clear()
        replayed = Agent(FunctionModel(empty_then_text))
        asyncio.run(replayed.run("more", message_history=messages))
        return seen[-1]

    # What the model is sent for the stored retry, natively and round-tripped: the same rendering.
    def sent(messages: list[ModelMessage]) -> list[dict[str, Any]]:
        return [{key: value for key, value in message.items() if key != "run_id"} for message in dump(messages)]

    assert without_counts(sent(replay(round_trip(native)))) == without_counts(sent(replay(native)))
