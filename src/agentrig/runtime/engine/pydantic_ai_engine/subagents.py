"""Scripts for the other agents a scenario's agent calls (a tool that delegates to a sub-agent).

    agents:
      myapp.agents:extractor:
        model: [{text: '...'}, ...]

Each named agent runs on its own scripted model for the whole scenario, through pydantic-ai's
`agent.override(model=...)` (a context variable, so the tool's run of the sub-agent sees it). Its steps are
taken in order by every run of it, across turns. Usage is left to pydantic-ai: a tool that passes
`usage=ctx.usage` adds the sub-agent's requests and tokens to the calling run, as it would in production.

Every request the sub-agent answers is recorded with the history it was sent, so each of its runs is
exported beside the main history (`scenarios/<name>/subagents/<label>.run<N>.history.json`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic_ai.agent import AbstractAgent
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.settings import ModelSettings

from agentrig.errors import ScenarioError
from agentrig.runtime.engine.module_loading import resolve_attribute
from agentrig.runtime.engine.pydantic_ai_engine.deps import offline_import
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.run_records import Check
from agentrig.runtime.models.conversion import to_canonical
from agentrig.runtime.models.scripted import ScriptedModel
from agentrig.runtime.models.stops import ScriptExhausted, ScriptMismatch
from agentrig.scenarios.loader import LoadedScenario
from agentrig.scenarios.model import ModelStep

__all__ = ["SubAgentRun", "SubAgentScripts", "file_label"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SubAgentRun:
    """One run of a scripted sub-agent: its history as the scripted model last saw it, plus the answer."""

    spec: str
    """The agent, as the scenario names it (`module:attribute`)."""
    run: int
    """1-based: the Nth run of this agent in the scenario."""
    messages: tuple[Message, ...]


def file_label(spec: str) -> str:
    """A file-name-safe label for `module:attribute`."""
    return spec.replace(":", ".")


def _run_key(messages: Sequence[ModelMessage]) -> object:
    """Which run of the agent sent `messages`: pydantic-ai's run id where the version sets one."""
    if not messages:
        return 0
    return messages[-1].run_id or id(messages[0])


class _RecordingScript(ScriptedModel):
    """A scripted model for one sub-agent that keeps, per run, the history it was sent and its last answer.

    What a request sends is kept before the script answers, so a run the script fails (an `error` step, no step
    left) is exported too, ending with the request it could not answer; streamed runs (`run_stream`) likewise."""

    def __init__(self, spec: str, steps: Sequence[ModelStep], *, base_dir: Path) -> None:
        super().__init__([steps], base_dir=base_dir)
        self.spec = spec
        self.runs: dict[object, list[ModelMessage]] = {}

    def _script_error(self, error: ScriptExhausted | ScriptMismatch) -> ScriptExhausted | ScriptMismatch:
        return type(error)(f"agent {self.spec}: {error}".replace(": turn 1, ", ": "))

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        key = _run_key(messages)
        self.runs[key] = list(messages)
        try:
            response = await super().request(messages, model_settings, model_request_parameters)
        except (ScriptExhausted, ScriptMismatch) as error:
            raise self._script_error(error) from None
        self.runs[key] = [*messages, response]
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse]:
        key = _run_key(messages)
        self.runs[key] = list(messages)
        try:
            opened = super().request_stream(messages, model_settings, model_request_parameters, run_context)
            stream = await opened.__aenter__()
        except (ScriptExhausted, ScriptMismatch) as error:
            raise self._script_error(error) from None
        async with AsyncExitStack() as stack:
            stack.push_async_exit(opened)
            yield stream
            self.runs[key] = [*messages, stream.get()]


class SubAgentScripts:
    """The scenario's `agents:` scripts, entered for the scenario's run (`with scripts.overriding():`)."""

    def __init__(self, loaded: LoadedScenario, *, scripted: bool) -> None:
        """`scripted=False` (a real model or a replay): every script is ignored, the sub-agents' too."""
        self._scripts: list[_RecordingScript] = []
        self._agents: list[AbstractAgent[Any, Any]] = []
        search = [loaded.base_dir, Path.cwd()]
        for spec, script in loaded.scenario.agents.items() if scripted else ():
            line = loaded.line_of("agents", spec)

            def fail(message: str, line: int = line) -> ScenarioError:
                return ScenarioError(message, path=loaded.path, line=line, field="agents")

            with offline_import():
                agent: Any = resolve_attribute(spec, search_paths=search, fail=fail)
            if not isinstance(agent, AbstractAgent):
                kind = type(agent).__name__
                raise fail(f"{spec!r} is a {kind}, not a pydantic-ai Agent (the Agent object its caller runs)")
            self._agents.append(agent)
            self._scripts.append(_RecordingScript(spec, script.model, base_dir=loaded.base_dir))

    def overriding(self) -> ExitStack:
        """Every scripted agent runs on its script until the returned stack closes."""
        stack = ExitStack()
        for agent, script in zip(self._agents, self._scripts, strict=True):
            stack.enter_context(agent.override(model=script))
        return stack

    def take_checks(self) -> tuple[Check, ...]:
        """The sub-agents' `expect_input` checks since the last call, named by agent."""
        checks: list[Check] = []
        for script in self._scripts:
            for check in script.drain_checks():
                name = check.name.replace("turn 1, ", "", 1)
                checks.append(replace(check, name=f"agent {script.spec}, {name}"))
        return tuple(checks)

    def unused(self) -> ScriptMismatch | None:
        """A mismatch naming the first sub-agent whose script was not used up by the end of the scenario."""
        for script in self._scripts:
            left = script.remaining_steps()
            if left:
                return ScriptMismatch(
                    f"agent {script.spec}: {len(left)} scripted step(s) left unused at the end of the scenario"
                )
        return None

    def runs(self) -> tuple[SubAgentRun, ...]:
        """Every run of every scripted sub-agent, in order."""
        return tuple(
            SubAgentRun(spec=script.spec, run=number, messages=tuple(to_canonical(messages)))
            for script in self._scripts
            for number, messages in enumerate(script.runs.values(), start=1)
        )
