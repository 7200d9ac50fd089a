"""Run one scenario's turns through one `RequestOrchestrator` -> `ScenarioExecution`.

    execution = await execute_scenario(loaded)              # the scripted model answers from the YAML
    execution = await execute_scenario(loaded, model=real)  # a real provider or a replay: the script is ignored

The session starts from `initial_history` (any history form agentrig reads) or empty. Each turn is one
request: its `user` prompt, or no prompt with its `deferred_results` (the calls the previous turn deferred).
With a script, each turn is checked for steps left unused (`script_mismatch`) and carries the script's
`expect_input` checks. With `settings.compaction`, a `CompactionController` checks every request, and its
summarize requests go to the same model (scripted `summary:` steps answer them).
"""

from __future__ import annotations

from contextlib import AsyncExitStack, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.models import Model, override_allow_model_requests

from agentrig.runtime.engine.compaction.controller import CompactionController
from agentrig.runtime.engine.compaction.summarizer import compactor_for
from agentrig.runtime.engine.event_engine import EventingEngine
from agentrig.runtime.engine.orchestrator import RequestOrchestrator
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache, AgentHandle, agent_for_scenario
from agentrig.runtime.engine.pydantic_ai_engine.composition import check_requires, load_composition
from agentrig.runtime.engine.pydantic_ai_engine.deferred import turn_deferred_results
from agentrig.runtime.engine.pydantic_ai_engine.deps import enter_deps
from agentrig.runtime.engine.pydantic_ai_engine.plain import PydanticAIEngine
from agentrig.runtime.engine.pydantic_ai_engine.simulated_turns import run_simulated_turn
from agentrig.runtime.engine.pydantic_ai_engine.streamed import PydanticAIStreamedEngine
from agentrig.runtime.engine.pydantic_ai_engine.subagents import SubAgentRun, SubAgentScripts
from agentrig.runtime.engine.pydantic_ai_engine.ui_turn import open_ui_turn
from agentrig.runtime.engine.session_registry import scenario_registry
from agentrig.runtime.engine.tool_threads import DaemonThreads
from agentrig.runtime.history.canonical import Message, UserPrompt
from agentrig.runtime.history.events import Event, EventLog
from agentrig.runtime.history.run_records import ToolCallStatusRecord, TurnRecord
from agentrig.runtime.history.sessions import Session, load_session, new_session
from agentrig.runtime.history.tool_registry import ToolCallRegistry
from agentrig.runtime.history.ui_exchange import UiExchange
from agentrig.runtime.models.attachments import turn_prompt
from agentrig.runtime.models.conversion import dump_pydantic_ai_json
from agentrig.runtime.models.failures import classify
from agentrig.runtime.models.scripted import ScriptedModel
from agentrig.runtime.models.usage_tap import UsageTap
from agentrig.runtime.runfolder import jsonio
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["NO_DEPS", "ScenarioExecution", "execute_scenario", "scripted_model_for"]

_TOOL_THREADS = DaemonThreads()
"""Where the agent's sync tools run: a tool that never returns neither outlives its turn's timeout nor keeps the
process from exiting (`tool_threads`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioExecution:
    """Everything running one scenario produced."""

    turns: tuple[TurnRecord, ...]
    """One record per turn, in order."""
    session: Session
    """The final session (its `messages` are the authoritative canonical history)."""
    initial_messages: tuple[Message, ...] = ()
    """The history the session started from (`initial_history`)."""
    native_dumps: tuple[bytes | None, ...] = ()
    """What each run added, as pydantic-ai itself serialized it (`Attempt.native_dump`)."""
    scripted: bool
    """The scripted model answered (False for a real provider or a replay)."""
    subagent_runs: tuple[SubAgentRun, ...] = ()
    """Every run of the scenario's scripted sub-agents (`agents:`), exported beside the main history."""
    registry: ToolCallRegistry
    """Every tool call of the session with its final status: the calls of each turn, and the calls the
    initial history already held (seeded from their answers), so it can be checked against the whole history."""
    events: tuple[Event, ...] = ()
    """The session's event log (docs/events.md), one agent run per turn."""

    @property
    def pydantic_ai_dump(self) -> bytes:
        """What pydantic-ai itself wrote for the scenario's runs, through its own serializer (see `_native_dump`);
        the matrix compares these across versions. Assembled when asked for (only a run that writes its output
        files does)."""
        return _native_dump(list(self.initial_messages), list(self.native_dumps))

    @property
    def registry_records(self) -> tuple[ToolCallStatusRecord, ...]:
        """The scenario-wide registry as plain records."""
        return tuple(self.registry.records())


def scripted_model_for(loaded: LoadedScenario) -> ScriptedModel:
    """The scripted model answering this scenario's turns."""
    return ScriptedModel([turn.model for turn in loaded.scenario.turns], base_dir=loaded.base_dir)


def _initial_session(loaded: LoadedScenario) -> Session:
    path = loaded.initial_history_path()
    if path is None:
        return new_session(working_directory=loaded.base_dir)
    stored = load_session(path)
    # The compaction record goes on with the messages it describes: a resumed session keeps sending the
    # summary instead of summarizing again (docs/compaction.md).
    session = new_session(working_directory=loaded.base_dir, messages=list(stored.messages))
    return replace(session, compaction=stored.compaction)


def _with_compaction_record(session: Session, compactor: CompactionController | None) -> Session:
    record = compactor.record if compactor is not None else None
    return session if record is None else replace(session, compaction=record)


def _native_dump(initial: list[Message], turns: list[bytes | None]) -> bytes:
    """pydantic-ai's own dump of the scenario: the initial history as the installed version writes it, then what
    each turn's run added, exactly as that run's pydantic-ai serialized it (model names, usage, instructions,
    its own part shapes). The agentrig-made changes of the canonical history (closing calls an error left
    open, `[INTERRUPTED]` responses) are not in it: they are agentrig's, not pydantic-ai's."""
    messages: list[object] = jsonio.loads(dump_pydantic_ai_json(initial)) if initial else []
    for dump in turns:
        if dump is not None:
            messages.extend(jsonio.loads(dump))
    return jsonio.dumps(messages)


NO_DEPS: Any = object()
"""`execute_scenario(deps=...)` not given: the scenario's own `deps` (or none)."""


async def execute_scenario(
    loaded: LoadedScenario,
    *,
    model: Model | None = None,
    cache: AgentCache | None = None,
    agent: Any = None,
    deps: Any = NO_DEPS,
) -> ScenarioExecution:
    """Run every turn of `loaded` in one session. `model=None` answers from the scenario's script.

    `agent` and `deps` are objects a Python caller holds (`agentrig.testing`): the agent runs in place of the one
    the scenario names, with these deps. A scripted run loads the agent offline (placeholder provider keys during
    its import) and refuses every model request that is not scripted (pydantic-ai's `ALLOW_MODEL_REQUESTS`, set
    for the run only)."""
    scripted = model is None
    check_requires(loaded)
    subagents = SubAgentScripts(loaded, scripted=scripted)
    handle = agent_for_scenario(loaded, cache=cache, offline=scripted, agent=agent)
    handle.run_capabilities = load_composition(loaded, offline=scripted)
    guard = override_allow_model_requests(False) if scripted else nullcontext()
    async with AsyncExitStack() as stack:
        stack.enter_context(guard)
        stack.enter_context(Agent.using_thread_executor(_TOOL_THREADS))
        if deps is not NO_DEPS:
            handle.deps = deps
        elif loaded.scenario.deps is not None:
            handle.deps = await enter_deps(
                loaded.scenario.deps,
                stack,
                search_paths=[loaded.base_dir, Path.cwd()],
                scenario_path=loaded.path,
                line=loaded.line_of("deps") if loaded.declares("deps") else None,
                offline=scripted,
            )
        stack.enter_context(subagents.overriding())
        return await _run_turns(loaded, model, handle, subagents)


async def _run_turns(
    loaded: LoadedScenario, model: Model | None, handle: AgentHandle, subagents: SubAgentScripts
) -> ScenarioExecution:
    scenario = loaded.scenario
    scripted = model is None
    script = scripted_model_for(loaded) if scripted else None
    run_model: Model | None = script if script is not None else model
    session = _initial_session(loaded)
    initial_messages = list(session.messages)
    summarizing_model = run_model if run_model is not None else handle.agent.model
    compactor = compactor_for(loaded.scenario.settings.compaction, summarizing_model, session.compaction)
    tap = UsageTap(run_model) if run_model is not None else None
    engine_class = PydanticAIStreamedEngine if scenario.stream else PydanticAIEngine
    events = EventLog()
    engine = EventingEngine(engine_class(handle, model=tap), events, tap=tap)
    orchestrator = RequestOrchestrator(engine, session, settings=scenario.settings, compactor=compactor)
    turns: list[TurnRecord] = []

    async def exchange(prompt: UserPrompt) -> TurnRecord:
        """One turn of a simulated conversation: the script's `expect_input` checks are its own."""
        record = await orchestrator.run(prompt)
        if script is not None:
            record = replace(record, model_input_checks=(*script.drain_checks(), *subagents.take_checks()))
        orchestrator.session = _with_compaction_record(orchestrator.session, compactor)
        return record

    for index, turn in enumerate(scenario.turns):
        if script is not None:
            script.begin_turn(index)
        if turn.simulate is not None:
            # The agent's steps of the turn answer every message of the conversation, in order.
            records = await run_simulated_turn(loaded, index, lambda: orchestrator.session.messages, exchange)
            turns.extend(records[:-1])
            record = records[-1]
        elif turn.ui is not None:
            record = await _ui_turn(loaded, index, orchestrator, handle)
        else:
            record = await orchestrator.run(
                turn_prompt(loaded, index),
                deferred_results=turn_deferred_results(turn),
                steering=turn.steer,
                cancel=turn.cancel,
            )
        if script is not None:
            checks = () if turn.simulate is not None else (*script.take_checks(), *subagents.take_checks())
            record = replace(record, model_input_checks=(*record.model_input_checks, *checks))
            mismatch = script.finish_turn()
            if mismatch is None and index == len(scenario.turns) - 1:
                mismatch = subagents.unused()
            if mismatch is not None and record.error is None and not record.interrupted:
                record = replace(record, error=classify(mismatch))
        orchestrator.session = _with_compaction_record(orchestrator.session, compactor)
        turns.append(record)
    session = orchestrator.session
    return ScenarioExecution(
        turns=tuple(turns),
        session=_with_last_output(session, turns),
        initial_messages=tuple(initial_messages),
        native_dumps=tuple(orchestrator.native_dumps),
        scripted=scripted,
        registry=scenario_registry(turns, session.messages),
        subagent_runs=subagents.runs(),
        events=tuple(events.events),
    )


async def _ui_turn(
    loaded: LoadedScenario, index: int, orchestrator: RequestOrchestrator, handle: AgentHandle
) -> TurnRecord:
    """A UI turn: the request read by its adapter, run (unless refused), and the adapter's answer recorded."""
    request = loaded.scenario.turns[index].ui
    assert request is not None  # only called for a UI turn
    ui = await open_ui_turn(loaded, index, request, handle)
    if isinstance(ui, UiExchange):
        return replace(orchestrator.turn_without_run(), ui=ui)
    record = await orchestrator.run(None, protocol_request=ui)
    return replace(record, ui=await ui.answer())


def _with_last_output(session: Session, turns: list[TurnRecord]) -> Session:
    """The session file keeps the last structured output (JSON and type), which its messages do not hold."""
    last = turns[-1] if turns else None
    if last is None or last.output_json is None:
        return session
    extras = {**session.extras, "last_output": {"type": last.output_type, "json": last.output_json}}
    return replace(session, extras=extras)
