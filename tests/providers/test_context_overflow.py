"""Context overflow from a real provider client: the loopback OpenAI-compatible server answers a request with
`context_length_exceeded`; the run compacts (the server also answers the summarize request) and retries once.

The same path as the scripted `error: {kind: context_length}` step, through the real openai client and
agentrig's provider wrapper (error translation, no retry of a 400).
"""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.engine.compaction.controller import SUMMARIZE_PROMPT, SUMMARY_PREFIX
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import ScenarioExecution, execute_scenario
from agentrig.runtime.history.invariants import check_invariants
from agentrig.runtime.models.providers import build_model
from agentrig.scenarios.loader import load_scenario_file
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, ReceivedRequest, context_length_exceeded, text

pytestmark = pytest.mark.providers

SCENARIO = """
name: overflow-through-a-provider
system_prompt: You are terse.
settings:
  compaction: {context_window: 100000, reserve: 1000}
turns:
  - user: We are preparing the 2.1 release. Keep track of the decisions.
  - user: We ship on Friday, after the wheels are published.
  - user: Who writes the announcement?
"""


def run_against(server: LoopbackServer, tmp_path: Path) -> ScenarioExecution:
    path = tmp_path / "scenario.yaml"
    path.write_text(textwrap.dedent(SCENARIO), encoding="utf-8")
    (loaded,) = load_scenario_file(path)
    model = build_model("openai:gpt-4o", base_url=server.openai_base_url, api_key="sk-test-0123456789")

    async def go() -> ScenarioExecution:
        try:
            return await execute_scenario(loaded, model=model, cache=AgentCache())
        finally:
            await model.aclose()

    return asyncio.run(go())


def sent_texts(request: ReceivedRequest) -> str:
    """Everything the chat completion request sent as message content, joined."""
    messages: list[dict[str, Any]] = request.body["messages"]
    return "\n".join(str(message.get("content") or "") for message in messages)


def test_a_context_length_error_compacts_and_retries_once(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback(
        [
            text("Understood, I will keep track."),
            text("Noted: Friday, after the wheels."),
            context_length_exceeded("openai"),
            text("Release 2.1 ships on Friday after the wheels are published."),  # the summarize request
            text("Grace writes it."),  # the retry
        ]
    )
    result = run_against(server, tmp_path)

    third = result.turns[2]
    assert third.error is None, third.error
    assert third.output == "Grace writes it."
    assert third.compaction is not None
    assert (third.compaction.status, third.compaction.reason, third.compaction.compacted_messages) == (
        "compacted",
        "context_overflow",
        4,
    )
    assert len(server.requests) == 5  # the 400 is not retried by the provider wrapper
    overflowed, summarize, retry = server.requests[2:]
    assert "Keep track of the decisions" in sent_texts(overflowed)
    assert SUMMARIZE_PROMPT in sent_texts(summarize)
    assert "User: We ship on Friday, after the wheels are published." in sent_texts(summarize)
    assert "Who writes the announcement?" not in sent_texts(summarize)  # the new prompt is kept, not summarized
    assert SUMMARY_PREFIX in sent_texts(retry)
    assert "Release 2.1 ships on Friday" in sent_texts(retry)
    assert "Keep track of the decisions" not in sent_texts(retry)
    assert "Who writes the announcement?" in sent_texts(retry)
    # The session keeps every message; the record holds the summary.
    assert [m.text for m in result.session.messages] == [
        "We are preparing the 2.1 release. Keep track of the decisions.",
        "Understood, I will keep track.",
        "We ship on Friday, after the wheels are published.",
        "Noted: Friday, after the wheels.",
        "Who writes the announcement?",
        "Grace writes it.",
    ]
    assert result.session.compaction is not None
    assert result.session.compaction.summary == "Release 2.1 ships on Friday after the wheels are published."
    assert check_invariants(result.session.messages, registry=result.registry) == []


def test_a_second_context_length_error_ends_the_turn_with_it(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback(
        [
            text("Understood, I will keep track."),
            text("Noted: Friday, after the wheels."),
            context_length_exceeded("openai"),
            text("Release 2.1 ships on Friday."),
            context_length_exceeded("openai"),
        ]
    )
    result = run_against(server, tmp_path)

    third = result.turns[2]
    assert third.error is not None
    assert third.error.kind == "context_length"
    assert "maximum context length" in third.error.message
    assert third.compaction is not None
    assert third.compaction.status == "compacted"
    assert len(server.requests) == 5  # one retry, no more
    assert [m.text for m in result.session.messages][-1] == "Who writes the announcement?"
    assert len(result.session.messages) == 5
    assert check_invariants(result.session.messages, registry=result.registry) == []


def test_a_failing_summary_request_keeps_the_overflow_error(loopback: ServerFactory, tmp_path: Path) -> None:
    # The summarize request overflows too: the compaction fails, so there is nothing to retry with.
    server = loopback(
        [
            text("Understood, I will keep track."),
            text("Noted: Friday, after the wheels."),
            context_length_exceeded("openai"),
            context_length_exceeded("openai"),
        ]
    )
    result = run_against(server, tmp_path)

    third = result.turns[2]
    assert third.error is not None
    assert third.error.kind == "context_length"
    assert third.compaction is not None
    assert (third.compaction.status, third.compaction.reason) == ("failed", "summary_failed")
    assert third.error.message.endswith("(not retried: compaction failed (summary_failed))")
    assert len(server.requests) == 4
    assert result.session.compaction is None
