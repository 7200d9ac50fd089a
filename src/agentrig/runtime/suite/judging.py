"""A scenario's judged checks, asked after its turns ran: each turn's `judge:` on its output or on the conversation
up to it, then the scenario's on the last output or the whole history (`models.judging` asks each judge,
`checks.judge_checks` makes each verdict a check). The judges' usage and cost are summed for the scenario's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentrig.runtime.checks.history_checks import turn_label
from agentrig.runtime.checks.judge_checks import JudgeRecord, judge_name, judges_of
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.run_records import Cost, TurnRecord
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models.judge_prompt import judge_prompt
from agentrig.runtime.models.judging import ask_judge, judge_recording
from agentrig.runtime.models.limiter import Limiter
from agentrig.runtime.models.provider_options import ProviderOptions
from agentrig.runtime.models.record_modes import RecordSetup
from agentrig.scenarios.model import JudgeExpectation, Scenario, TurnExpectations

__all__ = ["JudgedRun", "judge_run"]


@dataclass(slots=True, kw_only=True)
class JudgedRun:
    """Every judged check of one scenario run, and what the judges' requests used and cost."""

    records: list[JudgeRecord] = field(default_factory=list[JudgeRecord])
    usage: Usage = field(default_factory=Usage)
    """The real judges' requests (a scripted judge sends none)."""
    costs: list[Cost] = field(default_factory=list[Cost])
    """One per real judge asked, priced as the run prices its model."""


async def judge_run(
    scenario: Scenario,
    turns: Sequence[TurnRecord],
    history: Sequence[Message],
    *,
    prices: Path | None = None,
    options: ProviderOptions | None = None,
    limiter: Limiter | None = None,
    setup: RecordSetup | None = None,
    recording: str = "",
) -> JudgedRun:
    """Ask each judged check's judge, one at a time, turn by turn, then the scenario's; under the run's record mode
    (`setup`) each real judge's exchange is recorded or replayed as `recording+judge-N`."""
    asked: list[tuple[str, JudgeExpectation, str | None, tuple[Message, ...]]] = []
    so_far: list[Message] = []
    for turn in turns:
        so_far.extend(turn.new_messages)
        expect = scenario.turns[turn.index].expect if turn.index < len(scenario.turns) else TurnExpectations()
        judges = judges_of(expect)
        for position, judge in enumerate(judges):
            asked.append((judge_name(turn_label(turn), position, len(judges)), judge, turn.output, tuple(so_far)))
    judges = judges_of(scenario.expect)
    last_output = turns[-1].output if turns else None
    for position, judge in enumerate(judges):
        asked.append((judge_name("scenario", position, len(judges)), judge, last_output, tuple(history)))
    judged = JudgedRun()
    for number, (name, judge, output, conversation) in enumerate(asked):
        model = judge.model or "script"
        if judge.of == "output" and output is None:
            failure = "the turn produced no output: nothing to judge"
            judged.records.append(JudgeRecord(name=name, expect=judge, failure=failure, model=model))
            continue
        prompt = judge_prompt(judge, output=output, conversation=conversation)
        answer = await ask_judge(
            judge,
            prompt,
            prices=prices,
            options=options,
            limiter=limiter,
            setup=setup,
            recording=judge_recording(recording or scenario.name, number),
        )
        judged.usage = judged.usage + answer.usage
        if answer.cost is not None:
            judged.costs.append(answer.cost)
        cost_usd = answer.cost.usd if answer.cost is not None else None
        judged.records.append(
            JudgeRecord(
                name=name, expect=judge, verdict=answer.verdict, failure=answer.failure, model=model, cost_usd=cost_usd
            )
        )
    return judged
