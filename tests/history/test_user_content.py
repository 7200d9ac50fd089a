"""User content in the canonical history: files and URLs with their media type and content hash, read from every
vocabulary (canonical, pydantic-ai dumps, tinyagent, agentrig's older opaque parts) and written back to each."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentrig.errors import HistoryFormatError
from agentrig.media_types import guess_media_type
from agentrig.runtime.history.canonical import (
    FileContent,
    Message,
    OpaqueContent,
    TextPart,
    UrlContent,
    UserContentPart,
)
from agentrig.runtime.history.tinyagent_format import MARKER, messages_from_tinyagent, messages_to_tinyagent
from agentrig.runtime.history.user_content import default_identifier, describe_prompt, elide_base64_data
from agentrig.runtime.history.wire import dumps_history, history_from_json, loads_history
from tests.runtime.history_strategies import user_content_parts

PNG = b"\x89PNG\r\n\x1a\n-pixels"


def _request(*items: Any) -> dict[str, Any]:
    return {"kind": "request", "parts": [{"part_kind": "user-content", "content": list(items)}]}


def test_a_file_is_written_with_its_media_type_and_sha256() -> None:
    part = UserContentPart(content=("look", FileContent(data=PNG, media_type="image/png")))
    written = json.loads(dumps_history([Message.request(part)]))["messages"][0]["parts"][0]
    assert written == {
        "part_kind": "user-content",
        "content": [
            "look",
            {
                "kind": "binary",
                "media_type": "image/png",
                "sha256": hashlib.sha256(PNG).hexdigest(),
                "data": base64.b64encode(PNG).decode(),
            },
        ],
    }


def test_data_that_does_not_match_its_sha256_is_refused_naming_the_field() -> None:
    item = {"kind": "binary", "media_type": "image/png", "sha256": "0" * 64, "data": base64.b64encode(PNG).decode()}
    with pytest.raises(HistoryFormatError) as raised:
        history_from_json({"format": "agentrig.history/1", "messages": [_request("x", item)]}, source="h.json")
    assert "messages[0].parts[0].content[1].sha256: does not match the data" in str(raised.value)


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"kind": "binary", "media_type": "image/png", "data": "!!"}, "content[0].data: not valid base64"),
        ({"kind": "binary", "data": "aGk="}, "content[0].media_type: expected a media type"),
        ({"kind": "image-url"}, "content[0].url: expected a string"),
        ({"kind": "image-url", "url": "u", "force_download": 3}, "content[0].force_download"),
        (5, "content[0]: expected text or an object with a kind"),
    ],
)
def test_a_bad_item_names_its_field(item: Any, field: str) -> None:
    with pytest.raises(HistoryFormatError, match=field.replace("[", r"\[").replace("]", r"\]")):
        history_from_json([_request(item)])


def test_pydantic_ai_s_computed_identifier_is_not_kept_an_explicit_one_is() -> None:
    # pydantic-ai dumps write a computed identifier (SHA-1 prefix) on every item, and URL-safe base64.
    data = base64.urlsafe_b64encode(b"\xfb\xff-bytes").decode()
    dump = [
        {
            "kind": "request",
            "parts": [
                {
                    "part_kind": "user-prompt",
                    "content": [
                        {"kind": "binary", "data": data, "media_type": "image/png",
                         "identifier": default_identifier(b"\xfb\xff-bytes"), "vendor_metadata": None},
                        {"kind": "image-url", "url": "https://x/a.png", "media_type": "image/png",
                         "identifier": "mine", "force_download": False, "vendor_metadata": None},
                    ],
                    "timestamp": "2026-01-01T00:00:00Z",
                }
            ],
        }
    ]  # fmt: skip
    (message,) = history_from_json(dump)
    (part,) = message.parts
    assert part == UserContentPart(
        content=(
            FileContent(data=b"\xfb\xff-bytes", media_type="image/png"),
            UrlContent(url="https://x/a.png", kind="image-url", media_type="image/png", identifier="mine"),
        )
    )


def test_older_files_still_load_their_images_and_multimodal_prompts() -> None:
    # agentrig before user-content parts kept both as opaque parts: a tinyagent image block, a pydantic-ai list.
    image = {
        "part_kind": "image",
        "url": "data:image/png;base64," + base64.b64encode(PNG).decode(),
        "mime_type": "image/png",
    }
    prompt = {"part_kind": "user-prompt", "content": ["hi", {"url": "https://x/y.png", "kind": "image-url"}],
              "timestamp": "2026-01-01T00:00:00Z"}  # fmt: skip
    history = history_from_json(
        {"format": "agentrig.history/1", "messages": [{"kind": "request", "parts": [image, prompt]}]}
    )
    assert history[0].parts == (
        UserContentPart(content=(FileContent(data=PNG, media_type="image/png"),)),
        UserContentPart(content=("hi", UrlContent(url="https://x/y.png", kind="image-url"))),
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(user_content_parts, min_size=1, max_size=3))
def test_user_content_round_trips_through_the_canonical_form(parts: list[UserContentPart]) -> None:
    history = [Message.request(*parts)]
    assert loads_history(dumps_history(history)) == history


def test_tinyagent_carries_images_and_marks_only_what_it_must() -> None:
    image = FileContent(data=PNG, media_type="image/png")
    alone = [Message.request(UserContentPart(content=("look", image)))]
    written = messages_to_tinyagent(alone)
    assert written == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {
                    "type": "image",
                    "url": "data:image/png;base64," + base64.b64encode(PNG).decode(),
                    "mime_type": "image/png",
                },
            ],
        }
    ]  # fmt: skip  (tunacode's own shape: no marker)
    assert messages_from_tinyagent(written) == (alone, [])
    # Next to a text part, or holding text only, a user-content part says where it starts and how long it is.
    mixed = [Message.request(TextPart(content="a"), UserContentPart(content=("b", image)), TextPart(content="c"))]
    blocks = messages_to_tinyagent(mixed)[0]["content"]
    assert [block.get(MARKER) for block in blocks] == [None, {"user_content": 2}, None, None]
    assert messages_from_tinyagent(messages_to_tinyagent(mixed)) == (mixed, [])
    text_only = [Message.request(UserContentPart(content=("just text",)))]
    assert messages_from_tinyagent(messages_to_tinyagent(text_only)) == (text_only, [])


@pytest.mark.parametrize(
    "item",
    [
        FileContent(data=b"%PDF", media_type="application/pdf"),
        UrlContent(url="https://x/d.pdf", kind="document-url", media_type="application/pdf"),
        OpaqueContent(kind="cache-point", data={}),
    ],
)
def test_what_tinyagent_cannot_hold_is_refused_naming_it(item: FileContent | UrlContent | OpaqueContent) -> None:
    with pytest.raises(HistoryFormatError) as raised:
        messages_to_tinyagent([Message.response(), Message.request(UserContentPart(content=("x", item)))])
    assert "messages[1].parts[0].content[1]" in str(raised.value)
    assert "has no tinyagent form (tinyagent's user messages hold text and images)" in str(raised.value)


def test_a_prompt_is_described_with_its_attachments_labelled() -> None:
    prompt = (
        "look",
        FileContent(data=PNG, media_type="image/png"),
        UrlContent(url="https://x/a.png", kind="image-url"),
    )
    assert describe_prompt(prompt) == (
        f"look\n<image/png, {len(PNG)} bytes, sha256:{hashlib.sha256(PNG).hexdigest()[:12]}>\n<image-url https://x/a.png>"
    )
    assert describe_prompt("text") == "text"


@pytest.mark.parametrize(
    ("name", "media_type"),
    [("a.PNG", "image/png"), ("https://x/y/report.pdf?v=2", "application/pdf"), ("notes.md", "text/markdown"),
     ("clip.wav", "audio/wav"), ("x.unknownext", None), ("https://x/noext", None)],
)  # fmt: skip
def test_media_types_come_from_one_fixed_table(name: str, media_type: str | None) -> None:
    assert guess_media_type(name) == media_type


def test_a_diff_shows_long_base64_data_by_its_size_and_hash() -> None:
    blob = bytes(range(256)) * 4
    digest = hashlib.sha256(blob).hexdigest()[:12]
    standard, urlsafe = base64.b64encode(blob).decode(), base64.urlsafe_b64encode(blob).decode()
    assert standard != urlsafe
    short = base64.b64encode(b"48 bytes or fewer are shown as they are").decode()
    text = "\n".join(
        [
            "{",
            f'  "data": "{standard}",',
            f'      "data": "{urlsafe}"',
            f'  "data": "{short}",',
            f'  "content": "{standard}",',  # not a data value: a text a tool returned
            f'  "data": "{standard[:-8]} {standard[-8:]}"',  # not base64
            "}",
        ]
    )
    lines = elide_base64_data(text).splitlines()
    assert lines[1] == f'  "data": "<1024 bytes in base64, sha256:{digest}>",'
    assert lines[2] == f'      "data": "<1024 bytes in base64, sha256:{digest}>"'
    assert lines[3:] == text.splitlines()[3:]
    not_decodable = "A" * 65  # 4n+1 characters: no bytes, labelled by the text's hash
    assert elide_base64_data(f'"data": "{not_decodable}"') == (
        f'"data": "<65 characters like base64, sha256 of the text:'
        f'{hashlib.sha256(not_decodable.encode()).hexdigest()[:12]}>"'
    )
