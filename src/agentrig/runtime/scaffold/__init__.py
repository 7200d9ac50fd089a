"""`agentrig scaffold`: a conversation agentrig can read becomes a scenario that replays it offline.

    source.py            the file, through agentrig's readers: canonical messages, usage, instructions, schemas
    turns.py             the messages cut into turns and scripted steps; what a scenario cannot replay is refused
    turn_results.py      tool results: the run's own, and the host's answers to paused calls (a turn of their own)
    tools.py             YAML tools answering as the source did, matched by arguments
    subagent_scripts.py  scripts for the sub-agents a recorded run called (`subagents/` beside the source)
    document.py          expectations, the golden history and the YAML text
    scenario.py          one source planned into its files, validated against the scenario model
    writing.py           the files written all or none, never over a file scaffold cannot prove it wrote
    batch.py             many sources at once: discovery, unique names, duplicates, one row per source

`--agent` is imported and read (`engine/pydantic_ai_engine/agent_facts.py`) before any source is read, so a
wrong agent is a usage error at once; a refused source leaves no file behind.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentrig.errors import UsageError
from agentrig.runtime.scaffold.batch import Row, discover, name_from, scaffold_all
from agentrig.runtime.scaffold.document import ToolResults
from agentrig.runtime.scaffold.scenario import AgentInfo, PlanOptions, plan_scenario
from agentrig.runtime.scaffold.source import read_source
from agentrig.runtime.scaffold.subagent_scripts import subagent_scripts
from agentrig.runtime.scaffold.turns import HostTools, Unreplayable
from agentrig.runtime.scaffold.writing import ScenarioFolder

__all__ = [
    "ManyOptions",
    "Row",
    "ScaffoldOptions",
    "ScaffoldResult",
    "Unreplayable",
    "scaffold",
    "scaffold_many",
]

ToolCheck = Literal["results", "calls"]

_SPEC = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaffoldOptions:
    """What `agentrig scaffold SOURCE -o FILE` was asked to do."""

    source: Path
    """The history or session to replay."""
    output: Path
    """The scenario file to write; the golden goes to `golden/<name>.json` beside it."""
    name: str | None = None
    """The scenario's name; default: from the source's file name."""
    agent: str | None = None
    """The user's agent as `module:attribute`: its real tools run. None: YAML tools answer as recorded."""
    deps: str | None = None
    """With an agent: `module:attribute` building its deps (the scenario's `deps:`)."""
    check: ToolCheck = "results"
    """With an agent: `results` compares the whole history (tool results included) with the golden;
    `calls` only checks that the tools are called as recorded."""
    tool_results: ToolResults = "keep"
    """`mask` or `drop` the tool results' contents in the files written (data a team must not commit)."""
    force: bool = False
    """Replace files an earlier scaffold wrote (and nobody changed since)."""
    last_turns: int | None = None
    """Script only the last N turns; the conversation before them becomes the scenario's `initial_history`
    (a long session replays in a fraction of the time: each scripted request pays for the whole history)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ManyOptions:
    """What `agentrig scaffold SOURCES... -o DIR` was asked to do (the rest as `ScaffoldOptions`)."""

    sources: tuple[Path, ...]
    directory: Path
    name: str | None = None
    agent: str | None = None
    deps: str | None = None
    check: ToolCheck = "results"
    tool_results: ToolResults = "keep"
    force: bool = False
    last_turns: int | None = None


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
    warnings: tuple[str, ...] = ()
    """What the source holds that the scenario does not carry (fields the canonical form does not know)."""


def scaffold(options: ScaffoldOptions) -> ScaffoldResult:
    """Check the options and the agent, read the source, plan the scenario, validate it, then write its files."""
    _check_options(options)
    if options.output.is_dir():
        raise UsageError(f"-o {options.output}: is a directory; name the scenario file to write")
    agent = _agent_info(options, options.output.parent)
    source = read_source(options.source)
    name = options.name or name_from(options.source)
    plan = PlanOptions(
        name=name,
        scenario_file=options.output.name,
        check=options.check,
        tool_results=options.tool_results,
        last_turns=options.last_turns,
    )
    planned = plan_scenario(source, plan, _with_subagents(agent, options.source, options.output.parent))
    folder = ScenarioFolder(options.output.parent, force=options.force, sources=[options.source])
    folder.write(planned.files)
    golden = options.output.parent / planned.golden if planned.golden is not None else None
    return ScaffoldResult(
        scenario_path=options.output,
        golden_path=golden,
        name=name,
        messages=planned.messages,
        turns=planned.turns,
        steps=planned.steps,
        tools=planned.tools,
        warnings=source.unknown_fields,
    )


def scaffold_many(options: ManyOptions) -> list[Row]:
    """Scaffold every conversation under `options.sources` into `options.directory`; one row per source."""
    _check_options(options)
    if options.directory.exists() and not options.directory.is_dir():  # a file, a FIFO, a device, /dev/stdout
        if len(options.sources) == 1 and not options.sources[0].is_dir():
            raise UsageError(
                f"-o {options.directory}: is neither a folder nor a .yaml file; -o names the scenario file to write"
                " (one source: NAME.yaml, with golden/ and histories/ beside it) or the folder to fill"
            )
        raise UsageError(f"-o {options.directory}: not a folder; with several sources -o names the folder to fill")
    if not options.directory.exists() and options.directory.suffix.lower() in (".yaml", ".yml"):
        raise UsageError(
            f"-o {options.directory}: names a scenario file; with several sources or a folder, -o names the folder"
            " to fill"
        )
    agent = _agent_info(options, options.directory)
    found = discover(options.sources, skip=options.directory)
    if options.name is not None and len(found) > 1:
        raise UsageError(f"--name {options.name}: {len(found)} sources; each scenario is named after its source")
    if options.name is not None:
        found = [type(entry)(path=entry.path, name=options.name, problem=entry.problem) for entry in found]
    folder = ScenarioFolder(options.directory, force=options.force, sources=[entry.path for entry in found])

    def plan_options(name: str) -> PlanOptions:
        return PlanOptions(
            name=name,
            scenario_file=f"{name}.yaml",
            check=options.check,
            tool_results=options.tool_results,
            last_turns=options.last_turns,
        )

    return scaffold_all(
        found,
        folder,
        plan_options=plan_options,
        agent_for=lambda path: _with_subagents(agent, path, options.directory),
    )


def _check_options(options: ScaffoldOptions | ManyOptions) -> None:
    if options.name is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", options.name):
        raise UsageError(f"--name {options.name!r}: letters, digits, '_', '.' and '-', starting with a letter or digit")
    for flag, spec in (("--agent", options.agent), ("--deps", options.deps)):
        if spec is not None and not _SPEC.fullmatch(spec):
            raise UsageError(f"{flag} {spec!r}: expected module:attribute")
    if options.deps is not None and options.agent is None:
        raise UsageError("--deps needs --agent: deps are for your agent; a YAML agent has none")
    if options.agent is None and options.check == "calls":
        raise UsageError("--check calls needs --agent: without it the tools are YAML tools answering as recorded")
    if options.agent is not None and options.check == "results" and options.tool_results != "keep":
        raise UsageError(
            f"--tool-results {options.tool_results} with --agent needs --check calls: the agent's real tools"
            " return the real contents, which a masked golden history cannot match"
        )
    if options.last_turns is not None and options.last_turns < 1:
        raise UsageError(f"--last-turns {options.last_turns}: expected 1 or more")


def _agent_info(options: ScaffoldOptions | ManyOptions, scenario_folder: Path) -> AgentInfo | None:
    """Import the agent (and check the deps builder) now: a wrong one is a usage error before anything is read."""
    if options.agent is None:
        return None
    from agentrig.runtime.engine.pydantic_ai_engine.agent_facts import agent_facts, check_deps_spec

    search = _search_paths(scenario_folder)
    facts = agent_facts(options.agent, search_paths=search)
    if options.deps is not None:
        check_deps_spec(options.deps, search_paths=search)
    return AgentInfo(
        spec=options.agent,
        deps=options.deps,
        host_tools=HostTools(approval=facts.approval_tools, external=facts.external_tools),
        output_instructions=facts.output_instructions,
        delegates=facts.delegates,
        expect_output=lambda call, text: facts.output_expectation(
            tool_name=call.tool_name if call is not None else None,
            args=call.args if call is not None else None,
            text=text,
        ),
    )


def _with_subagents(agent: AgentInfo | None, source: Path, scenario_folder: Path) -> AgentInfo | None:
    """The agent with scripts for the sub-agents its run called, when the run recorded them beside `source`."""
    if agent is None:
        return None
    from agentrig.runtime.engine.pydantic_ai_engine.agent_facts import subagent_spec

    search = _search_paths(scenario_folder)
    scripts = subagent_scripts(source, lambda label: subagent_spec(label, search_paths=search))
    if not scripts:
        return agent
    return AgentInfo(
        spec=agent.spec,
        deps=agent.deps,
        host_tools=agent.host_tools,
        expect_output=agent.expect_output,
        output_instructions=agent.output_instructions,
        delegates=agent.delegates,
        subagents=scripts,
    )


def _search_paths(scenario_folder: Path) -> Sequence[Path]:
    """Where the scenario will look for the agent's module when it runs: its own folder, then the current one."""
    return [scenario_folder, Path.cwd()]
