"""A simulated turn (`simulate:`): the user model writes a message, the agent answers it as an ordinary turn, and
again, for up to `max_turns` turns, until the user model is done, or an answer meets the `stop` condition, or a turn
ends in error or paused for the host. Each turn it runs is an ordinary `TurnRecord` in the history (its prompt is the
message), marked `simulated`, so the run folder holds an ordinary conversation that `agentrig scaffold` scripts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from pydantic_ai.models import override_allow_model_requests

from agentrig.runtime.history.canonical import Message, UserPrompt
from agentrig.runtime.history.redaction import redact
from agentrig.runtime.history.run_records import RunErrorKind, SimulatedTurn, SimulationEnd, TurnRecord
from agentrig.runtime.models.attachments import turn_prompt
from agentrig.runtime.models.failures import classify
from agentrig.runtime.models.simulated_user import UserModel, simulated_users
from agentrig.runtime.models.stops import RunStopped
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["SimulatedUserFailed", "run_simulated_turn"]


class SimulatedUserFailed(RunStopped):
    """The user model wrote no message: its request failed, or it was done before writing any. The conversation
    cannot go on, so the scenario stops with this (its kind is the failure's: a provider error stays one)."""

    def __init__(self, message: str, kind: RunErrorKind) -> None:
        super().__init__(message)
        self.kind = kind


async def run_simulated_turn(
    loaded: LoadedScenario,
    index: int,
    history: Callable[[], Sequence[Message]],
    run_exchange: Callable[[UserPrompt], Awaitable[TurnRecord]],
) -> list[TurnRecord]:
    """Run scenario turn `index`'s simulated conversation: `run_exchange` runs one ordinary turn with a prompt,
    `history` is the session's messages so far (what the user model is shown)."""
    simulate = loaded.scenario.turns[index].simulate
    assert simulate is not None  # called for a simulated turn only
    user = UserModel(simulate, turn=index, scenario=loaded.scenario.name, users=simulated_users())
    opener = turn_prompt(loaded, index)
    records: list[TurnRecord] = []
    ended: SimulationEnd = "max_turns"
    try:
        for exchange in range(1, simulate.max_turns + 1):
            prompt, writer = (opener, "scenario") if exchange == 1 and opener is not None else (None, user.label)
            if prompt is None:
                prompt = await _next_message(user, history(), index)
                if prompt is None:
                    ended = "done"
                    break
            record = await run_exchange(prompt)
            records.append(replace(record, simulated=SimulatedTurn(turn=index, exchange=exchange, user=writer)))
            if record.error is not None or record.interrupted or record.pending_calls:
                ended = "error"  # the conversation cannot go on as a user would: the turn's error is the result
                break
            if simulate.stop is not None and simulate.stop.met_by(record.output):
                ended = "stop"
                break
    finally:
        await user.aclose()
    if not records:
        raise SimulatedUserFailed(
            f"turn {index + 1}: the simulated user ({user.label}) was done before writing a message",
            "unexpected_model_behavior",
        )
    last = records[-1]
    assert last.simulated is not None
    records[-1] = replace(last, simulated=replace(last.simulated, ended=ended))
    return records


async def _next_message(user: UserModel, conversation: Sequence[Message], index: int) -> str | None:
    # A scripted scenario runs with pydantic-ai's model requests refused (only the script answers); a real user
    # model is the scenario's own, so its request is allowed.
    try:
        if user.simulate.model is None:
            return await user.next_message(conversation)
        with override_allow_model_requests(True):
            return await user.next_message(conversation)
    except Exception as error:
        failed = classify(error)
        line = redact(failed.message)
        message = f"turn {index + 1}: the simulated user {user.label} wrote no message: {line}"
        raise SimulatedUserFailed(message, failed.kind) from None
