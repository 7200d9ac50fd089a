"""The model one scenario runs with under a record mode (`record_modes`): a replay, a recording, or both.

`EpisodesModel` is `new_episodes`: it serves the recording while the agent asks what was recorded, and from the
first request the recording does not hold (a changed one, or one past its end) it asks the live model and records
from there, keeping the recorded exchanges before it. The file then holds the old episodes and the new ones.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from agentrig.errors import UsageError
from agentrig.runtime.models.metering import MeteredModel, ScenarioMeter
from agentrig.runtime.models.record_modes import RecordSetup, recording_path
from agentrig.runtime.models.record_replay import RecordingModel, ReplayModel, canonical_request, replay_model

__all__ = ["EpisodesModel", "scenario_model"]


class EpisodesModel(WrapperModel):
    """Replays while the requests match the recording, then records the live model's answers after them."""

    def __init__(self, replay: ReplayModel, recorder: RecordingModel) -> None:
        super().__init__(recorder)
        self.replay = replay
        self.recorder = recorder
        self.live = False
        """True from the first request the recording did not hold."""

    async def aclose(self) -> None:
        await self.recorder.aclose()

    def _replays(self, actual: dict[str, Any]) -> bool:
        if not self.live and self.replay.matches_next(actual):
            return True
        if not self.live:  # a new episode: the recording keeps what matched, the rest comes from the live model
            self.live = True
            self.recorder.exchanges = list(self.replay.exchanges[: self.replay.served])
        return False

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        if self._replays(canonical_request(messages, model_settings, model_request_parameters)):
            return await self.replay.request(messages, model_settings, model_request_parameters)
        return await self.recorder.request(messages, model_settings, model_request_parameters)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse, None]:
        source: Model = self.recorder
        if self._replays(canonical_request(messages, model_settings, model_request_parameters)):
            source = self.replay
        async with source.request_stream(messages, model_settings, model_request_parameters, run_context) as stream:
            yield stream


def scenario_model(
    scenario: str,
    model: Model | None,
    *,
    setup: RecordSetup | None,
    model_name: str | None = None,
    meter: ScenarioMeter | None = None,
) -> Model | None:
    """The model `scenario` runs with: `model` (counted by `meter`), or per `setup`'s mode a replay of its
    recording, a recording of `model`'s answers, or `new_episodes`' mix of both.

    A mode that must reach the provider for this scenario without a live `model` is a `UsageError`; `none`
    without a recording is a `HistoryFormatError` naming the missing file (that scenario's error)."""
    live = MeteredModel(model, meter) if model is not None and meter is not None else model
    if setup is None:
        return live
    path = recording_path(setup.directory, scenario)
    exists = path.is_file()
    if setup.mode == "none" or (setup.mode == "once" and exists):
        replay = replay_model(path, meter=meter)
        if model_name is not None and replay.model_label != model_name:  # the runner checks first; the plugin here
            raise UsageError(f"{path}: recorded with {replay.model_label}, but this run's --model is {model_name}")
        if meter is not None and meter.model is None:  # `--replay DIR` alone: priced as the model it recorded
            meter.model = replay.model_label
        return replay
    if live is None:
        raise UsageError(f"--record-mode {setup.mode}: recording {scenario} needs --model, the live model")
    recorder = RecordingModel(live, path, scenario=scenario, model_label=model_name)
    if setup.mode == "new_episodes" and exists:
        replay = replay_model(path, meter=meter)
        if model_name is not None and replay.model_label != model_name:
            raise UsageError(f"{path}: recorded with {replay.model_label}, but this run's --model is {model_name}")
        return EpisodesModel(replay, recorder)
    return recorder
