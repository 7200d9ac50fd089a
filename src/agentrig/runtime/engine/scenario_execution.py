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

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace

from pydantic_ai.direct import model_request
from pydantic_ai.messages import ModelRequest, SystemPromptPart, UserPromptPart
from pydantic_ai.models import Model

from agentrig.runtime.engine.agent_loading import AgentCache, AgentHandle, agent_for_scenario
from agentrig.runtime.engine.compaction import SUMMARIZE_PROMPT, CompactionController
from agentrig.runtime.engine.orchestrator import RequestOrchestrator
from agentrig.runtime.engine.pydantic_ai_engine import PydanticAIEngine
from agentrig.runtime.history.canonical import Message, RetryPromptPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.run_records import ToolCallStatusRecord, TurnRecord
from agentrig.runtime.history.sessions import CompactionRecord, Session, load_session, new_session
from agentrig.runtime.history.tool_registry import ToolCallRegistry
from agentrig.runtime.models.conversion import dump_pydantic_ai_json
from agentrig.runtime.models.failures import classify
from agentrig.runtime.models.scripted import ScriptedModel, summary_request
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["ScenarioExecution", "execute_scenario", "model_summarizer", "scripted_model_for"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioExecution:
    """Everything running one scenario produced."""

    turns: tuple[TurnRecord, ...]
    """One record per turn, in order."""
    session: Session
    """The final session (its `messages` are the authoritative canonical history)."""
    scripted: bool
    """The scripted model answered (False for a real provider or a replay)."""
    registry: ToolCallRegistry
    """Every tool call of the session with its final status: the calls of each turn, and the calls the
    initial history already held (seeded from their answers), so it can be checked against the whole history."""

    @property
    def pydantic_ai_dump(self) -> bytes:
        """The final history as the installed pydantic-ai dumps it (`ModelMessagesTypeAdapter`); the matrix
        compares these across versions. Built when asked for (only a run that writes its output files does)."""
        return dump_pydantic_ai_json(self.session.messages)

    @property
    def registry_records(self) -> tuple[ToolCallStatusRecord, ...]:
        """The scenario-wide registry as plain records."""
        return tuple(self.registry.records())


def scripted_model_for(loaded: LoadedScenario) -> ScriptedModel:
    """The scripted model answering this scenario's turns."""
    return ScriptedModel([turn.model for turn in loaded.scenario.turns])


def model_summarizer(model: Model) -> Callable[[str], Awaitable[str]]:
    """A compaction summarizer that asks `model` (marked as a summarize request for scripted models).

    One direct model request, not an agent run: an agent would answer an empty summary with an output retry
    (a second, paid request); here an empty answer is simply an empty summary, which the controller rejects.
    """

    async def summarize(transcript: str) -> str:
        request = ModelRequest(parts=[SystemPromptPart(content=SUMMARIZE_PROMPT), UserPromptPart(content=transcript)])
        with summary_request():
            response = await model_request(model, [request])
        return response.text or ""

    return summarize


def _initial_session(loaded: LoadedScenario) -> Session:
    path = loaded.initial_history_path()
    if path is None:
        return new_session(working_directory=loaded.base_dir)
    stored = load_session(path)
    # The compaction record goes on with the messages it describes: a resumed session keeps sending the
    # summary instead of summarizing again (docs/compaction.md).
    session = new_session(working_directory=loaded.base_dir, messages=list(stored.messages))
    return replace(session, compaction=stored.compaction)


def _compactor(
    loaded: LoadedScenario, model: Model | None, handle: AgentHandle, record: CompactionRecord | None
) -> CompactionController | None:
    settings = loaded.scenario.settings.compaction
    if settings is None:
        return None
    summarizing: Model | str | None = model if model is not None else handle.agent.model  # pyright: ignore[reportAssignmentType]
    if summarizing is None:
        return None
    if not isinstance(summarizing, Model):
        from pydantic_ai.models import infer_model

        summarizing = infer_model(summarizing)
    return CompactionController(
        context_window=settings.context_window,
        reserve=settings.reserve,
        keep_recent=settings.keep_recent,
        summarizer=model_summarizer(summarizing),
        state=record,
    )


def _with_compaction_record(session: Session, compactor: CompactionController | None) -> Session:
    record = compactor.record if compactor is not None else None
    return session if record is None else replace(session, compaction=record)


def _scenario_registry(turns: Iterable[TurnRecord], history: Iterable[Message]) -> ToolCallRegistry:
    """One registry for the session: each turn's final statuses (later turns win: a deferred call that was
    running at the end of one turn completes in the next), then calls only the history knows.

    A call that history preparation removed later (a pending call abandoned by a new prompt, which the loop
    contract's cleanup deletes) is no longer part of the session, so it is left out."""
    registry = ToolCallRegistry()
    history = list(history)
    called = {p.tool_call_id for m in history for p in m.parts if isinstance(p, ToolCallPart)}
    final: dict[str, ToolCallStatusRecord] = {}
    for turn in turns:
        for record in turn.tool_statuses:
            if record.tool_call_id in called:
                final[record.tool_call_id] = record
    answers: dict[str, str] = {}
    for message in history:
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                answers.setdefault(part.tool_call_id, part.outcome)
            elif isinstance(part, RetryPromptPart) and part.tool_call_id is not None:
                answers.setdefault(part.tool_call_id, "retry")
    for message in history:
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.tool_call_id not in final and part.tool_call_id not in registry:
                status = {"success": "completed", "interrupted": "cancelled", None: "running"}.get(
                    answers.get(part.tool_call_id), "failed"
                )
                final[part.tool_call_id] = ToolCallStatusRecord(
                    tool_call_id=part.tool_call_id,
                    tool_name=part.tool_name,
                    status=status,  # pyright: ignore[reportArgumentType]
                )
    for record in final.values():
        registry.register(record.tool_call_id, record.tool_name, {})
        if record.status == "registered":
            continue
        if record.status == "failed":
            registry.fail(record.tool_call_id, "failed")
        elif record.status == "cancelled":
            registry.cancel(record.tool_call_id, "cancelled")
        else:
            registry.start(record.tool_call_id)
            if record.status == "completed":
                registry.complete(record.tool_call_id)
    return registry


async def execute_scenario(
    loaded: LoadedScenario, *, model: Model | None = None, cache: AgentCache | None = None
) -> ScenarioExecution:
    """Run every turn of `loaded` in one session. `model=None` answers from the scenario's script."""
    scenario = loaded.scenario
    scripted = model is None
    script = scripted_model_for(loaded) if scripted else None
    run_model: Model | None = script if script is not None else model
    handle = agent_for_scenario(loaded, cache=cache)
    session = _initial_session(loaded)
    compactor = _compactor(loaded, run_model, handle, session.compaction)
    orchestrator = RequestOrchestrator(
        PydanticAIEngine(handle, model=run_model), session, settings=scenario.settings, compactor=compactor
    )
    turns: list[TurnRecord] = []
    for index, turn in enumerate(scenario.turns):
        if script is not None:
            script.begin_turn(index)
        record = await orchestrator.run(turn.user, deferred_results=turn.deferred_results)
        if script is not None:
            record = replace(record, model_input_checks=script.take_checks())
            mismatch = script.finish_turn()
            if mismatch is not None and record.error is None and not record.interrupted:
                record = replace(record, error=classify(mismatch))
        orchestrator.session = _with_compaction_record(orchestrator.session, compactor)
        turns.append(record)
    session = orchestrator.session
    return ScenarioExecution(
        turns=tuple(turns),
        session=session,
        scripted=scripted,
        registry=_scenario_registry(turns, session.messages),
    )
