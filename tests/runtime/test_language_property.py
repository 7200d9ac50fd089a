"""Generated conversations that use the whole scenario language of issue 29, run and checked.

Each example is a scenario file: turns whose user message holds text, files, inline data and URLs; YAML tools whose
calls come with valid or invalid arguments and end successful, failed, denied or retried; a thought with its
provider's signature and details; a structured output (a JSON Schema, by output tool or as native JSON text) or a
text output, with output-validator rules by call number; turns ended by a provider error, a response the provider cut
short or an abort mid-tool. The scenario runs plain and streamed on pydantic-ai (and on tinyagent, when it holds what
the example uses), and then:

- every history invariant holds, and the tool registry agrees with the parts;
- the history says what the script said would happen: each call's outcome (validation errors as a retry with
  pydantic's details, `failed`, `denied`, `interrupted`), each attachment with its media type and SHA-256, each
  validator retry, each turn's error, interruption and output;
- the history survives canonical JSON and pydantic-ai messages unchanged, and equals the streamed run's (and the
  tinyagent run's).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import execute_scenario
from agentrig.runtime.engine.tinyagent_engine.execution import execute_scenario_tinyagent, unsupported_features
from agentrig.runtime.history.canonical import (
    FileContent,
    Message,
    Part,
    RetryPromptPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
    UrlContent,
    UserContentPart,
)
from agentrig.runtime.history.invariants import check_invariants
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.history.wire import dumps_history, loads_history
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.models.conversion import to_canonical, to_pydantic_ai
from agentrig.runtime.runfolder.jsonio import dumps
from agentrig.scenarios.loader import LoadedScenario, load_scenario_file

FILES = {"photo.png": b"\x89PNG-photo", "scan.pdf": b"%PDF-1.4 scan", "memo.wav": b"RIFF-memo"}
"""The attachment files every example may send (written next to its scenario file)."""

KEYS = {"a": "success", "b": "failed", "c": "denied"}
"""How the `lookup` tool ends a call, by its `key` argument."""


@dataclass(slots=True)
class Plan:
    """What one generated scenario scripts, and what its run must then hold."""

    outcomes: dict[str, str] = field(default_factory=dict[str, str])
    """Expected end of each tool call: success, failed, denied, retried (invalid arguments), interrupted."""
    attachments: list[str] = field(default_factory=list[str])
    """Expected SHA-256 (files, data) or URL of every attachment, in order."""
    validator_retries: list[str] = field(default_factory=list[str])
    """The retry messages the output validator sends, in order."""
    errors: list[str | None] = field(default_factory=list[str | None])
    interrupted: list[bool] = field(default_factory=list[bool])
    outputs: list[Any] = field(default_factory=list[Any])
    images_only: bool = True
    structured: bool = False
    thoughts: int = 0
    ids: int = 0

    def next_id(self) -> str:
        self.ids += 1
        return f"c{self.ids}"


_USAGE = {"input_tokens": 10, "output_tokens": 2}


@st.composite
def user_messages(draw: st.DrawFn, plan: Plan, number: int) -> Any:
    text = f"Turn {number}: look at these."
    if not draw(st.booleans()):
        return text
    items: list[Any] = [text]
    # Images mostly (tinyagent holds them), a document now and then.
    kinds = st.sampled_from(["file", "data", "data", "image_url", "image_url", "document_url"])
    for kind in draw(st.lists(kinds, min_size=1, max_size=3)):
        if kind == "file":
            name = draw(st.sampled_from(["photo.png", "photo.png", "photo.png", "scan.pdf", "memo.wav"]))
            items.append({"file": f"files/{name}"})
            plan.attachments.append(hashlib.sha256(FILES[name]).hexdigest())
            plan.images_only &= name.endswith(".png")
        elif kind == "data":
            raw = draw(st.binary(min_size=1, max_size=12))
            items.append({"data": base64.b64encode(raw).decode(), "media_type": "image/gif"})
            plan.attachments.append(hashlib.sha256(raw).hexdigest())
        else:
            url = f"https://example.com/{number}/{len(items)}." + ("png" if kind == "image_url" else "pdf")
            items.append({kind: url})
            plan.attachments.append(url)
            plan.images_only &= kind == "image_url"
    return items


@st.composite
def tool_steps(draw: st.DrawFn, plan: Plan) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 2))):
        calls: list[dict[str, Any]] = []
        for _ in range(draw(st.integers(1, 2))):
            call_id = plan.next_id()
            if draw(st.integers(0, 3)) == 0:  # arguments that break the schema: a retry with pydantic's details
                calls.append({"id": call_id, "name": "lookup", "args": draw(st.sampled_from([{}, {"key": 5}]))})
                plan.outcomes[call_id] = "retried"
            else:
                key = draw(st.sampled_from(sorted(KEYS)))
                calls.append({"id": call_id, "name": "lookup", "args": {"key": key}})
                plan.outcomes[call_id] = KEYS[key]
        step: dict[str, Any] = {"tool_calls": calls, "usage": _USAGE}
        if draw(st.booleans()):
            plan.thoughts += 1
            step["thought"] = {
                "content": "plan",
                "signature": draw(st.sampled_from(["sig-1", "gAAAA-encrypted"])),
                "provider_name": "openai",
                "id": f"rs_{len(steps)}",
                "provider_details": {"summary": [len(steps)]},
            }
        steps.append(step)
    return steps


@st.composite
def endings(draw: st.DrawFn, plan: Plan, validator_rules: dict[int, str], judged: list[int]) -> list[dict[str, Any]]:
    """The turn's last steps: an answer (maybe retried by the validator), a provider error, a response the provider
    cut short (`incomplete_response`, its text kept as `[INTERRUPTED] ...`) or an abort mid-tool."""
    ending = draw(st.sampled_from(["answer", "answer", "answer", "error", "cut", "abort"]))
    if ending == "error":
        plan.errors.append("server_error")
        plan.interrupted.append(False)
        plan.outputs.append(None)
        return [{"error": {"kind": "server_error", "status": 503}}]
    if ending == "cut":
        plan.errors.append("incomplete_response")
        plan.interrupted.append(True)
        plan.outputs.append(None)
        return [{"text": "an answer cut sh", "cut": True, "usage": _USAGE}]
    if ending == "abort":
        call_id = plan.next_id()
        plan.outcomes[call_id] = "interrupted"
        plan.errors.append(None)
        plan.interrupted.append(True)
        plan.outputs.append(None)
        return [{"tool_calls": [{"id": call_id, "name": "build", "args": {}}], "usage": _USAGE}]
    steps: list[dict[str, Any]] = []
    while True:
        value = draw(st.integers(0, 99))
        if plan.structured:
            steps.append({"tool_calls": [{"id": plan.next_id(), "name": "final_result", "args": {"n": value}}],
                          "usage": _USAGE})  # fmt: skip
        else:
            steps.append({"text": f"answer {value}", "usage": _USAGE})
        judged[0] += 1
        retry = validator_rules.get(judged[0])
        if plan.structured:  # the output tool's call: its return, or the validator's retry
            plan.outcomes[steps[-1]["tool_calls"][0]["id"]] = "success" if retry is None else "retried"
        if retry is None:
            plan.outputs.append({"n": value} if plan.structured else f"answer {value}")
            break
        plan.validator_retries.append(retry)
    plan.errors.append(None)
    plan.interrupted.append(False)
    return steps


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[dict[str, Any], Plan]:
    plan = Plan()
    plan.structured = draw(st.integers(0, 2)) == 0  # one in three: the others run on tinyagent too
    validator_rules = {n: f"validator retry {n}" for n in draw(st.sets(st.integers(1, 4), max_size=2))}
    judged = [0]
    turns: list[dict[str, Any]] = []
    count = draw(st.integers(1, 3))
    for number in range(1, count + 1):
        sent_before = len(plan.attachments)
        user = draw(user_messages(plan, number))
        steps = [*draw(tool_steps(plan)), *draw(endings(plan, validator_rules, judged))]
        if "error" in steps[0] and number < count:
            # The model never answered this turn: the next turn's history preparation drops the trailing request
            # (loop contract step 3), and the user's message with it.
            del plan.attachments[sent_before:]
        turn: dict[str, Any] = {"user": user, "model": steps}
        if plan.errors[-1] is not None:
            turn["expect"] = {"error": {"kind": plan.errors[-1]}}
        elif plan.interrupted[-1]:
            turn["expect"] = {"interrupted": True}
        turns.append(turn)
    output: dict[str, Any] = {
        "validators": [{"call": n, "retry": message} for n, message in sorted(validator_rules.items())]
    }
    if plan.structured:
        output.update(schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
        output.update(mode="tool")
    scenario = {
        "name": "generated",
        "system_prompt": "You are terse.",
        "settings": {"tool_retries": 9, "output_retries": 9},
        "output": output,
        "tools": {
            "lookup": {
                "parameters": {
                    "type": "object",
                    "properties": {"key": {"type": "string"}, "limit": {"type": "integer", "default": 5}},
                    "required": ["key"],
                },
                "results": [
                    {"when": {"key": "b", "limit": 5}, "return": "no such key", "outcome": "failed"},
                    {"when": {"key": "c"}, "return": "not allowed", "outcome": "denied"},
                    {"return": {"value": 1}},
                ],
            },
            "build": {"results": [{"abort": True}]},
        },
        "turns": turns,
    }
    return scenario, plan


def _load(folder: Path, scenario: dict[str, Any]) -> LoadedScenario:
    (folder / "files").mkdir(parents=True, exist_ok=True)
    for name, data in FILES.items():
        (folder / "files" / name).write_bytes(data)
    path = folder / "generated.yaml"
    path.write_bytes(dumps(scenario))  # JSON is YAML
    (loaded,) = load_scenario_file(path)
    return loaded


def _parts(history: list[Message] | tuple[Message, ...]) -> list[Any]:
    return [part for message in history for part in message.parts]


def _check_history(history: tuple[Message, ...], plan: Plan) -> None:
    parts = _parts(history)
    ends: dict[str, str] = {}
    for part in parts:
        if isinstance(part, ToolReturnPart):
            ends[part.tool_call_id] = part.outcome
        elif isinstance(part, RetryPromptPart) and part.tool_call_id is not None:
            ends[part.tool_call_id] = "retried"
            if part.tool_name == "lookup":
                assert isinstance(part.content, list), part  # pydantic's error details, never a message
    assert ends == plan.outcomes
    sent = [
        item.sha256 if isinstance(item, FileContent) else item.url
        for part in parts
        if isinstance(part, UserContentPart)
        for item in part.attachments
        if isinstance(item, FileContent | UrlContent)
    ]
    assert sent == plan.attachments
    retries = [p.content for p in parts if isinstance(p, RetryPromptPart) and isinstance(p.content, str)]
    assert retries == plan.validator_retries
    assert sum(isinstance(part, ThoughtPart) for part in parts) == plan.thoughts
    for part in parts:
        if isinstance(part, ThoughtPart):
            assert part.provider_name == "openai"
            assert part.signature in ("sig-1", "gAAAA-encrypted")
            assert part.id is not None
            assert part.provider_details is not None


def _check_run(execution: Any, plan: Plan) -> None:
    history = tuple(execution.session.messages)
    violations = check_invariants(history, registry=execution.registry)
    assert violations == [], [v.message for v in violations]
    assert [turn.error.kind if turn.error else None for turn in execution.turns] == plan.errors
    assert [turn.interrupted for turn in execution.turns] == plan.interrupted
    outputs = [turn.output_json if plan.structured else turn.output for turn in execution.turns]
    assert outputs == plan.outputs
    _check_history(history, plan)
    assert loads_history(dumps_history(history)) == list(history)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenarios())
def test_generated_conversations_run_as_scripted_on_every_engine(
    tmp_path_factory: Any, generated: tuple[dict[str, Any], Plan]
) -> None:
    scenario, plan = generated
    loaded = _load(tmp_path_factory.mktemp("generated"), scenario)
    plain = asyncio.run(execute_scenario(loaded, cache=AgentCache()))
    _check_run(plain, plan)
    history = list(plain.session.messages)
    assert to_canonical(to_pydantic_ai(history)) == _as_the_release_holds(history)
    history = without_per_run_values(history)  # another run draws another conversation id

    streamed_scenario = loaded.scenario.model_copy(update={"stream": True})
    streamed = asyncio.run(execute_scenario(replace(loaded, scenario=streamed_scenario), cache=AgentCache()))
    _check_run(streamed, plan)
    assert without_per_run_values(streamed.session.messages) == history

    if unsupported_features(loaded.scenario):  # tinyagent holds neither an output type nor its validator
        return
    tinyagent = asyncio.run(execute_scenario_tinyagent(loaded))
    _check_run(tinyagent, plan)
    assert list(tinyagent.session.messages) == history


def _as_the_release_holds(history: list[Message]) -> list[Message]:
    """The history without the tool kinds the installed release cannot hold (2.38-2.4x: only its own, so not 2.78's
    `output`, which agentrig's history carries on every release): what a round trip through its messages keeps."""
    kinds = pydantic_ai_compat.ACCEPTED_TOOL_KINDS
    if kinds is None:
        return history

    def held(part: Part) -> Part:
        if isinstance(part, ToolCallPart | ToolReturnPart | RetryPromptPart) and part.tool_kind not in (None, *kinds):
            return replace(part, tool_kind=None)
        return part

    return [message.with_parts(held(part) for part in message.parts) for message in history]


FEATURES: dict[str, Callable[[Plan], bool]] = {
    "a successful call": lambda plan: "success" in plan.outcomes.values(),
    "a failed call": lambda plan: "failed" in plan.outcomes.values(),
    "a denied call": lambda plan: "denied" in plan.outcomes.values(),
    "a call with invalid arguments": lambda plan: "retried" in plan.outcomes.values(),
    "an abort mid-tool": lambda plan: "interrupted" in plan.outcomes.values(),
    "a provider error": lambda plan: "server_error" in plan.errors,
    "a response the provider cut short": lambda plan: "incomplete_response" in plan.errors,
    "an attachment that is no image": lambda plan: not plan.images_only,
    "a validator retry of a structured output": lambda plan: plan.structured and bool(plan.validator_retries),
    "a validator retry of a text output": lambda plan: not plan.structured and bool(plan.validator_retries),
    "a signed thought": lambda plan: plan.thoughts > 0,
}


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_the_generator_reaches_every_item_of_the_language(feature: str) -> None:
    """The generator is not narrower than it claims: each item of the language appears in some conversation."""
    has = FEATURES[feature]
    found = find(scenarios(), lambda generated: has(generated[1]), settings=settings(database=None, max_examples=2000))
    assert has(found[1])
