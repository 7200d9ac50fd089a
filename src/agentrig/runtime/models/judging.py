"""The judge of judged checks (`judge:` in a turn's or the scenario's `expect`): a pydantic-ai Agent whose output is
a structured verdict (reason, pass, score 0..1), asked once per judged check after the scenario's turns ran.

The judge's model is a model like the run's: `model: provider:name` is built as `--model` is (`chain.real_model`,
behind the run's limiter and provider options) and metered and priced as the run's requests are (`metering`); a
`script` is pydantic-ai's FunctionModel answering the judge's output tool with the scripted verdict, offline. What
the judge is shown is `judge_prompt`'s. A judge that fails to answer says why (`JudgeAnswer.failure`): a failed
check, never the scenario's error (`suite.judging` asks each judged check's judge and makes the checks)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import Agent, ToolOutput
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentrig.runtime.history.redaction import redact
from agentrig.runtime.history.run_records import Cost
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.models.failures import one_line
from agentrig.runtime.models.judge_prompt import JUDGE_INSTRUCTIONS
from agentrig.runtime.models.limiter import Limiter
from agentrig.runtime.models.metering import ScenarioMeter
from agentrig.runtime.models.provider_options import ProviderOptions
from agentrig.runtime.models.providers import close_model
from agentrig.runtime.models.record_modes import RecordSetup, needs_live_model
from agentrig.runtime.models.recorded_runs import scenario_model
from agentrig.scenarios.model import JudgeExpectation, JudgeVerdict

__all__ = ["VERDICT_TOOL", "JudgeAnswer", "ask_judge", "judge_recording", "with_judges_cost"]

VERDICT_TOOL = "verdict"
"""The judge's output tool: the verdict is its arguments."""


class _Answer(BaseModel):
    """The judge's structured verdict, the reason first so a model reasons before it scores."""

    model_config = ConfigDict(populate_by_name=True)
    reason: str = Field(description="Why, in one or two sentences, citing the material.")
    passed: bool = Field(alias="pass", description="Whether the rubric is met.")
    score: float = Field(ge=0, le=1, description="How well the rubric is met, from 0 (not at all) to 1 (fully).")


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeAnswer:
    """What one judge said (or why it said nothing), and what asking it used and cost."""

    verdict: JudgeVerdict | None = None
    failure: str | None = None
    """Why there is no verdict: the judge's request failed (one redacted line)."""
    usage: Usage = field(default_factory=Usage)
    """A real judge's answered requests (a scripted judge sends none)."""
    cost: Cost | None = None
    """A real judge's requests, priced as the run prices its model; None for a scripted judge."""


async def ask_judge(
    judge: JudgeExpectation,
    prompt: str,
    *,
    prices: Path | None = None,
    options: ProviderOptions | None = None,
    limiter: Limiter | None = None,
    setup: RecordSetup | None = None,
    recording: str = "",
) -> JudgeAnswer:
    """Ask `judge` about `prompt` (`judge_prompt`): its script answers offline, its model through the provider layer
    behind the run's `limiter`, counted and priced by a meter of its own. Under the run's record mode (`setup`) a
    real judge's exchange is recorded in, or replayed from, `recording` (`judge_recording`) as the agent's are."""
    if judge.script is not None:
        return JudgeAnswer(verdict=await _verdict(_scripted(judge.script), prompt))
    assert judge.model is not None  # the scenario format gives a judge a model or a script
    from agentrig.runtime.models.chain import real_model

    meter = ScenarioMeter(judge.model, prices=prices)
    model: Model | None = None
    try:
        # A replay needs no live judge, and so no key: build it only when the mode may reach the provider.
        live = (
            real_model(judge.model, options=options, limiter=limiter) if needs_live_model(setup, [recording]) else None
        )
        model = scenario_model(recording, live, setup=setup, model_name=judge.model, meter=meter)
        assert model is not None
        verdict = await _verdict(model, prompt)
    except Exception as error:  # the judge's failure is this check's, not the scenario's: say why in one line
        failure = f"the judge {judge.model} gave no verdict: {redact(one_line(str(error) or type(error).__name__))}"
        return JudgeAnswer(failure=failure, usage=Usage.total(meter.live), cost=meter.cost())
    finally:
        await close_model(model)
    return JudgeAnswer(verdict=verdict, usage=Usage.total(meter.live), cost=meter.cost())


def judge_recording(scenario: str, check: int) -> str:
    """The recording name of a scenario's `check`-th judged check (0-based, in the order they are asked): `+` is in
    no scenario name, so it cannot be another scenario's recording."""
    return f"{scenario}+judge-{check}"


async def _verdict(model: Model, prompt: str) -> JudgeVerdict:
    agent = Agent(model, output_type=ToolOutput(_Answer, name=VERDICT_TOOL), instructions=JUDGE_INSTRUCTIONS, retries=1)
    answer = (await agent.run(prompt)).output
    return JudgeVerdict.model_validate({"pass": answer.passed, "score": answer.score, "reason": answer.reason})


def _scripted(verdict: JudgeVerdict) -> FunctionModel:
    """A judge that answers its output tool with the scripted verdict, whatever it is shown."""
    arguments: dict[str, Any] = {"reason": verdict.reason, "pass": verdict.passed, "score": verdict.score}

    def answer(_messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        (tool,) = info.output_tools
        return ModelResponse(parts=[ToolCallPart(tool_name=tool.name, args=arguments)])

    return FunctionModel(answer, model_name="judge-script")


def with_judges_cost(cost: Cost, judges: Sequence[Cost]) -> Cost:
    """The scenario's cost with its real judges' added: the run's money includes what grading it cost. A price
    missing on a judge leaves the sum unknown (`usd` None, the note saying whose), never a partial figure."""
    if not judges:
        return cost
    if any(judge.usd is None for judge in judges):
        notes = "; ".join(judge.note for judge in judges if judge.note)
        return Cost(usd=None, spent_usd=None, model=cost.model, priced_by=cost.priced_by, note=f"judge: {notes}")
    scripted = cost.model is None  # the agent ran its script: the judges' requests are all there is to pay
    if cost.usd is None and not scripted:
        return cost  # the agent's model has no price: the sum stays unknown, its note says why
    usd = round((cost.usd or 0.0) + sum(judge.usd or 0.0 for judge in judges), 8)
    spent = round((cost.spent_usd or 0.0) + sum(judge.spent_usd or 0.0 for judge in judges), 8)
    priced_by = cost.priced_by or judges[0].priced_by
    return Cost(usd=usd, spent_usd=spent, model=cost.model, priced_by=priced_by, note=None if scripted else cost.note)
