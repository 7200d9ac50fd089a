"""Normalized usage: both vocabularies, stored JSON with old names, pydantic-ai objects by duck typing."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.usage import Usage


def test_seed_contract_names_mirror_the_2x_names() -> None:
    usage = Usage(input_tokens=100, output_tokens=20, cache_read_tokens=40)
    assert (usage.request_tokens, usage.response_tokens, usage.cached_tokens) == (100, 20, 40)
    assert usage.total_tokens == 120


def test_addition_and_total() -> None:
    first = Usage(requests=1, tool_calls=2, input_tokens=10, output_tokens=1, cache_write_tokens=3)
    second = Usage(requests=1, input_tokens=5, output_tokens=2, cache_read_tokens=4, estimated=True)
    assert first + second == Usage(
        requests=2,
        tool_calls=2,
        input_tokens=15,
        output_tokens=3,
        cache_read_tokens=4,
        cache_write_tokens=3,
        estimated=True,
    )
    assert Usage.total([first, second]) == first + second
    assert Usage.total([]) == Usage()


def test_json_round_trip_and_old_names() -> None:
    usage = Usage(requests=3, tool_calls=2, input_tokens=226, output_tokens=53, cache_read_tokens=40, estimated=True)
    stored = usage.to_json()
    assert stored["request_tokens"] == 226
    assert stored["total_tokens"] == 279
    assert Usage.from_json(stored) == usage
    assert Usage.from_json({"request_tokens": 5, "response_tokens": 2, "cached_tokens": 1}) == Usage(
        input_tokens=5, output_tokens=2, cache_read_tokens=1
    )
    # the 2.x name wins over an old alias written beside it
    assert Usage.from_json({"input_tokens": 7, "request_tokens": 5}).input_tokens == 7


def test_pydantic_ai_usage_dump_loads_ignoring_unknown_keys() -> None:
    # RunUsage as pydantic-ai 2.68 dumps it
    dumped = {
        "input_tokens": 226,
        "cache_write_tokens": 0,
        "cache_write_1h_tokens": 0,
        "cache_read_tokens": 40,
        "output_tokens": 53,
        "output_reasoning_tokens": 0,
        "input_audio_tokens": 0,
        "audio_seconds": 0.0,
        "details": {},
        "cost": None,
        "requests": 3,
        "tool_calls": 2,
    }
    assert Usage.from_json(dumped) == Usage(
        requests=3, tool_calls=2, input_tokens=226, output_tokens=53, cache_read_tokens=40
    )


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, None])
def test_bad_counters_are_refused_with_the_field(bad: object) -> None:
    with pytest.raises(HistoryFormatError, match=r"session_total_usage\.input_tokens: expected a non-negative integer"):
        Usage.from_json({"input_tokens": bad}, where="session_total_usage")


def test_estimated_flag_must_be_a_boolean() -> None:
    assert Usage.from_json({"estimated": True}).estimated
    with pytest.raises(HistoryFormatError, match=r"usage\.estimated: expected true or false, got 'false'"):
        Usage.from_json({"estimated": "false"})


def test_from_object_reads_request_and_run_usage_by_duck_typing() -> None:
    @dataclass
    class RequestUsageLike:
        input_tokens: int = 120
        output_tokens: int = 14
        cache_read_tokens: int = 0
        cache_write_tokens: int = 0

        @property
        def requests(self) -> int:  # pydantic-ai's RequestUsage.requests is a property that is always 1
            return 1

    @dataclass
    class RunUsageLike:
        requests: int = 3
        tool_calls: int = 2
        input_tokens: int = 226
        output_tokens: int = 53
        cache_read_tokens: int = 40
        cache_write_tokens: int | None = None

    assert Usage.from_object(RequestUsageLike()) == Usage(requests=1, input_tokens=120, output_tokens=14)
    assert Usage.from_object(RunUsageLike(), estimated=True) == Usage(
        requests=3, tool_calls=2, input_tokens=226, output_tokens=53, cache_read_tokens=40, estimated=True
    )


def test_from_object_with_real_pydantic_ai_usage() -> None:
    from pydantic_ai.usage import RequestUsage, RunUsage

    assert Usage.from_object(RequestUsage(input_tokens=100, output_tokens=20, cache_read_tokens=40)) == Usage(
        requests=1, input_tokens=100, output_tokens=20, cache_read_tokens=40
    )
    run = RunUsage(requests=3, tool_calls=2, input_tokens=226, output_tokens=53)
    assert Usage.from_object(run) == Usage(requests=3, tool_calls=2, input_tokens=226, output_tokens=53)
