"""Every field of the installed pydantic-ai's messages and parts is carried by the canonical form or on its list of
what is not, with the reason (`history/field_inventory.py`); a file with a field on neither list is named.

CI runs this on every pinned version, and every day on the newest release (`nox -s compat_latest`): a release that
adds a field fails here the day it lands, instead of the canonical form dropping the field in silence.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentrig.runtime.history import field_inventory
from agentrig.runtime.history.field_inventory import FieldRule, describe_unknown, unknown_fields
from agentrig.runtime.models import message_fields, pydantic_ai_compat
from agentrig.runtime.models.message_fields import inventory, inventory_json, message_classes
from agentrig.runtime.runfolder import jsonio
from tests.compatibility import conversation

REPO = Path(__file__).resolve().parents[2]
DUMPS = sorted(
    [
        *REPO.glob("tests/compatibility/data/history-*.json"),
        *REPO.glob("tests/runtime/convert_data/*.json"),
        *REPO.glob("tests/runtime/data/pydantic_ai_*_dump.json"),
        *REPO.glob("scenarios/fixtures/pydantic-ai-*-dump.json"),
    ]
)
"""pydantic-ai's own dumps, written by the pinned releases (2.38 to 2.78) and by 1.107."""


def test_every_field_of_the_installed_pydantic_ai_is_carried_or_listed_with_its_reason() -> None:
    entries = inventory()
    unknown = [f"{entry.class_name}.{entry.field} ({entry.owner})" for entry in entries if entry.rule is None]
    assert unknown == [], (
        f"pydantic-ai {pydantic_ai_compat.PYDANTIC_AI_VERSION_TEXT} has fields the canonical form neither carries "
        "nor lists: add each to history/field_inventory.py (and carry it if a round trip would change behaviour)"
    )
    assert all(entry.rule is not None and entry.rule.note for entry in entries)


def test_the_walk_reaches_every_message_and_part_class() -> None:
    names = {cls.__name__ for _, cls in message_classes()}
    assert {"ModelRequest", "ModelResponse", "UserPromptPart", "ToolCallPart", "ToolReturnPart", "TextPart"} <= names
    assert {"ThinkingPart", "SystemPromptPart", "NativeToolCallPart", "FilePart"} <= names
    if pydantic_ai_compat.HAS_RETRY_FEEDBACK:
        assert {"RetryFeedbackPart", "RetryInfo"} <= names
    if pydantic_ai_compat.MARKS_DEFERRED_PAUSE:  # 2.78
        assert {"CapabilityPart", "DataCapabilityPart", "InstructionCapabilityPart", "ModelRequestAttempt"} <= names
    # Private classes pydantic-ai builds only while preparing a request (2.78 `models._RenderedCapabilityBody`) are
    # never stored, so they are no part of a history.
    assert not [name for name in names if name.startswith(("_Rendered", "_Framework"))]


def test_a_field_taken_off_the_list_fails_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    fields = {owner: dict(rules) for owner, rules in field_inventory.FIELDS.items()}
    del fields["tool-return"]["metadata"]
    monkeypatch.setattr(field_inventory, "FIELDS", fields)
    unknown = [(entry.owner, entry.field) for entry in inventory() if entry.rule is None]
    assert unknown == [("tool-return", "metadata")]
    unknown_rows = json.loads(inventory_json())["unknown"]
    assert [(row["owner"], row["field"]) for row in unknown_rows] == [("tool-return", "metadata")]


def test_inventory_json_names_the_version_and_what_is_not_carried() -> None:
    document = json.loads(message_fields.inventory_json())
    assert document["pydantic_ai"] == pydantic_ai_compat.PYDANTIC_AI_VERSION_TEXT
    rows = {(row["owner"], row["field"]): row for row in document["fields"]}
    assert rows[("tool-call", "tool_kind")]["carried"] is True
    assert rows[("response", "usage")]["carried"] is False
    assert rows[("response", "usage")]["how"] == "not carried"
    assert rows[("user-prompt", "timestamp")]["how"] == "per-run"
    assert document["unknown"] == []


@pytest.mark.parametrize("dump", DUMPS, ids=lambda path: path.name)
def test_no_field_of_a_real_dump_is_unknown(dump: Path) -> None:
    assert unknown_fields(jsonio.read_json_file(dump)) == []


def test_no_field_of_the_installed_versions_own_dump_is_unknown() -> None:
    # What the installed release writes (serializer-only keys included, e.g. `content_file_digests`), not only what
    # its dataclasses declare: the compatibility conversation has thinking, tools, retries, a cancellation and a
    # deferred call.
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    messages = asyncio.run(conversation.run_conversation())
    dumped = json.loads(ModelMessagesTypeAdapter.dump_json(messages))
    assert unknown_fields(dumped) == []


def test_an_unknown_field_and_an_unknown_part_kind_are_named_once_with_their_count() -> None:
    dump = [
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi", "tone": "warm"}], "mood": 1},
        {
            "kind": "response",
            "parts": [{"part_kind": "hologram", "content": "x"}, {"part_kind": "text", "content": "y"}],
        },
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "again", "tone": "cold"}]},
    ]
    found = unknown_fields(dump)
    assert [(f.owner, f.field, f.first, f.count) for f in found] == [
        ("part kind", "hologram", "[1].parts[0]", 1),
        ("request", "mood", "[0]", 1),
        ("user-prompt", "tone", "[0].parts[0]", 2),
    ]
    assert describe_unknown(found[2]) == (
        "field user-prompt.tone ([0].parts[0], 2 times) is unknown to agentrig's canonical form: it is not carried "
        "(docs/canonical-format.md)"
    )
    assert describe_unknown(found[0]).startswith("part kind 'hologram' ([1].parts[0]) is unknown to agentrig")


def test_a_canonical_document_agentrig_wrote_has_no_unknown_field() -> None:
    document = jsonio.read_json_file(REPO / "tests" / "compatibility" / "data" / "conversation.canonical.json")
    assert unknown_fields(document) == []


def test_every_rule_says_how_and_why() -> None:
    rules: list[FieldRule] = [rule for owner in field_inventory.FIELDS.values() for rule in owner.values()]
    assert all(rule.how in ("carried", "derived", "per-run", "not carried") for rule in rules)
    assert all(len(rule.note) > 5 for rule in rules)
