"""Run one scenario on tinyagent (`agentrig run --engine tinyagent`), through the same `RequestOrchestrator`.

    execution = await execute_scenario_tinyagent(loaded)

The scenario's agent is a tinyagent `Agent`: built from the scenario (its system prompt and YAML tools) or
the user's own (`agent: module:attribute`, `agents.py`). Its model calls are answered by the script
(`script.py`); everything else is the same code as on pydantic-ai: each turn is one `RequestOrchestrator.run`
(request id, reset, history preparation, compaction with its record, the overflow retry, finalize, abort
and timeout handling), the event log is written by the same `EventingEngine`, and the turn checks (steps left
unused, `expect_input`) are the same. Nothing here imports pydantic-ai.

What a scenario asks for that tinyagent cannot express raises `EngineUnsupported` naming the feature, before
anything runs (`unsupported_features`), so the scenario is reported as not run with the reason, never passed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tinyagent import Agent, AgentOptions

from agentrig.media_types import DEFAULT_FILE_MEDIA_TYPE
from agentrig.runtime.engine.compaction.controller import CompactionController
from agentrig.runtime.engine.event_engine import EventingEngine
from agentrig.runtime.engine.orchestrator import RequestOrchestrator
from agentrig.runtime.engine.session_registry import scenario_registry
from agentrig.runtime.engine.tinyagent_engine.agents import UNSUPPORTED_PREFIX, EngineUnsupported, load_tinyagent_agent
from agentrig.runtime.engine.tinyagent_engine.engine import TinyagentEngine
from agentrig.runtime.engine.tinyagent_engine.output_rules import OutputRules
from agentrig.runtime.engine.tinyagent_engine.script import SCRIPT_MODEL, TinyagentScript
from agentrig.runtime.engine.tinyagent_engine.tools import ToolOutcomes, yaml_tools
from agentrig.runtime.engine.tool_rules import ToolCallCounts
from agentrig.runtime.history.events import Event, EventLog
from agentrig.runtime.history.run_records import RunError, TurnRecord
from agentrig.runtime.history.sessions import Session, load_session, new_session
from agentrig.runtime.history.tinyagent_format import messages_to_tinyagent
from agentrig.runtime.history.tool_registry import ToolCallRegistry
from agentrig.runtime.models.attachments import turn_prompt
from agentrig.runtime.runfolder import jsonio
from agentrig.scenarios.loader import LoadedScenario
from agentrig.scenarios.model import Attachment, Scenario

__all__ = ["EngineUnsupported", "TinyagentExecution", "execute_scenario_tinyagent", "unsupported_features"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TinyagentExecution:
    """What running one scenario on tinyagent produced (the runner's `ExecutionLike`)."""

    turns: tuple[TurnRecord, ...]
    session: Session
    pydantic_ai_dump: bytes
    """No pydantic-ai here: the final history as tinyagent messages (the run directory's dump slot)."""
    scripted: bool
    registry: ToolCallRegistry
    events: tuple[Event, ...] = ()
    """The session's event log (docs/events.md), one agent run per turn."""


def unsupported_features(scenario: Scenario) -> list[str]:
    """What in `scenario` tinyagent cannot express; empty when the engine runs it (docs/removal.md cites why)."""
    found: list[str] = []
    if scenario.agents:
        found.append("scripted sub-agents (`agents:`: pydantic-ai agents a tool delegates to)")
    if scenario.deps is not None:
        found.append("`deps:` (pydantic-ai's RunContext dependencies; a tinyagent tool receives none)")
    if scenario.capabilities or scenario.history_processors:
        found.append("`capabilities:` / `history_processors:` (pydantic-ai capabilities attached to its runs)")
    if scenario.requires:
        found.append(f"`requires: {list(scenario.requires)}` (extras of pydantic-ai: its UI adapters, its harness)")
    if scenario.output is not None and scenario.output.tools:
        found.append(
            "several output tools (`output.tools`: a union of output types; tinyagent's loop ends on text, with no"
            " output tool)"
        )
    elif scenario.output is not None and scenario.output.structured:
        found.append(
            "a structured output (`output.schema` / `output.type`: tinyagent's loop ends on text, with no output tool)"
        )
    if not scenario.settings.prepare_history:
        found.append(
            "`settings.prepare_history: false` (hands the history to pydantic-ai's own cleanup; tinyagent has none)"
        )
    if any(step.expect_input and step.expect_input.synthesized_returns is not None for t in scenario.turns
           for step in t.model):  # fmt: skip
        found.append("`expect_input.synthesized_returns` (tool returns pydantic-ai's cleanup synthesizes)")
    if any(step.cut for turn in scenario.turns for step in turn.model):
        found.append(
            "a `cut` step (a response the provider ends early: agentrig's provider layer detects it on pydantic-ai's"
            " streamed responses)"
        )
    ui_turns = [(index + 1, turn.ui.protocol) for index, turn in enumerate(scenario.turns) if turn.ui is not None]
    for protocol in sorted({protocol for _, protocol in ui_turns}):
        numbers = ", ".join(str(number) for number, used in ui_turns if used == protocol)
        found.append(f"UI requests (`ui: {protocol}`, turns {numbers}: read and answered by pydantic-ai's adapter)")
    if any(result.ask_approval for spec in scenario.tools.values() for result in spec.results):
        found.append("a YAML tool's `ask_approval` (pydantic-ai's ApprovalRequired; tinyagent has no approval step)")
    for index, turn in enumerate(scenario.turns):
        if turn.approvals is not None:
            found.append(
                f"turn {index + 1}: approvals (pydantic-ai's ToolApproved/ToolDenied; tinyagent has no approval step)"
            )
        if turn.steer:
            found.append(
                f"turn {index + 1}: steering (delivered through pydantic-ai's RunContext/AgentRun.enqueue and"
                " checked on its history; not mapped to tinyagent's steer queue yet)"
            )
        if turn.cancel is not None:
            found.append(
                f"turn {index + 1}: a cancel point (pydantic-ai's CancellationToken and RunCancelled snapshot)"
            )
        if turn.simulate is not None:
            found.append(f"turn {index + 1}: a simulated user (its user model is a pydantic-ai Agent)")
        others = [_attachment_kind(attachment) for attachment in turn.attachments]
        others = [kind for kind in others if kind is not None]
        if others:
            found.append(
                f"turn {index + 1}: attachments other than images ({', '.join(others)}; tinyagent's user messages"
                " hold text and images)"
            )
    return list(dict.fromkeys(found))


def _attachment_kind(attachment: Attachment) -> str | None:
    """What a non-image attachment is (its media type, or its URL kind); None for an image."""
    media_type = attachment.resolved_media_type or DEFAULT_FILE_MEDIA_TYPE
    if attachment.url_kind is not None and attachment.url_kind != "image-url":
        return attachment.url_kind
    return None if media_type.startswith("image/") else media_type


def _initial_session(loaded: LoadedScenario) -> Session:
    path = loaded.initial_history_path()
    if path is None:
        return new_session(working_directory=loaded.base_dir)
    stored = load_session(path)
    session = new_session(working_directory=loaded.base_dir, messages=list(stored.messages))
    return replace(session, compaction=stored.compaction)


def _scenario_agent(
    loaded: LoadedScenario, outcomes: ToolOutcomes, counts: ToolCallCounts | None = None
) -> tuple[Agent, str]:
    scenario = loaded.scenario
    if scenario.agent is not None:
        return load_tinyagent_agent(loaded), scenario.agent
    agent = Agent(AgentOptions())
    agent.set_model(SCRIPT_MODEL)
    agent.set_system_prompt(loaded.system_prompt_text() or "")
    retries = scenario.settings.tool_retries
    agent.set_tools(yaml_tools(scenario.tools, counts or ToolCallCounts(), outcomes, tool_retries=retries))
    return agent, f"tinyagent agent with {len(scenario.tools)} YAML tool(s)"


async def execute_scenario_tinyagent(loaded: LoadedScenario, *, model: Any = None) -> TinyagentExecution:
    """Run every turn of a scripted scenario through one tinyagent `Agent` and one `RequestOrchestrator`."""
    scenario = loaded.scenario
    if model is not None:
        raise EngineUnsupported("--engine tinyagent runs the scenario's script only (no --model, --record, --replay)")
    missing = unsupported_features(scenario)
    if missing:
        raise EngineUnsupported(UNSUPPORTED_PREFIX + "; ".join(missing))
    outcomes = ToolOutcomes()
    counts = ToolCallCounts()
    agent, label = _scenario_agent(loaded, outcomes, counts)
    rules = scenario.output.validators if scenario.output is not None else ()
    own_model = agent.state.model
    if own_model is None:
        agent.set_model(SCRIPT_MODEL)
    script = TinyagentScript([turn.model for turn in scenario.turns], stream=scenario.stream, base_dir=loaded.base_dir)
    session = _initial_session(loaded)
    compaction = scenario.settings.compaction
    compactor = None
    if compaction is not None:
        compactor = CompactionController(
            context_window=compaction.context_window,
            reserve=compaction.reserve,
            keep_recent=compaction.keep_recent,
            summarizer=script.summarize,
            state=session.compaction,
        )
    engine = TinyagentEngine(
        agent, script, label=label, outcomes=outcomes, output_rules=OutputRules(rules=rules, counts=counts)
    )
    events = EventLog()
    orchestrator = RequestOrchestrator(
        EventingEngine(engine, events, tap=engine), session, settings=scenario.settings, compactor=compactor
    )
    turns: list[TurnRecord] = []
    try:
        for index, turn in enumerate(scenario.turns):
            script.begin_turn(index)
            record = await orchestrator.run(turn_prompt(loaded, index), deferred_results=turn.deferred_results)
            record = replace(record, model_input_checks=script.take_checks())
            mismatch = script.finish_turn()
            if mismatch is not None and record.error is None and not record.interrupted:
                record = replace(record, error=RunError(kind=mismatch.kind, message=mismatch.message))
            if compactor is not None and compactor.record is not None:
                orchestrator.session = replace(orchestrator.session, compaction=compactor.record)
            turns.append(record)
    finally:
        if own_model is None:
            agent.state.model = None  # the user's agent is theirs again
    session = orchestrator.session
    return TinyagentExecution(
        turns=tuple(turns),
        session=session,
        pydantic_ai_dump=jsonio.dumps(messages_to_tinyagent(session.messages), pretty=True),
        scripted=True,
        registry=scenario_registry(turns, session.messages),
        events=tuple(events.events),
    )
