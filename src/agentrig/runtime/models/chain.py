"""The model wrapper chain: the one place that says which wrappers a model request passes, and builds them.

Every model request an agent run makes goes through these layers, outermost first. Each layer is a
pydantic-ai `Model` with one job; wrappers derive from `WrapperModel` and override only what they change.

    pydantic-ai Agent run
      └─ RequestModel           fallback tool-call parsing; a compaction's summarized input   request_model.py
          ├─ ScriptedModel       a scripted run: answers from the scenario's YAML steps         scripted.py
          ├─ ReplayModel         --record-mode none/once: answers from a recording; a changed request fails
          │                                                                                     record_replay.py
          ├─ EpisodesModel       --record-mode new_episodes: the replay, then the recording      recorded_runs.py
          └─ RecordingModel      --record-mode once/new_episodes/all: saves each answer (or error) record_replay.py
              └─ MeteredModel    counts and prices each answered request (the scenario's meter) metering.py
                  └─ RetryingModel the run-wide limiter, the request timeout, retries, attempts   retrying.py
                      └─ provider pydantic-ai's OpenAI / Anthropic / ... model and its SDK client

`RecordingModel` appears only when a scenario records (`record_modes` says when); without recordings a real run is
`RequestModel -> MeteredModel -> RetryingModel -> provider`. Errors leave the chain through one table
(`failures.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.errors import UsageError

if TYPE_CHECKING:  # pydantic-ai is imported only when a chain is built: the suite runner imports this module,
    # and `agentrig run --engine tinyagent` must work where pydantic-ai is not installed.
    from pydantic_ai.models import Model

    from agentrig.runtime.models.limiter import Limiter
    from agentrig.runtime.models.metering import ScenarioMeter
    from agentrig.runtime.models.provider_options import ProviderOptions
    from agentrig.runtime.models.record_modes import RecordSetup
    from agentrig.runtime.models.request_model import InputPrefix

__all__ = ["for_request", "for_scenario", "real_model", "scenario_meter"]


def real_model(
    name: str | None,
    *,
    base_url: str | None = None,
    options: ProviderOptions | None = None,
    limiter: Limiter | None = None,
) -> Model | None:
    """The provider model for `provider:name` behind the run's `limiter` and `options` (None for a scripted run)."""
    if name is None:
        return None
    try:
        from agentrig.runtime.models.providers import build_model  # needs the provider SDKs ([providers] extra)
    except ImportError as error:
        raise UsageError(f"--model {name}: real providers are not available ({error})") from None
    return build_model(name, base_url=base_url, options=options, limiter=limiter)


def for_scenario(
    scenario: str,
    model: Model | None,
    *,
    setup: RecordSetup | None = None,
    model_name: str | None = None,
    meter: ScenarioMeter | None = None,
) -> Model | None:
    """The model one scenario runs with: `model` (counted by `meter`), or a recording around it, or a replay of
    one, or both (`setup`'s record mode: `record_modes`, `recorded_runs`)."""
    if setup is None and (meter is None or model is None):
        return model
    from agentrig.runtime.models.recorded_runs import scenario_model

    return scenario_model(scenario, model, setup=setup, model_name=model_name, meter=meter)


def scenario_meter(
    model_name: str | None, *, prices: Path | None = None, budget: Limiter | None = None
) -> ScenarioMeter:
    """A meter counting and pricing one scenario's requests (`metering`), admitting each through `budget`'s
    `--max-cost` gate when given."""
    from agentrig.runtime.models.metering import ScenarioMeter

    return ScenarioMeter(model_name, prices=prices, budget=budget)


def for_request(base: Model, *, input_prefix: InputPrefix | None = None) -> Model:
    """The outermost layer, around whatever model one agent run uses."""
    from agentrig.runtime.models.request_model import RequestModel

    return RequestModel(base, input_prefix=input_prefix)
