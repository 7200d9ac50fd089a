"""Hypothesis strategies for canonical histories (shared by the wire and history_ops tests)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from agentrig.runtime.history.canonical import (
    URL_KINDS,
    CapabilityPart,
    FileContent,
    Message,
    OpaqueContent,
    OpaquePart,
    Part,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
    UrlContent,
    UserContentPart,
)

# orjson refuses lone surrogates, which no JSON file can hold as text anyway.
texts = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=20)
keys = st.text(alphabet="abcdefgh_", min_size=1, max_size=6)

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(keys, json_values, max_size=4)

tool_kinds = st.none() | st.sampled_from(["output", "tool-search", "myapp.search"])
visibilities = st.none() | st.sampled_from(["public", "redacted", "private"])

# Strings that are not a JSON object stay raw strings (a string holding an object becomes a dict on load).
raw_args = texts.map(lambda tail: "[" + tail) | texts.map(lambda tail: "not json " + tail)


def tool_parts(tool_call_ids: st.SearchStrategy[str]) -> st.SearchStrategy[Part]:
    """Tool calls, returns and retry prompts drawing ids from `tool_call_ids`."""
    names = st.sampled_from(["bash", "read_file", "search"])
    calls = st.builds(
        ToolCallPart,
        tool_call_id=tool_call_ids,
        tool_name=names,
        args=json_objects | raw_args,
        tool_kind=tool_kinds,
        ui_visibility=visibilities,
        id=st.none() | texts,
        provider_name=st.none() | texts,
        provider_details=st.none() | json_objects,
    )
    returns = st.builds(
        ToolReturnPart,
        tool_call_id=tool_call_ids,
        content=json_values,
        tool_name=st.none() | names,
        outcome=st.sampled_from(["success", "failed", "denied", "interrupted"]),
        tool_kind=tool_kinds,
        ui_visibility=visibilities,
        metadata=json_values,
        content_file_digests=st.none() | st.lists(texts, min_size=1, max_size=2),
    )
    retry_content = texts | st.lists(json_objects, max_size=2)
    causes = st.none() | st.sampled_from(["unavailable_tool", "x-future-cause"])
    tool_retries = st.builds(
        RetryPromptPart,
        content=retry_content,
        tool_name=names,
        tool_call_id=tool_call_ids,
        cause=causes,
        tool_kind=tool_kinds,
        ui_visibility=visibilities,
    )
    output_retries = st.builds(RetryPromptPart, content=retry_content, cause=causes)
    return calls | returns | tool_retries | output_retries


opaque_parts = st.builds(
    OpaquePart,
    part_kind=st.sampled_from(["file", "builtin-tool-call", "compaction", "x-future-kind"]),
    data=json_objects,
)

media_types = st.sampled_from(["image/png", "image/jpeg", "application/pdf", "audio/wav", "text/plain"])
file_contents = st.builds(
    FileContent,
    data=st.binary(max_size=24),
    media_type=media_types,
    # an explicit identifier: pydantic-ai's default one (SHA-1 prefix of the data) is never kept, so "" stands apart
    identifier=st.none() | st.sampled_from(["file-1", "notes"]),
    vendor_metadata=st.none() | json_objects,
)
url_contents = st.builds(
    UrlContent,
    url=st.sampled_from(["https://example.com/a.png", "https://example.com/doc", "data:text/plain,hi"]),
    kind=st.sampled_from(URL_KINDS),
    media_type=st.none() | media_types,
    identifier=st.none() | st.just("link-1"),
    force_download=st.sampled_from([False, True, "allow-local"]),
    vendor_metadata=st.none() | json_objects,
)
opaque_contents = st.builds(
    OpaqueContent, kind=st.sampled_from(["cache-point", "uploaded-file", "x-future-item"]), data=json_objects
)
user_content_items = texts | file_contents | url_contents | opaque_contents
user_content_parts = st.lists(user_content_items, max_size=4).map(lambda items: UserContentPart(content=tuple(items)))
""" pydantic-ai multi-modal user prompts: text, files, URLs and items the canonical model keeps verbatim."""

capability_parts = st.builds(
    CapabilityPart,
    kind=st.sampled_from(["myapp.weather", "pydantic_ai.capability_instruction"]),
    content=json_values,
    record_id=st.none() | texts,
    data=st.dictionaries(st.sampled_from(["source", "scope", "rendering", "city"]), json_values, max_size=3),
)

simple_parts = (
    st.builds(
        TextPart,
        content=texts,
        id=st.none() | texts,
        provider_name=st.none() | texts,
        provider_details=st.none() | json_objects,
        citations=st.none() | st.lists(json_objects, max_size=2),
    )
    | st.builds(
        SystemPromptPart,
        content=texts,
        dynamic_ref=st.none() | texts,
        context_id=st.none() | texts,
        scope=st.none() | st.just("request"),
        metadata=json_values,
    )
    | capability_parts
    | st.builds(
        ThoughtPart,
        content=texts,
        signature=st.none() | texts,
        provider_name=st.none() | texts,
        id=st.none() | texts,
        provider_details=st.none() | json_objects,
    )
)

any_parts: st.SearchStrategy[Part] = simple_parts | tool_parts(texts) | opaque_parts | user_content_parts

messages = st.builds(
    Message,
    kind=st.sampled_from(["request", "response"]),
    parts=st.lists(any_parts, max_size=4).map(tuple),
    run_id=st.none() | texts,
    conversation_id=st.none() | texts,
    metadata=st.none() | json_objects,
    failed_attempts=st.none() | st.lists(json_objects, max_size=2),
    workspace_ref=json_values,
)
histories = st.lists(messages, max_size=8)


def _request_part(ids: st.SearchStrategy[str]) -> st.SearchStrategy[Part]:
    return (
        st.builds(TextPart, content=st.sampled_from(["hi", "", "go on"]))
        | st.builds(ToolReturnPart, tool_call_id=ids, content=st.just("result"), tool_name=st.just("bash"))
        | st.builds(RetryPromptPart, content=st.just("again"), tool_name=st.just("bash"), tool_call_id=ids)
        | st.builds(SystemPromptPart, content=st.just("sys"))
    )


def _response_part(ids: st.SearchStrategy[str]) -> st.SearchStrategy[Part]:
    return (
        st.builds(TextPart, content=st.sampled_from(["ok", "", "  "]))
        | st.builds(ThoughtPart, content=st.just("hmm"))
        | st.builds(ToolCallPart, tool_call_id=ids, tool_name=st.just("bash"), args=st.just({"c": "ls"}))
    )


def _conversation_message(ids: st.SearchStrategy[str]) -> st.SearchStrategy[Message]:
    requests = st.lists(_request_part(ids), max_size=3).map(lambda parts: Message.request(*parts))
    responses = st.lists(_response_part(ids), max_size=3).map(lambda parts: Message.response(*parts))
    return requests | responses


# Few ids, so calls, returns and duplicates meet often: the shapes the cleanup loop must handle.
conversations = st.lists(_conversation_message(st.sampled_from(["c1", "c2", "c3"])), max_size=10)
