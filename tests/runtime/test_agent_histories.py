"""Histories of real `Agent` runs survive pydantic-ai -> canonical -> JSON -> canonical -> pydantic-ai, and the
converted history continues: a further run with `message_history` works. Runs on every pinned version."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessage

from agentrig.runtime.history import canonical
from agentrig.runtime.history.wire import dumps_history, loads_history
from agentrig.runtime.models.conversion import to_canonical, to_pydantic_ai
from agentrig.runtime.models.pydantic_ai_compat import is_tool_retry
from tests.runtime.history_scenarios import (
    deferred_agent,
    deferred_results,
    history_signature,
    parts_of,
    run_cancelled,
    run_tools_and_retries,
)


def through_canonical_json(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """pydantic-ai -> canonical -> JSON bytes -> canonical -> pydantic-ai, as an application persisting history does."""
    stored = dumps_history(to_canonical(messages))
    return to_pydantic_ai(loads_history(stored))


def assert_round_trip_keeps_everything(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    converted = through_canonical_json(messages)
    assert history_signature(converted) == history_signature(messages)
    return converted


def canonical_retry_parts(messages: Sequence[ModelMessage]) -> list[canonical.RetryPromptPart]:
    return [
        part
        for _, _, part in canonical.iter_parts(to_canonical(messages))
        if isinstance(part, canonical.RetryPromptPart)
    ]


def test_tool_calls_retries_thinking_and_output_retry_round_trip_and_continue() -> None:
    agent, history = run_tools_and_retries()

    converted = assert_round_trip_keeps_everything(history)

    # Both retry shapes (RetryPromptPart < 2.60, outcome='retried' / RetryFeedbackPart 2.60+) are one canonical part.
    retries = canonical_retry_parts(history)
    assert [(r.tool_call_id, r.tool_name) for r in retries] == [
        ("call_flaky", "flaky"),
        ("call_bad", "add"),
        (None, None),
    ]
    assert retries[0].content == "try again with x=2"
    assert isinstance(retries[1].content, list)
    assert retries[1].content[0]["type"] == "json_invalid"
    assert retries[2].content == "not good enough"
    calls = canonical.tool_call_ids(to_canonical(history))
    assert calls == ["call_add", "call_flaky", "call_bad", "call_noop", "call_flaky_2", "call_add_2"]

    continued = asyncio.run(agent.run("and again", message_history=converted))
    assert continued.output.startswith("more done")
    assert history_signature(continued.all_messages()[: len(converted)]) == history_signature(converted)


def test_parallel_call_arguments_keep_their_meaning() -> None:
    _, history = run_tools_and_retries()
    converted = through_canonical_json(history)

    def arguments(messages: Sequence[ModelMessage]) -> dict[str, dict[str, Any]]:
        return {
            part.tool_call_id: part.args_as_dict()
            for message in messages
            for part in message.parts
            if part.part_kind == "tool-call"
        }

    assert arguments(converted) == arguments(history)
    assert arguments(converted)["call_bad"] == {"INVALID_JSON": '{"a": 1, "b": '}
    assert arguments(converted)["call_noop"] == {}


def test_deferred_calls_persisted_as_canonical_json_between_the_runs_resume() -> None:
    agent = deferred_agent()
    first = asyncio.run(agent.run("do stuff"))
    assert isinstance(first.output, DeferredToolRequests)
    pending = sorted(call.tool_call_id for call in [*first.output.calls, *first.output.approvals])

    stored = dumps_history(to_canonical(first.all_messages()))  # what an application writes to disk
    restored = to_pydantic_ai(loads_history(stored))
    assert history_signature(restored) == history_signature(first.all_messages())

    resumed = asyncio.run(agent.run(message_history=restored, deferred_tool_results=deferred_results()))
    assert resumed.output == "all done"
    answered: dict[str, str] = {
        part.tool_call_id: ("retry" if is_tool_retry(part) else part.outcome)
        for part in parts_of(resumed.all_messages())
        if part.part_kind in ("tool-return", "retry-prompt")
    }
    assert sorted(set(answered) - {"quick_1"}) == pending
    assert answered == {
        "quick_1": "success",
        "ext_1": "success",
        "approve_1": "success",
        "approve_2": "denied",
        "job_1": "retry",
    }

    converted = assert_round_trip_keeps_everything(resumed.all_messages())
    again = asyncio.run(agent.run("thanks", message_history=converted))
    assert again.output == "more done 2"


def test_cancelled_run_history_round_trips_and_resumes_with_an_interrupted_return() -> None:
    # The trailing request of a cancelled run has `state='interrupted'` (both eras); that flag is what makes the
    # next run close the unanswered `slow_1` call. The canonical Message must carry it:
    # without it the continued history sends the model a tool call that never gets a result.
    agent, history = run_cancelled()
    assert history_signature(history)[1][1] == [
        ("tool-call", "fast_1", "fast", {}),
        ("tool-call", "slow_1", "slow", {"n": 1}),
    ]

    converted = assert_round_trip_keeps_everything(history)

    resumed = asyncio.run(agent.run("continue", message_history=converted))
    assert resumed.output == "resumed ok 1"
    outcomes = {
        part.tool_call_id: part.outcome for part in parts_of(resumed.all_messages()) if part.part_kind == "tool-return"
    }
    assert outcomes == {"fast_1": "success", "slow_1": "interrupted"}
    assert_round_trip_keeps_everything(resumed.all_messages())
