"""`agentrig scaffold`: a conversation agentrig can read becomes a scenario that replays it offline.

    source.py    the file, through agentrig's readers: canonical messages, usage, instructions, tool schemas
    turns.py     the messages cut into turns and scripted steps; what a scenario cannot replay is refused
    tools.py     YAML tools answering as the source did, matched by arguments
    document.py  expectations, the golden history and the YAML text

`scaffold` checks everything before it writes, so a refused source leaves no file behind; the scenario is
validated against the scenario model before it is written, and both files are written atomically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentrig.errors import UsageError
from agentrig.runtime.history import jsonio
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.wire import dumps_history
from agentrig.runtime.scaffold.document import (
    ToolResults,
    description,
    dump_yaml,
    golden_history,
    kept_invariants,
    normalized_part,
    turn_mapping,
    usage_expectation,
)
from agentrig.runtime.scaffold.source import Source, read_source
from agentrig.runtime.scaffold.tools import yaml_tools
from agentrig.runtime.scaffold.turns import ScriptTurn, Unreplayable, plan_turns

__all__ = ["ScaffoldOptions", "ScaffoldResult", "Unreplayable", "scaffold"]

ToolCheck = Literal["results", "calls"]

_NAME_LIMIT = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaffoldOptions:
    """What `agentrig scaffold` was asked to do."""

    source: Path
    """The history or session to replay."""
    output: Path
    """The scenario file to write; the golden goes to `golden/<name>.json` beside it."""
    name: str | None = None
    """The scenario's name; default: from the source's file name."""
    agent: str | None = None
    """The user's agent as `module:attribute`: its real tools run. None: YAML tools answer as recorded."""
    check: ToolCheck = "results"
    """With an agent: `results` compares the whole history (tool results included) with the golden;
    `calls` only checks that the tools are called as recorded."""
    tool_results: ToolResults = "keep"
    """`mask` or `drop` the tool results' contents in the files written (data a team must not commit)."""
    force: bool = False
    """Overwrite an existing scenario file."""
    last_turns: int | None = None
    """Script only the last N turns; the conversation before them becomes the scenario's `initial_history`
    (a long session replays in a fraction of the time: each scripted request pays for the whole history)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaffoldResult:
    """What was written."""

    scenario_path: Path
    golden_path: Path | None
    name: str
    messages: int
    turns: int
    steps: int
    tools: tuple[str, ...]


def scaffold(options: ScaffoldOptions) -> ScaffoldResult:
    """Read the source, plan the scenario, validate it, then write it (and its golden history)."""
    _check_options(options)
    source = read_source(options.source)
    own_agent = options.agent is not None
    turns = plan_turns(source.messages, source.response_usage, path=source.path, own_agent=own_agent)
    name = options.name or _name_from(options.source)
    start = 0
    if options.last_turns is not None and options.last_turns < len(turns):
        turns = turns[-options.last_turns :]
        start = turns[0].message_index
    earlier = golden_history(source.messages[:start], options.tool_results, scripted=False)
    history = [*earlier, *golden_history(source.messages[start:], options.tool_results)]
    golden_relative = f"golden/{name}.json"
    with_golden = not own_agent or options.check == "results"
    document = _document(
        source,
        turns,
        options,
        name=name,
        golden=golden_relative if with_golden else None,
        initial_history=f"histories/{name}.json" if earlier else None,
        history=history,
    )
    header = (
        f"Scaffolded by `agentrig scaffold` from {source.path.name}\n"
        f"source: {source.path.name}  sha256: {source.sha256}  messages: {len(source.messages)}"
    )
    _validate(document, source.path)
    text = dump_yaml(document, header)
    files: list[tuple[Path, bytes]] = []
    if earlier:  # the conversation before the scripted turns, resumed from (masked like the rest)
        files.append((options.output.parent / "histories" / f"{name}.json", dumps_history(earlier, pretty=True)))
    golden_path = options.output.parent / golden_relative if with_golden else None
    if golden_path is not None:
        # The bytes `check_golden` compares (`canonical_golden_bytes`): pretty canonical JSON, no run ids.
        files.append((golden_path, dumps_history(history, pretty=True)))
    files.append((options.output, text.encode()))
    _write(files)
    tools = tuple(dict.fromkeys(call.tool_name for turn in turns for call in turn.calls))
    return ScaffoldResult(
        scenario_path=options.output,
        golden_path=golden_path,
        name=name,
        messages=len(source.messages),
        turns=len(turns),
        steps=sum(len(turn.steps) for turn in turns),
        tools=tools,
    )


def _check_options(options: ScaffoldOptions) -> None:
    if options.name is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", options.name):
        raise UsageError(f"--name {options.name!r}: letters, digits, '_', '.' and '-', starting with a letter or digit")
    if options.agent is not None and not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*", options.agent):
        raise UsageError(f"--agent {options.agent!r}: expected module:attribute")
    if options.agent is None and options.check == "calls":
        raise UsageError("--check calls needs --agent: without it the tools are YAML tools answering as recorded")
    if options.agent is not None and options.check == "results" and options.tool_results != "keep":
        raise UsageError(
            f"--tool-results {options.tool_results} with --agent needs --check calls: the agent's real tools"
            " return the real contents, which a masked golden history cannot match"
        )
    if options.last_turns is not None and options.last_turns < 1:
        raise UsageError(f"--last-turns {options.last_turns}: expected 1 or more")
    if options.output.is_dir():
        raise UsageError(f"-o {options.output}: is a directory; name the scenario file to write")
    if options.output.exists() and not options.output.is_file():  # a FIFO, a device, /dev/stdout
        raise UsageError(
            f"-o {options.output}: is not a regular file; scaffold writes golden/ (and histories/) beside the"
            " scenario, so -o names the scenario file to write"
        )
    if options.output.exists() and options.output.resolve() == options.source.resolve():
        raise UsageError(f"-o {options.output}: refusing to overwrite the source")
    if options.output.exists() and not options.force:
        raise UsageError(f"-o {options.output}: the file exists; pass --force to overwrite it")


def _name_from(path: Path) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", path.stem).strip("-._")
    return (stem or "scaffolded")[:_NAME_LIMIT]


def _document(
    source: Source,
    turns: list[ScriptTurn],
    options: ScaffoldOptions,
    *,
    name: str,
    golden: str | None,
    initial_history: str | None,
    history: list[Any],
) -> dict[str, Any]:
    own_agent = options.agent is not None
    document: dict[str, Any] = {"name": name, "description": description(source), "tags": ["scaffolded"]}
    if own_agent:
        document["agent"] = options.agent
    elif source.instructions:
        document["system_prompt"] = source.instructions
    if initial_history is not None:
        document["initial_history"] = initial_history
    streak = max(turn.retry_streak for turn in turns)
    if not own_agent and streak > 1:  # the default budget is one retry; the source needed more
        document["settings"] = {"tool_retries": streak}
    if not own_agent:
        masked = {
            id(call): normalized_part(answer, options.tool_results) for turn in turns for call, answer in turn.answers
        }
        masked_turns = [_with_answers(turn, masked) for turn in turns]
        tools = yaml_tools(masked_turns, source.tool_schemas)
        if tools:
            document["tools"] = tools
    document["turns"] = [turn_mapping(turn, own_agent=own_agent) for turn in turns]
    expect: dict[str, Any] = {}
    usages = [turn.usage for turn in turns]
    if all(usage is not None for usage in usages):
        expect["usage"] = usage_expectation(Usage.total(u for u in usages if u is not None))
    expect["invariants"] = kept_invariants(history)
    if golden is not None:
        expect["golden"] = golden
    document["expect"] = expect
    return document


def _with_answers(turn: ScriptTurn, answers: dict[int, Any]) -> ScriptTurn:
    """The turn with its answers replaced by `answers` (by the id of the call they answer)."""
    return ScriptTurn(
        user=turn.user,
        message_index=turn.message_index,
        steps=turn.steps,
        calls=turn.calls,
        answers=[(call, answers.get(id(call), answer)) for call, answer in turn.answers],
        usages=turn.usages,
        last_response=turn.last_response,
    )


def _validate(document: dict[str, Any], source: Path) -> None:
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
            source, -1, f"the scenario would be invalid at {where}: {first.get('msg', 'invalid')}"
        ) from None


def _write(files: list[tuple[Path, bytes]]) -> None:
    """The scenario and the files beside it, all or none: a full disk leaves neither a golden without its scenario
    nor an empty golden/ (`jsonio` removes the folders a failed write created)."""
    try:
        with jsonio.open_atomic_files(*(path for path, _ in files), kept="none was written") as handles:
            for handle, (_, data) in zip(handles, files, strict=True):
                handle.write(data)
    except OSError as error:
        named = ", ".join(str(path) for path, _ in files)
        raise UsageError(f"{named}: cannot write there ({error.strerror or error})") from None
