"""One source planned into the files of its scenario (the YAML, the golden history, the history it resumes
from), checked against the scenario model, and nothing written: `writing.py` writes, `batch.py` plans many.

With the user's agent (`AgentInfo`), the scenario also carries what the source run needed: its deps
(`--deps`), scripts for the sub-agents it ran (`subagent_scripts.py`), the host's answers to paused calls, the
retry and iteration budgets the conversation used, and checks that the model received the same instructions
and system prompt (so a changed prompt fails the replay).
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from agentrig.runtime.history.canonical import (
    Message,
    RetryPromptPart,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
)
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.wire import dumps_history
from agentrig.runtime.scaffold.attachments import AttachmentFiles
from agentrig.runtime.scaffold.document import (
    MASKED,
    OutputExpecter,
    ToolResults,
    description,
    dump_yaml,
    edited_source,
    golden_history,
    kept_invariants,
    normalized_part,
    turn_mapping,
    usage_expectation,
)
from agentrig.runtime.scaffold.outputs import output_section, output_value
from agentrig.runtime.scaffold.planning import plan_turns
from agentrig.runtime.scaffold.source import Source
from agentrig.runtime.scaffold.tools import yaml_tools
from agentrig.runtime.scaffold.turns import AGENT_HINT, EDIT_HINT, HostTools, ScriptTurn, Unreplayable

__all__ = ["AgentInfo", "PlanOptions", "Planned", "plan_scenario"]

ToolCheck = Literal["results", "calls"]

_DEFAULT_MAX_ITERATIONS = 20
"""`settings.max_iterations`' default: a turn that needed more model requests gets its count."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentInfo:
    """What `--agent` brings, read from the agent before anything is planned (framework-free)."""

    spec: str
    """`module:attribute`."""
    deps: str | None = None
    """`--deps module:attribute`: how the scenario builds the agent's deps."""
    host_tools: HostTools = field(default_factory=HostTools)
    """Its tools whose calls the host answers."""
    expect_output: Callable[[ToolCallPart | None, str | None], dict[str, Any] | None] = lambda call, text: None
    """The output expectation of a turn that ended with this output tool call (or this text)."""
    subagents: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict[str, list[dict[str, Any]]])
    """Scripts of the sub-agents the source run called, by `module:attribute`."""
    output_instructions: bool = False
    """The agent's output adds instructions the source does not record (a prompted output's template)."""
    delegates: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Its tools that delegate to sub-agents, by tool name: the sub-agents' `module:attribute`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanOptions:
    """How to script a source."""

    name: str
    scenario_file: str
    """The scenario's file name; the golden and resumed history go beside it (`golden/`, `histories/`)."""
    check: ToolCheck = "results"
    tool_results: ToolResults = "keep"
    last_turns: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Planned:
    """A scenario ready to be written: its files, relative to the scenario file's folder."""

    name: str
    files: tuple[tuple[str, bytes], ...]
    conversation: str
    """SHA-256 of the golden history: two sources with the same one are the same conversation."""
    messages: int
    turns: int
    steps: int
    tools: tuple[str, ...]
    golden: str | None


def plan_scenario(source: Source, options: PlanOptions, agent: AgentInfo | None) -> Planned:
    """Plan the scenario of `source`; raises `Unreplayable` (nothing planned) when it cannot be replayed."""
    turns, edits = plan_turns(
        source.messages,
        source.response_usage,
        path=source.path,
        own_agent=agent is not None,
        host_tools=agent.host_tools if agent is not None else None,
    )
    if agent is not None:
        _check_subagents_scripted(source, turns, agent)
    start = 0
    if options.last_turns is not None and options.last_turns < len(turns):
        turns = turns[-options.last_turns :]
        start = turns[0].message_index
    replayed = edited_source(source.messages, edits)
    earlier = golden_history(_resumed_part(source.messages, replayed, start), options.tool_results)
    history = golden_history(
        [m for ms in replayed for m in ms], options.tool_results, paused=bool(turns) and turns[-1].paused
    )
    with_golden = agent is None or options.check == "results"
    golden = f"golden/{options.name}.json" if with_golden else None
    attachments = AttachmentFiles(options.name)
    document = _document(
        source, turns, options, agent, golden=golden, resumes=bool(earlier), history=history, attachments=attachments
    )
    _validate(document, source)
    header = (
        f"Scaffolded by `agentrig scaffold` from {source.path.name}\n"
        f"source: {source.path.name}  sha256: {source.sha256}  messages: {len(source.messages)}"
    )
    # The golden holds the bytes `check_golden` compares (`canonical_golden_bytes`): pretty canonical JSON.
    golden_bytes = dumps_history(history, pretty=True)
    files: list[tuple[str, bytes]] = list(attachments.files.values())
    if earlier:  # the conversation before the scripted turns, resumed from (masked like the rest)
        files.append((f"histories/{options.name}.json", dumps_history(earlier, pretty=True)))
    if golden is not None:
        files.append((golden, golden_bytes))
    files.append((options.scenario_file, dump_yaml(document, header).encode()))
    return Planned(
        name=options.name,
        files=tuple(files),
        conversation=hashlib.sha256(golden_bytes).hexdigest(),
        messages=len(source.messages),
        turns=len(turns),
        steps=sum(len(turn.steps) for turn in turns),
        tools=tuple(dict.fromkeys(call.tool_name for turn in turns for call in turn.calls)),
        golden=golden,
    )


def _check_subagents_scripted(source: Source, turns: Sequence[ScriptTurn], agent: AgentInfo) -> None:
    """A tool the source called that delegates to a sub-agent runs it in the replay, but a dump or a session holds
    only the caller's messages: without the sub-agent's recorded runs (`subagents/` beside the source) nothing can
    answer its requests, and the replay would fail at the first. Refused, naming both."""
    for turn in turns:
        for call in turn.calls:
            missing = [spec for spec in agent.delegates.get(call.tool_name, ()) if spec not in agent.subagents]
            if missing:
                raise Unreplayable(
                    source.path,
                    turn.message_index,
                    f"call {call.tool_call_id!r} ({call.tool_name}) runs a tool whose code calls the agent"
                    f" {', '.join(missing)}, whose runs the source does not record (no subagents/ folder beside it:"
                    " a dump or a session holds the calling agent's messages only)",
                    hint="scaffold the run's scenario folder, whose subagents/ holds each sub-agent run (agentrig run"
                    " --out records them), or scaffold without --agent (YAML tools return what the tool returned)",
                )


def _resumed_part(messages: Sequence[Message], replayed: Sequence[Sequence[Message]], start: int) -> list[Message]:
    """The conversation before the scripted turns (`replayed`: per source message, what the replay holds for it). A
    first scripted turn whose user message shares its request with the results that ended the turn before (an
    output tool's, in agentrig's session files) leaves those results here: the resumed run keeps a trailing request
    and merges the next prompt into it, as the source did."""
    head = [message for group in replayed[:start] for message in group]
    if 0 < start < len(messages):
        results = [p for p in messages[start].parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
        if results:
            head.append(messages[start].with_parts(results))
    return head


def _document(
    source: Source,
    turns: list[ScriptTurn],
    options: PlanOptions,
    agent: AgentInfo | None,
    *,
    golden: str | None,
    resumes: bool,
    history: list[Message],
    attachments: AttachmentFiles,
) -> dict[str, Any]:
    document: dict[str, Any] = {"name": options.name, "description": description(source), "tags": ["scaffolded"]}

    def refuse(reason: str, *, hint: str) -> Unreplayable:
        return Unreplayable(source.path, -1, reason, hint=hint)

    output = output_section(turns, source.tool_schemas, refuse) if agent is None else None
    if agent is not None:
        document["agent"] = agent.spec
        if agent.deps is not None:
            document["deps"] = agent.deps
        if agent.subagents:
            document["agents"] = {spec: {"model": steps} for spec, steps in agent.subagents.items()}
    elif source.instructions:
        document["system_prompt"] = source.instructions
    if output is not None:
        document["output"] = output
    if resumes:
        document["initial_history"] = f"histories/{options.name}.json"
    settings = _settings(turns)
    if settings:
        document["settings"] = settings
    if agent is None:
        masked = {
            id(call): normalized_part(answer, options.tool_results) for turn in turns for call, answer in turn.answers
        }
        tools = yaml_tools([_with_answers(turn, masked) for turn in turns], source.tool_schemas, refuse)
        if tools:
            document["tools"] = tools
    else:
        _check_prompts(source, turns, first_turn_starts=not resumes, output_instructions=agent.output_instructions)
    # A sub-agent's usage adds to its caller's (`usage=ctx.usage`) but its runs recorded none: no usage checks.
    # A turn that went wrong spends what the provider or the cancellation left: no usage checks on it either.
    with_usage = agent is None or not agent.subagents
    if options.tool_results != "keep":  # the host's results are tool results too
        masked_value = MASKED if options.tool_results == "mask" else None
        for turn in turns:
            if turn.deferred_results is not None:
                turn.deferred_results = dict.fromkeys(turn.deferred_results, masked_value)
    expecter = _yaml_output_expecter(output) if agent is None else agent.expect_output
    document["turns"] = [
        turn_mapping(turn, expect_output=expecter, user=attachments.user, with_usage=with_usage) for turn in turns
    ]
    expect: dict[str, Any] = {}
    usages = [turn.usage for turn in turns]
    if with_usage and all(usage is not None for usage in usages) and not any(turn.ending for turn in turns):
        expect["usage"] = usage_expectation(Usage.total(u for u in usages if u is not None))
    expect["invariants"] = kept_invariants(history)
    if golden is not None:
        expect["golden"] = golden
    document["expect"] = expect
    return document


def _yaml_output_expecter(output: dict[str, Any] | None) -> OutputExpecter:
    """A YAML agent's output: the final text, or the output tool's arguments as its `output:` makes them."""

    reads_text = output is not None and output.get("mode") == "auto"

    def expect(call: ToolCallPart | None, text: str | None) -> dict[str, Any] | None:
        if call is None and reads_text and text is not None:
            return {"json_equals": orjson.loads(text)}  # the text is the output's JSON (`mode: auto`)
        if call is None:
            return {"equals": text}
        return {"json_equals": output_value(call.tool_name, call.args, output)}

    return expect


def _settings(turns: list[ScriptTurn]) -> dict[str, int]:
    """The budgets the conversation used beyond the defaults (one retry per tool and for the output, twenty model
    requests per turn): a replay with less would stop where the source went on. Given for a user's agent, a
    budget replaces the agent's own for the scenario's runs, and never below what the source needed."""
    settings: dict[str, int] = {}
    streak = max(turn.retry_streak for turn in turns)
    if streak > 1:
        settings["tool_retries"] = streak
    output_retries = max(turn.output_retries for turn in turns)
    exhausted = [turn.exhausted_output_retries for turn in turns if turn.exhausted_output_retries is not None]
    if exhausted:  # the budget that stopped a turn, exactly: with more, the replay would retry where the source ended
        settings["output_retries"] = min(exhausted)
    elif output_retries > 1:
        settings["output_retries"] = output_retries
    requests = max(len(turn.steps) for turn in turns)
    if requests > _DEFAULT_MAX_ITERATIONS:
        settings["max_iterations"] = requests
    limits = [turn.tool_calls_limit for turn in turns if turn.tool_calls_limit is not None]
    if limits:
        settings["tool_calls_limit"] = min(limits)
    return settings


def _check_prompts(
    source: Source, turns: list[ScriptTurn], *, first_turn_starts: bool, output_instructions: bool
) -> None:
    """Check, on each turn's first step, the instructions its request carried (pydantic-ai sends them with every
    request; a dynamic part may change between runs), and on the conversation's first step its system prompt
    (pydantic-ai sends `system_prompt=` with a conversation's first request only). With `output_instructions`
    (a prompted output's template, which the model reads but no request stores) the model's instructions hold
    the recorded ones among the output's: `instructions_contain` them (nothing when none were recorded)."""
    numbers = _response_numbers(source, turns)
    for number, turn in enumerate(turns):
        if not turn.steps:
            continue
        checks: dict[str, Any] = {}
        response = numbers[id(turn)]
        if response < len(source.response_instructions):
            instructions = source.response_instructions[response]
            if instructions is not None and not output_instructions:
                checks["instructions"] = instructions
            elif instructions:
                checks["instructions_contain"] = instructions
        if number == 0 and first_turn_starts and source.records_system_prompt:
            first = source.messages[0] if source.messages else None
            parts = [p.content for p in first.parts if isinstance(p, SystemPromptPart)] if first is not None else []
            checks["system_prompt"] = "\n\n".join(parts)
        if checks:
            step = turn.steps[0]
            turn.steps[0] = {"expect_input": checks, **step}


def _response_numbers(source: Source, turns: list[ScriptTurn]) -> dict[int, int]:
    """The ordinal of each turn's first response among the source's responses (by the turn's id)."""
    responses = [index for index, message in enumerate(source.messages) if message.kind == "response"]
    return {id(turn): bisect.bisect_right(responses, turn.message_index) for turn in turns}


def _with_answers(turn: ScriptTurn, answers: dict[int, Any]) -> ScriptTurn:
    """The turn with its answers replaced by `answers` (by the id of the call they answer)."""
    return ScriptTurn(
        user=turn.user,
        message_index=turn.message_index,
        steps=turn.steps,
        calls=turn.calls,
        answers=[(call, answers.get(id(call), answer)) for call, answer in turn.answers],
        deferred_calls=turn.deferred_calls,
        approval_calls=turn.approval_calls,
        usages=turn.usages,
        last_response=turn.last_response,
        rules=turn.rules,
    )


def _validate(document: dict[str, Any], source: Source) -> None:
    """The scenario must be valid before anything is written; what the format cannot hold (a tool name it does
    not accept, say) is named in one line. (That the YAML text loads back to this document is `dump_yaml`'s
    promise, tested with generated strings.)"""
    from pydantic import ValidationError

    from agentrig.scenarios.model import Scenario

    try:
        Scenario.model_validate(document)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(step) for step in first.get("loc", ()))
        raise Unreplayable(
            source.path,
            -1,
            f"the scenario would be invalid at {where}: {first.get('msg', 'invalid')}",
            hint=f"{AGENT_HINT}, or change what the field is made of in the source ({EDIT_HINT})",
        ) from None
