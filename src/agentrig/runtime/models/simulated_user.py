"""The user model of a simulated turn (`simulate:`): a pydantic-ai Agent whose output is the next user message, or
that the user is done, asked once before each turn the simulation runs.

It is a model like the judge's (`judging`): `model: provider:name` is built as `--model` is (`chain.real_model`,
behind the run's limiter and provider options), metered and priced as the run's requests are, and recorded or
replayed with the run's record mode as `<scenario>+user-N` (N: the simulated turn's place in `turns`); a `script` is
pydantic-ai's FunctionModel writing the scripted messages in order, offline. The run's part (`SimulatedUsers`: where
the limiter, prices, record mode and recording name come from, and what the users' requests used and cost) reaches
the engine through `using_simulated_users`, so an engine's signature does not change for it."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from pydantic_ai import Agent, ToolOutput
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentrig.runtime.history.canonical import Message, TextPart, UserContentPart
from agentrig.runtime.history.run_records import Cost
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models.limiter import Limiter
from agentrig.runtime.models.metering import ScenarioMeter
from agentrig.runtime.models.provider_options import ProviderOptions
from agentrig.runtime.models.providers import close_model
from agentrig.runtime.models.record_modes import RecordSetup, needs_live_model
from agentrig.runtime.models.recorded_runs import scenario_model
from agentrig.scenarios.model import SimulatedUser

__all__ = [
    "NEXT_MESSAGE_TOOL",
    "SimulatedUsers",
    "UserModel",
    "simulated_users",
    "user_recording",
    "using_simulated_users",
]

NEXT_MESSAGE_TOOL = "next_message"
"""The user model's output tool: the next message (or done) is its arguments."""

_INSTRUCTIONS = (
    "You play the user in a conversation with an AI assistant, to test the assistant. Stay in the persona given in "
    "<persona> and pursue the goal given in <goal>. You are shown the conversation so far in <conversation> (the "
    "user's messages and the assistant's answers). Answer with the next message the user sends, written as that "
    "user would write it, or with done set to true when the goal is met or can no longer be met."
)


class _Next(BaseModel):
    """The user model's answer: done, or the message it sends."""

    done: bool = Field(description="True when the goal is met or can no longer be met: the user sends nothing more.")
    message: str = Field(default="", description="The next message the user sends (empty when done).")


@dataclass(slots=True, kw_only=True)
class SimulatedUsers:
    """What a run gives a scenario's simulated users, and what their requests used and cost."""

    prices: Path | None = None
    options: ProviderOptions | None = None
    limiter: Limiter | None = None
    setup: RecordSetup | None = None
    recording: str = ""
    """The scenario's recording name (a repeat's is its scenario's); `user_recording` adds the turn."""
    usage: Usage = field(default_factory=Usage)
    """The real user models' answered requests (a scripted user sends none)."""
    costs: list[Cost] = field(default_factory=list[Cost])
    """One per real user model, priced as the run prices its model."""


_current: ContextVar[SimulatedUsers | None] = ContextVar("agentrig_simulated_users", default=None)


@contextmanager
def using_simulated_users(users: SimulatedUsers) -> Generator[SimulatedUsers]:
    """Give the scenario run in this context `users` (its simulated turns' limiter, prices and record mode)."""
    token = _current.set(users)
    try:
        yield users
    finally:
        _current.reset(token)


def simulated_users() -> SimulatedUsers:
    """The run's `SimulatedUsers`; outside a run that set one (an engine called directly), a fresh one: no limiter,
    no record mode, default prices."""
    users = _current.get()
    return users if users is not None else SimulatedUsers()


def user_recording(scenario: str, turn: int) -> str:
    """The recording name of the user model of a scenario's `turn` (0-based): `+` is in no scenario name."""
    return f"{scenario}+user-{turn}"


class UserModel:
    """One simulated turn's user model, asked for each next message; `aclose` ends it (and writes its recording)."""

    def __init__(self, simulate: SimulatedUser, *, turn: int, scenario: str, users: SimulatedUsers) -> None:
        self.simulate = simulate
        self.users = users
        self.label = simulate.model or "script"
        """Who writes the messages, as the reports name it."""
        self._meter: ScenarioMeter | None = None
        self._model: Model | None = None
        self._recording = user_recording(users.recording or scenario, turn)
        self._instructions = (
            f"{_INSTRUCTIONS}\n\n<persona>\n{simulate.persona}\n</persona>\n\n<goal>\n{simulate.goal}\n</goal>"
        )

    def _built(self) -> Model:
        if self._model is not None:
            return self._model
        if self.simulate.script is not None:
            self._model = _scripted(self.simulate.script)
            return self._model
        name = self.simulate.model
        assert name is not None  # the scenario format gives a simulated user a model or a script
        from agentrig.runtime.models.chain import real_model

        users = self.users
        self._meter = ScenarioMeter(name, prices=users.prices)
        # A replay needs no live user model, and so no key: build it only when the mode may reach the provider.
        live = (
            real_model(name, options=users.options, limiter=users.limiter)
            if needs_live_model(users.setup, [self._recording])
            else None
        )
        model = scenario_model(self._recording, live, setup=users.setup, model_name=name, meter=self._meter)
        assert model is not None
        self._model = model
        return model

    async def next_message(self, conversation: Sequence[Message]) -> str | None:
        """The next message the user sends after `conversation`, or None when it is done. A failed request raises."""
        agent = Agent(
            self._built(),
            output_type=ToolOutput(_Next, name=NEXT_MESSAGE_TOOL),
            instructions=self._instructions,
            retries=1,
        )
        answer = (await agent.run(f"<conversation>\n{transcript(conversation)}\n</conversation>")).output
        return None if answer.done or not answer.message.strip() else answer.message

    async def aclose(self) -> None:
        """Close the model's connections and count what its requests used and cost in the run's `SimulatedUsers`."""
        try:
            await close_model(self._model)
        finally:
            if self._meter is not None:
                self.users.usage = self.users.usage + Usage.total(self._meter.live)
                self.users.costs.append(self._meter.cost())


def transcript(messages: Sequence[Message]) -> str:
    """The conversation as the user saw it: its own messages and the agent's text answers (tool calls, their results
    and thoughts are the agent's work, which a user does not see)."""
    lines: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserContentPart):
                texts = [item if isinstance(item, str) else f"[{type(item).__name__}]" for item in part.content]
                lines.append(f"user: {' '.join(texts)}")
            elif isinstance(part, TextPart):  # a request's text is the user's prompt
                lines.append(f"{'user' if message.kind == 'request' else 'assistant'}: {part.content}")
    return "\n".join(lines) or "(nothing yet: write the user's first message)"


def _scripted(messages: Sequence[str]) -> FunctionModel:
    """A user that writes `messages` in order, whatever it is shown, then is done."""
    queue = list(messages)

    def answer(_messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        (tool,) = info.output_tools
        arguments: dict[str, Any] = {"done": False, "message": queue.pop(0)} if queue else {"done": True}
        return ModelResponse(parts=[ToolCallPart(tool_name=tool.name, args=arguments)])

    return FunctionModel(answer, model_name="user-script")
