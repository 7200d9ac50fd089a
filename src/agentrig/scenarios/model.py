"""The scenario format: what a YAML scenario file may say, as validated, frozen values.

These models are the single source of the format: the loader validates against them, `agentrig
schema` prints their JSON Schema, and `docs/scenarios.md` is generated from their field docs.
Imports pydantic (not pydantic-ai, not typer), so `agentrig validate` stays fast.

Every model forbids unknown keys: a typo in a scenario file is an error naming the line, not a
silently ignored setting. The models live in one module per concern and are all importable from here:

    content_model      user content beyond text: attachments (files, inline data, URLs)
    step_model         the scripted model: steps, tool calls, thoughts, errors, `expect_input`
    tool_model         YAML tools and their canned results
    output_model       a self-contained agent's structured output and output validators
    turn_model         turns, approvals, sub-agent scripts
    expectation_model  what must hold after a turn and after the scenario
    judge_model        judged checks: a rubric, a judge model or script, its verdict
    simulate_model     simulated users: a persona, a goal, a user model or script, when to stop
    event_model        checks on the event log
    settings_model     run settings
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Annotated, Any

from pydantic import Field, model_validator

from agentrig.scenarios._strict import AGENT_SPEC_PATTERN
from agentrig.scenarios._strict import Strict as _Strict
from agentrig.scenarios.composition_model import Extra
from agentrig.scenarios.content_model import (
    MAX_ATTACHMENT_BYTES as MAX_ATTACHMENT_BYTES,
)
from agentrig.scenarios.content_model import Attachment as Attachment
from agentrig.scenarios.content_model import UserContentItem as UserContentItem
from agentrig.scenarios.content_model import UserMessage as UserMessage
from agentrig.scenarios.expectation_model import Bounds as Bounds
from agentrig.scenarios.expectation_model import CompactionExpectation as CompactionExpectation
from agentrig.scenarios.expectation_model import CompactionStatus as CompactionStatus
from agentrig.scenarios.expectation_model import ErrorExpectation as ErrorExpectation
from agentrig.scenarios.expectation_model import InvariantName as InvariantName
from agentrig.scenarios.expectation_model import OutputExpectation as OutputExpectation
from agentrig.scenarios.expectation_model import RunErrorKind as RunErrorKind
from agentrig.scenarios.expectation_model import ScenarioExpectations
from agentrig.scenarios.expectation_model import ToolCallMatcher as ToolCallMatcher
from agentrig.scenarios.expectation_model import ToolCallsExpectation as ToolCallsExpectation
from agentrig.scenarios.expectation_model import ToolCallStatus as ToolCallStatus
from agentrig.scenarios.expectation_model import TurnExpectations as TurnExpectations
from agentrig.scenarios.expectation_model import UsageExpectation as UsageExpectation
from agentrig.scenarios.expectation_model import UsageValue as UsageValue
from agentrig.scenarios.judge_model import JudgeExpectation as JudgeExpectation
from agentrig.scenarios.judge_model import JudgeVerdict as JudgeVerdict
from agentrig.scenarios.output_model import OutputMode as OutputMode
from agentrig.scenarios.output_model import OutputSpec
from agentrig.scenarios.output_model import OutputTool as OutputTool
from agentrig.scenarios.output_model import OutputValidatorRule as OutputValidatorRule
from agentrig.scenarios.provider_settings import ProviderSettings as ProviderSettings
from agentrig.scenarios.settings_model import CompactionSettings as CompactionSettings
from agentrig.scenarios.settings_model import Settings
from agentrig.scenarios.simulate_model import SimulatedUser as SimulatedUser
from agentrig.scenarios.simulate_model import SimulationStop as SimulationStop
from agentrig.scenarios.step_model import MAX_SCRIPTED_TOKENS as MAX_SCRIPTED_TOKENS
from agentrig.scenarios.step_model import ModelInputCheck as ModelInputCheck
from agentrig.scenarios.step_model import ModelStep as ModelStep
from agentrig.scenarios.step_model import ProviderErrorKind as ProviderErrorKind
from agentrig.scenarios.step_model import ScriptedError as ScriptedError
from agentrig.scenarios.step_model import ScriptedThought as ScriptedThought
from agentrig.scenarios.step_model import ScriptedToolCall as ScriptedToolCall
from agentrig.scenarios.step_model import ScriptedUsage as ScriptedUsage
from agentrig.scenarios.tool_model import ToolOutcome as ToolOutcome
from agentrig.scenarios.tool_model import ToolResult as ToolResult
from agentrig.scenarios.tool_model import ToolSpec
from agentrig.scenarios.turn_model import ApprovalDecision as ApprovalDecision
from agentrig.scenarios.turn_model import SubAgentScript, Turn

JsonValue = Any


class Scenario(_Strict):
    """One scenario: an agent, a script, and what must hold."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=100)
    """Unique name (at most 100 characters: it names the scenario's output directory and golden file); used for
    output directories and `-k` filters."""
    description: str = ""
    """What the scenario proves, in a sentence."""
    tags: tuple[str, ...] = ()
    """Labels for selecting scenarios (`agentrig run -k`) and grouping reports."""
    agent: str | None = Field(default=None, pattern=AGENT_SPEC_PATTERN)
    """The user's own agent as `module:attribute` (an `Agent` or a zero-argument factory, called once per
    scenario). Its real tools run; its model is replaced by the script."""
    deps: str | None = Field(default=None, pattern=AGENT_SPEC_PATTERN)
    """How to build the agent's deps, as `module:attribute` of a zero-argument callable (sync or async)
    returning them, or returning a (sync or async) context manager whose value is the deps and whose exit
    runs after the scenario. Default: `agentrig run --deps`, else None."""
    agents: dict[Annotated[str, Field(pattern=AGENT_SPEC_PATTERN)], SubAgentScript] = Field(default_factory=dict)
    """Scripts for other agents, by `module:attribute` (e.g. a sub-agent a tool delegates to); each is run
    on its script through `agent.override(model=...)`. In a scripted run an agent with no script may not
    send a model request."""
    capabilities: tuple[Annotated[str, Field(pattern=AGENT_SPEC_PATTERN)], ...] = ()
    """pydantic-ai capabilities as `module:attribute`: an `AbstractCapability` (e.g. `Hooks(...)`,
    `ProcessHistory(...)`, a pydantic-ai-harness class instance) or a zero-argument factory returning one or a
    list of them; passed as `capabilities=` to every run, after the agent's own."""
    history_processors: tuple[Annotated[str, Field(pattern=AGENT_SPEC_PATTERN)], ...] = ()
    """History processors as `module:attribute`: a function `(messages) -> messages` or `(ctx, messages) ->
    messages` (sync or async), each attached as a `ProcessHistory` capability. pydantic-ai keeps what it returns
    as the run's history; a `model_request` hook (under `capabilities`) changes only what the model is sent."""
    requires: tuple[Extra, ...] = ()
    """Optional extras the scenario needs: `ag-ui` (`pydantic-ai-slim[ag-ui]`), `vercel-ai`
    (`pydantic-ai-slim[ui]`), `harness` (`pydantic-ai-harness`); a UI turn needs its protocol's extra whether
    listed or not. When one is not installed the scenario is skipped, nothing of it run, with the reason and the
    command that installs it (`requires ag-ui: pip install 'pydantic-ai-slim[ag-ui]'`); `agentrig run
    --require-extras` (pytest: `--agentrig-require-extras`) makes that an error instead (exit code 3)."""
    system_prompt: str | None = None
    """System prompt of a self-contained agent (inline)."""
    system_prompt_file: str | None = None
    """System prompt read from a file (relative to the scenario file)."""
    context_file: str | None = None
    """A guide such as AGENTS.md, appended to the system prompt under `<user_context>`."""
    tools: dict[str, ToolSpec] = Field(default_factory=dict)
    """Self-contained tools with canned outcomes, by name."""
    output: OutputSpec | None = None
    """The self-contained agent's output: a JSON Schema or a type, the mode that delivers it, validators that ask
    for a retry. Omitted: text."""
    initial_history: str | None = None
    """A canonical, legacy, session or pydantic-ai dump file (relative to the scenario file) the run resumes from."""
    settings: Settings = Field(default_factory=Settings)
    """Run settings: limits, retries, timeout, pruning, compaction."""
    stream: bool = False
    """Run every turn through pydantic-ai's streaming API (`agentrig run --stream` sets it for every scenario)."""
    turns: tuple[Turn, ...] = Field(min_length=1)
    """The conversation, one user request per turn, run in order on one session."""
    expect: ScenarioExpectations = Field(default_factory=ScenarioExpectations)
    """What must hold after the last turn."""

    @model_validator(mode="after")
    def _prompt_sources(self) -> Scenario:
        if self.system_prompt is not None and self.system_prompt_file is not None:
            raise ValueError("give system_prompt or system_prompt_file, not both")
        if self.agent is not None and self.tools:
            raise ValueError(
                "tools are declared by the agent named in `agent`; YAML tools are for self-contained agents"
            )
        if self.deps is not None and self.agent is None and not AGENT_OBJECT_GIVEN.get():
            raise ValueError("deps are for the agent named in `agent`; a self-contained agent has none")
        if self.agent is not None and self.output is not None:
            raise ValueError("the agent named in `agent` has its own output type and validators; `output` is for a"
                             " self-contained agent")  # fmt: skip
        return self

    @property
    def most_turns(self) -> int:
        """The most turns a run of the scenario takes: a simulated turn may run its `max_turns` (its time budget)."""
        return sum(turn.simulate.max_turns if turn.simulate is not None else 1 for turn in self.turns)


AGENT_OBJECT_GIVEN: ContextVar[bool] = ContextVar("agentrig_agent_object_given", default=False)
"""True while `agentrig.testing` loads a scenario for an `Agent` object it was given: `deps` need no `agent:`."""

ScenarioFile = Annotated[Scenario | list[Scenario], Field(description="One scenario, or a list of scenarios")]
