"""pydantic-ai objects <-> canonical history, and pydantic-ai dumps of every supported version.

The dumps in `convert_data/` were written by real agent runs on pydantic-ai 2.38.0 and 2.68.0
(`convert_data/generate_dumps.py`); each pinned version must read both.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    BinaryContent,
    CachePoint,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history import canonical
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.history.wire import dumps_history, history_from_json, loads_history
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.models.conversion import (
    dump_pydantic_ai_json,
    load_pydantic_ai_json,
    response_usage,
    to_canonical,
    to_pydantic_ai,
    usage_from_run,
)
from tests.runtime.history_scenarios import history_signature, run_tools_and_retries, tools_and_retries_agent

DUMPS = Path(__file__).parent / "convert_data"
DUMP_VERSIONS = ("2.38.0", "2.68.0")
HISTORIES = ("tools-and-retries", "deferred", "validation-errors")


def dump_path(history: str, pydantic_ai_version: str) -> Path:
    return DUMPS / f"{history}-{pydantic_ai_version}.json"


def without_run_ids(history: list[canonical.Message]) -> list[canonical.Message]:
    return without_per_run_values(history)


def through_json(messages: list[ModelMessage]) -> list[ModelMessage]:
    return to_pydantic_ai(loads_history(dumps_history(to_canonical(messages))))


# --- dumps written by other versions -----------------------------------------------------------------------


@pytest.mark.parametrize("history", HISTORIES)
def test_dumps_of_both_retry_eras_have_the_same_canonical_form(history: str) -> None:
    old, new = (history_from_json(json.loads(dump_path(history, v).read_bytes())) for v in DUMP_VERSIONS)
    assert without_run_ids(old) == without_run_ids(new)


def test_retries_of_both_eras_become_canonical_retry_prompts() -> None:
    for pydantic_ai_version in DUMP_VERSIONS:
        history = history_from_json(json.loads(dump_path("tools-and-retries", pydantic_ai_version).read_bytes()))
        retries = [part for _, _, part in canonical.iter_parts(history) if isinstance(part, canonical.RetryPromptPart)]
        assert [(r.tool_call_id, r.tool_name) for r in retries] == [
            ("call_flaky", "flaky"),
            ("call_bad", "add"),
            (None, None),  # the output retry: 2.38 gave it a random id that references no call
        ], pydantic_ai_version
        assert canonical.tool_retry_ids(history) == ["call_flaky", "call_bad"]


@pytest.mark.parametrize("pydantic_ai_version", DUMP_VERSIONS)
@pytest.mark.parametrize("history", HISTORIES)
def test_a_dump_of_any_version_loads_on_the_installed_one(history: str, pydantic_ai_version: str) -> None:
    path = dump_path(history, pydantic_ai_version)
    loaded = load_pydantic_ai_json(path.read_bytes(), source=path)
    assert without_run_ids(to_canonical(loaded)) == without_run_ids(history_from_json(json.loads(path.read_bytes())))


@pytest.mark.parametrize("pydantic_ai_version", DUMP_VERSIONS)
def test_a_loaded_dump_of_any_version_continues_on_the_installed_one(pydantic_ai_version: str) -> None:
    loaded = load_pydantic_ai_json(dump_path("tools-and-retries", pydantic_ai_version).read_bytes())
    result = asyncio.run(tools_and_retries_agent().run("and again", message_history=loaded))
    assert result.output == "more done 4"


def test_the_installed_versions_dump_loads_without_loss() -> None:
    _, history = run_tools_and_retries()
    native = ModelMessagesTypeAdapter.dump_json(history)
    assert load_pydantic_ai_json(native) == ModelMessagesTypeAdapter.validate_json(native)  # timestamps, usage kept


def test_dump_pydantic_ai_json_is_what_the_installed_version_validates() -> None:
    _, history = run_tools_and_retries()
    dumped = dump_pydantic_ai_json(to_canonical(history), pretty=True)
    assert history_signature(ModelMessagesTypeAdapter.validate_json(dumped)) == history_signature(history)


def test_load_pydantic_ai_json_reads_canonical_and_legacy_forms() -> None:
    legacy = b'[{"content": "hi"}, {"thought": "hmm"}, {"role": "assistant", "content": "hello"}]'
    loaded = load_pydantic_ai_json(legacy)
    assert history_signature(loaded) == [("request", [("user-prompt", "hi")]), ("response", [("text", "hello")])]
    canonical_document = dumps_history(to_canonical(loaded))
    assert history_signature(load_pydantic_ai_json(canonical_document)) == history_signature(loaded)


# --- arguments keep their meaning -------------------------------------------------------------------------

ARGUMENT_CASES: list[Any] = [
    {"a": 1, "nested": {"b": [1, 2]}},  # dict
    '{"a": 1}',  # JSON object as a string
    '{"a": 1',  # malformed JSON
    "[1, 2]",  # JSON, but not an object
    '"str"',
    "null",
    "  ",
    None,  # empty, four ways
    "",
    "{}",
    {},
]


@pytest.mark.parametrize("args", ARGUMENT_CASES)
def test_tool_call_arguments_keep_their_meaning(args: Any) -> None:
    original = ModelResponse(parts=[ToolCallPart("tool", args, tool_call_id="c1")])
    (converted,) = through_json([original])
    part = converted.parts[0]
    assert isinstance(part, ToolCallPart)
    assert part.args_as_dict() == ToolCallPart("tool", args, tool_call_id="c1").args_as_dict()
    assert part.tool_call_id == "c1"


# --- parts canonical does not model are kept opaquely --------------------------------------------------------


def test_a_multimodal_user_prompt_is_user_content_with_media_types_and_hashes() -> None:
    image = BinaryContent(data=b"\x89PNG-bytes", media_type="image/png")
    original = ModelRequest(
        parts=[UserPromptPart(["look at this", ImageUrl(url="https://example.com/a.png"), image, CachePoint()])]
    )
    history = to_canonical([original])
    (part,) = history[0].parts
    assert isinstance(part, canonical.UserContentPart)
    text, url, file, cache_point = part.content
    assert text == "look at this"
    assert url == canonical.UrlContent(url="https://example.com/a.png", kind="image-url", media_type="image/png")
    assert isinstance(file, canonical.FileContent)
    assert (file.data, file.media_type, file.identifier) == (b"\x89PNG-bytes", "image/png", None)
    assert file.sha256 == hashlib.sha256(b"\x89PNG-bytes").hexdigest()
    assert isinstance(cache_point, canonical.OpaqueContent)  # kept verbatim, written back as it was
    assert history_signature(through_json([original])) == history_signature([original])


# --- errors ------------------------------------------------------------------------------------------------


def test_a_part_the_installed_version_does_not_know_is_a_history_format_error() -> None:
    history = [canonical.Message.request(canonical.OpaquePart(part_kind="no-such-part", data={"x": 1}))]
    with pytest.raises(HistoryFormatError, match=r"history\.json: pydantic-ai .* cannot represent this history"):
        to_pydantic_ai(history, source="history.json")


def test_a_tool_call_in_a_request_is_a_history_format_error() -> None:
    history = [canonical.Message.request(canonical.ToolCallPart(tool_call_id="c1", tool_name="t"))]
    with pytest.raises(HistoryFormatError):
        to_pydantic_ai(history)


def test_bad_json_names_the_source() -> None:
    with pytest.raises(HistoryFormatError, match=r"dump\.json"):
        load_pydantic_ai_json(b'[{"kind": ', source="dump.json")


# --- usage -------------------------------------------------------------------------------------------------


def test_usage_from_run_and_response() -> None:
    agent = tools_and_retries_agent()
    result = asyncio.run(agent.run("add 1 and 2"))
    usage = usage_from_run(result)
    assert (usage.requests, usage.input_tokens, usage.output_tokens) == (4, 406, 46)
    assert usage.tool_calls == 4  # add, noop, flaky (2nd), add (2nd): retried calls do not count
    assert not usage.estimated
    responses = [message for message in result.all_messages() if isinstance(message, ModelResponse)]
    per_response = [response_usage(response) for response in responses]
    assert [u.input_tokens for u in per_response] == [100, 101, 102, 103]
    assert all(u.requests == 1 for u in per_response)
    assert response_usage(responses[0], estimated=True).estimated


# --- property: the object round trip keeps every part, its order and every tool-bound id ----------------------

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
_keys = st.text(alphabet="abcdefgxyz_", min_size=1, max_size=6)
_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
)
_json_values = st.recursive(
    _json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3), max_leaves=8
)
_tool_ids = st.text(alphabet="abcdef0123456789_", min_size=1, max_size=12)
_tool_names = st.text(alphabet="abcdefghij_", min_size=1, max_size=10)
_args = st.one_of(
    st.dictionaries(_keys, _json_values, max_size=3),
    st.dictionaries(_keys, _json_values, max_size=3).map(json.dumps),
    st.sampled_from(ARGUMENT_CASES),
    _text,
)
_error_details = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.just("value_error"),
            "loc": st.lists(_keys, max_size=2).map(tuple),
            "msg": _text,
            "input": _json_values,
        }
    ),
    min_size=1,
    max_size=2,
)
_retry_content = _text | _error_details


@st.composite
def _request_parts(draw: st.DrawFn) -> ModelRequestPart:
    kind = draw(st.sampled_from(["user", "system", "return", "tool-retry", "output-retry"]))
    if kind == "user":
        return UserPromptPart(draw(_text))
    if kind == "system":
        return SystemPromptPart(draw(_text))
    if kind == "return":
        outcome: Literal["success", "failed", "denied", "interrupted"] = draw(
            st.sampled_from(["success", "failed", "denied", "interrupted"])
        )
        return ToolReturnPart(draw(_tool_names), draw(_json_values), draw(_tool_ids), outcome=outcome)
    if kind == "tool-retry":
        name, call_id, content = draw(_tool_names), draw(_tool_ids), draw(_retry_content)
        part: ModelRequestPart = pydantic_ai_compat.tool_retry_part(
            tool_name=name, tool_call_id=call_id, content=content
        )
        return part
    output_retry: ModelRequestPart = pydantic_ai_compat.output_retry_part(draw(_retry_content))
    return output_retry


@st.composite
def _response_parts(draw: st.DrawFn) -> ModelResponsePart:
    kind = draw(st.sampled_from(["text", "thinking", "call"]))
    if kind == "text":
        return TextPart(draw(_text))
    if kind == "thinking":
        return ThinkingPart(draw(_text), signature=draw(st.none() | _text))
    return ToolCallPart(draw(_tool_names), draw(_args), tool_call_id=draw(_tool_ids))


_messages = st.lists(
    st.one_of(
        st.lists(_request_parts(), max_size=4).map(lambda parts: ModelRequest(parts=parts)),
        st.lists(_response_parts(), max_size=4).map(
            lambda parts: ModelResponse(parts=parts, usage=RequestUsage(input_tokens=1, output_tokens=1))
        ),
    ),
    max_size=6,
)


@settings(deadline=None, max_examples=150)
@given(_messages)
def test_object_round_trip_keeps_every_part_order_and_id(messages: list[ModelMessage]) -> None:
    assert history_signature(through_json(messages)) == history_signature(messages)


# --- to_canonical reads objects directly; it must agree with pydantic-ai's own dump read by the wire reader -----


def through_pydantic_dump(messages: list[ModelMessage]) -> list[canonical.Message]:
    return history_from_json(ModelMessagesTypeAdapter.dump_python(messages, mode="json"))


@settings(deadline=None, max_examples=150)
@given(_messages)
def test_direct_read_agrees_with_the_pydantic_dump(messages: list[ModelMessage]) -> None:
    assert to_canonical(messages) == through_pydantic_dump(messages)


def test_direct_read_agrees_with_the_pydantic_dump_on_real_runs_and_odd_values() -> None:
    _, history = run_tools_and_retries()
    odd: list[ModelMessage] = [
        ModelResponse(parts=[ToolCallPart("t", {"x": float("nan"), "when": (1, 2)}, tool_call_id="c1")]),
        ModelRequest(
            parts=[
                ToolReturnPart("t", {"n": float("inf"), "at": (1, "x")}, tool_call_id="c1"),
                UserPromptPart(["look", ImageUrl(url="https://example.com/a.png")]),
            ]
        ),
        ModelRequest(parts=[ToolReturnPart("t", ImageUrl(url="https://example.com/b.png"), tool_call_id="c2")]),
    ]
    for messages in (history, odd):
        assert to_canonical(messages) == through_pydantic_dump(messages)
