"""Stored histories crossing versions: the fixture conversation as every pinned pydantic-ai version dumped it
(`data/history-<version>.json`, written by `data/generate.py`) loads on the installed version, has the same
canonical form as every other version's dump, and the conversation continues from it.

A dump loads natively when the installed version validates it (every 2.x reads the older `retry-prompt`
parts); a 2.60+ dump on 2.38-2.59 goes through the canonical form (`convert.load_pydantic_ai_json`), because
`outcome='retried'` and `retry-feedback` are unknown there.
"""

from __future__ import annotations

import asyncio
import re
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import ValidationError
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessagesTypeAdapter, TextPart

from agentrig.runtime.history import canonical
from agentrig.runtime.history.invariants import check_invariants
from agentrig.runtime.history.wire import history_from_json
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.models.conversion import load_pydantic_ai_json, to_canonical
from agentrig.runtime.runfolder import jsonio
from tests.compatibility import conversation
from tests.compatibility.support import RecordedScript

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "conversation.canonical.json"
PINNED_VERSIONS = ("2.38.0", "2.40.0", "2.59.0", "2.60.0", "2.68.0", "2.78.0")


def version_tuple(text: str) -> tuple[int, int, int]:
    major, minor, patch = (int(piece) for piece in text.split("."))
    return major, minor, patch


def golden() -> list[canonical.Message]:
    return history_from_json(jsonio.read_json_file(GOLDEN), source=GOLDEN)


# From 2.60 (`RetryFeedbackPart`) an output retry reaches the model as user text: an attribution line, then the
# feedback fenced in `<retry_feedback>` (2.60) or `<pyai:retry_feedback>` (2.68). The history stores the retry part.
RENDERED_OUTPUT_RETRY = re.compile(
    r"\AYour previous response failed the application's validation [^\n]*\n"
    r"<(?:pyai:)?retry_feedback>\n(?P<feedback>.*)\n</(?:pyai:)?retry_feedback>\Z",
    re.DOTALL,
)


def unrender_output_retries(history: list[canonical.Message]) -> tuple[list[canonical.Message], int]:
    """The model's input with rendered output-retry feedback turned back into retry parts, and how many there were."""
    rendered = 0

    def restore(part: canonical.Part) -> canonical.Part:
        nonlocal rendered
        if isinstance(part, canonical.TextPart) and (match := RENDERED_OUTPUT_RETRY.match(part.content)):
            rendered += 1
            return canonical.RetryPromptPart(content=match["feedback"])
        return part

    restored = [message.with_parts([restore(part) for part in message.parts]) for message in history]
    return restored, rendered


def fixture(version: str) -> Path:
    return DATA / f"history-{version}.json"


def test_every_pinned_version_has_a_fixture() -> None:
    # Keep the fixtures in step with the pins in pyproject.toml (regenerate with data/generate.py).
    with (Path(__file__).parents[2] / "pyproject.toml").open("rb") as file:
        pins = tomllib.load(file)["tool"]["agentrig"]["pydantic-ai-versions"]
    assert tuple(pins) == PINNED_VERSIONS
    assert sorted(path.name for path in DATA.glob("history-*.json")) == sorted(
        fixture(version).name for version in PINNED_VERSIONS
    )


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_fixture_is_in_its_version_shape(version: str) -> None:
    # The fixtures really differ where the versions differ: 2.60 changed how retries are written.
    text = fixture(version).read_text()
    writes_retried = version_tuple(version) >= (2, 60, 0)
    assert ('"retry-feedback"' in text) is writes_retried
    assert ('"outcome": "retried"' in text) is writes_retried
    assert ('"retry-prompt"' in text) is not writes_retried


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_native_loading_matches_the_documented_version_rule(version: str) -> None:
    # 2.60+ reads older dumps; 2.38-2.59 reject 2.60+ dumps.
    data = fixture(version).read_bytes()
    loads_natively = pydantic_ai_compat.HAS_RETRY_FEEDBACK or version_tuple(version) < (2, 60, 0)
    if loads_natively:
        ModelMessagesTypeAdapter.validate_json(data)
    else:
        with pytest.raises(ValidationError):
            ModelMessagesTypeAdapter.validate_json(data)


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_stored_history_has_the_same_canonical_form_on_every_version(version: str) -> None:
    loaded = load_pydantic_ai_json(fixture(version).read_bytes(), source=fixture(version))

    assert to_canonical(loaded) == golden()
    # Read at the dict level, without the installed version's objects, it is the same too.
    assert history_from_json(jsonio.read_json_file(fixture(version))) == golden()
    assert check_invariants(golden()) == []


def test_installed_version_still_produces_the_golden_conversation() -> None:
    messages = asyncio.run(conversation.run_conversation())
    assert to_canonical(messages) == golden()


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_conversation_continues_from_every_stored_history(version: str) -> None:
    loaded = load_pydantic_ai_json(fixture(version).read_bytes(), source=fixture(version))
    scripted = RecordedScript(script=[[TextPart("You're welcome.")]])
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        scripted.model(), output_type=[str, DeferredToolRequests], instructions="Be terse."
    )

    result = asyncio.run(agent.run("Thanks!", message_history=loaded, run_id="turn-5"))

    assert result.output == "You're welcome."
    (received,) = scripted.received
    seen = to_canonical(received)
    model_input, rendered_retries = unrender_output_retries(seen[:-1])
    assert model_input == golden()
    assert rendered_retries == (1 if pydantic_ai_compat.RETRY_SHAPE == "retried" else 0)
    # The new run continues the stored conversation: pydantic-ai takes the latest `conversation_id` of the history it
    # is given (2.54+; the fixture's), which the canonical form carries.
    continued = "fixture-conversation" if pydantic_ai_compat.supports_run_kwarg("conversation_id") else None
    request = canonical.Message.request(canonical.TextPart(content="Thanks!"), run_id="turn-5")
    assert seen[-1] == replace(request, conversation_id=continued)
    stored = to_canonical(result.all_messages())
    assert stored[:-2] == golden()
    assert check_invariants(stored) == []
