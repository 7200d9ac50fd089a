"""Record a real model's answers once, replay them offline, and notice when the agent has changed.

`--record DIR` wraps the real model in a `RecordingModel`: after every successful model request it
saves, in `DIR/<scenario>.json` (format `agentrig.recording/1`, rewritten atomically after each
request so an interrupted run keeps what it had), the canonical input the model received (messages,
instructions, tool names and schemas, the model settings that change an answer) and the canonical
response with its usage.

`--replay DIR` serves those responses from a `ReplayModel`, a `FunctionModel` that needs no network.
Before answering request N it compares what the agent sends now with what was recorded for request N;
any difference raises `ReplayMismatch` (run error kind `replay_mismatch`) carrying a unified diff,
instead of serving a stale answer. Volatile fields (timestamps, run ids) are not part of the canonical
form, so they never cause a mismatch. A recording made on one pydantic-ai version replays on another.

Secrets are redacted before anything is written, and the live request is redacted the same way
before it is compared.
"""

from __future__ import annotations

import difflib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from agentrig.errors import HistoryFormatError, UsageError
from agentrig.runtime.history import jsonio
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.redaction import redact_json
from agentrig.runtime.history.run_records import RunErrorKind
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.wire import history_from_json, message_to_json
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.models.conversion import response_usage, to_canonical, to_pydantic_ai
from agentrig.runtime.models.scripted_stream import StreamItem, response_deltas, with_fixed_usage
from agentrig.runtime.models.stops import RunStopped

__all__ = [
    "RECORDING_FORMAT",
    "RecordingModel",
    "ReplayMismatch",
    "ReplayModel",
    "recording_path",
    "replay_model",
    "scenario_model",
    "wrap_for_recording",
]

RECORDING_FORMAT = "agentrig.recording/1"
"""The format tag of recording files."""

# Model settings that change what a model answers; the rest (timeouts, headers) do not belong in a comparison.
_SETTINGS_THAT_MATTER = (
    "max_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop_sequences",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "parallel_tool_calls",
)
_DIFF_SUMMARY_LIMIT = 400


class ReplayMismatch(RunStopped):
    """The agent's request differs from the recorded one (or goes past the end of the recording)."""

    kind: RunErrorKind = "replay_mismatch"

    def __init__(self, message: str, *, diff: str = "") -> None:
        super().__init__(message)
        self.diff = diff
        """The unified diff, recorded (`-`) against now (`+`); empty when the recording ran out."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Exchange:
    """One recorded model request and the answer to it."""

    request: Mapping[str, Any]
    """The canonical request as JSON: messages, instructions, tools, settings."""
    response: Message
    """The model's answer, canonical."""
    usage: Usage
    """The usage the provider reported for this request."""


def recording_path(directory: str | Path, scenario: str) -> Path:
    """Where the recording of `scenario` lives in `directory`."""
    return Path(directory) / f"{scenario}.json"


def canonical_request(
    messages: Sequence[ModelMessage],
    model_settings: ModelSettings | None,
    parameters: ModelRequestParameters,
) -> dict[str, Any]:
    """What a model request means, as redacted JSON: the part of it a recording pins down."""
    instructions = next(
        (getattr(m, "instructions", None) for m in reversed(messages) if isinstance(m, ModelRequest)), None
    )
    tools = [
        {"name": tool.name, "parameters": tool.parameters_json_schema}
        for tool in (*parameters.function_tools, *parameters.output_tools)
    ]
    settings = {key: (model_settings or {}).get(key) for key in _SETTINGS_THAT_MATTER if key in (model_settings or {})}
    document = {
        "messages": [_without_run_id(message) for message in to_canonical(messages)],
        "instructions": instructions,
        "tools": tools,
        "settings": settings,
    }
    return cast(dict[str, Any], redact_json(document))


def _without_run_id(message: Message) -> dict[str, Any]:
    data = message_to_json(message)
    data.pop("run_id", None)
    return data


class RecordingModel(WrapperModel):
    """Passes requests to the real model and writes each answered one to the recording file."""

    def __init__(self, wrapped: Model, path: str | Path, *, scenario: str, model_label: str | None = None) -> None:
        super().__init__(wrapped)
        self.path = Path(path)
        self.scenario = scenario
        self.model_label = model_label or f"{wrapped.system}:{wrapped.model_name}"
        self.exchanges: list[Exchange] = []

    async def aclose(self) -> None:
        """Close the wrapped model's connections, when it owns any (`providers.RetryingModel.aclose`)."""
        close = getattr(self.wrapped, "aclose", None)
        if close is not None:
            await close()

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        request = canonical_request(messages, model_settings, model_request_parameters)
        response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        self._record(request, response)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse, None]:
        request = canonical_request(messages, model_settings, model_request_parameters)
        async with self.wrapped.request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as stream:
            yield stream
        self._record(request, stream.get())

    def _record(self, request: Mapping[str, Any], response: ModelResponse) -> None:
        (canonical,) = to_canonical([response])
        self.exchanges.append(
            Exchange(
                request=request,
                response=Message(kind="response", parts=canonical.parts),
                usage=response_usage(response),
            )
        )
        jsonio.write_atomic(self.path, jsonio.dumps(self._document(), pretty=True))

    def _document(self) -> dict[str, Any]:
        document = {
            "format": RECORDING_FORMAT,
            "scenario": self.scenario,
            "model": self.model_label,
            "recorded_with": {"pydantic_ai": pydantic_ai_compat.PYDANTIC_AI_VERSION_TEXT},
            "exchanges": [
                {
                    "request": exchange.request,
                    "response": {
                        "parts": message_to_json(exchange.response)["parts"],
                        "usage": exchange.usage.to_json(),
                    },
                }
                for exchange in self.exchanges
            ],
        }
        return cast(dict[str, Any], redact_json(document))


def wrap_for_recording(
    model: Model, path: str | Path, *, scenario: str, model_label: str | None = None
) -> RecordingModel:
    """`model`, recording every answered request to `path` (a `recording_path`)."""
    return RecordingModel(model, path, scenario=scenario, model_label=model_label)


class ReplayModel(FunctionModel):
    """Serves a recording's responses in order, offline, after checking each request against the recorded one."""

    reports_exact_usage = True
    """Every response carries the recorded usage (the orchestrator then does not flag usage as estimated)."""

    def __init__(self, exchanges: Sequence[Exchange], *, path: Path, model_label: str = "replay") -> None:
        super().__init__(self._answer, stream_function=self._stream, model_name=f"replay:{model_label}")
        self.path = path
        self.exchanges = tuple(exchanges)
        self.served = 0
        """How many recorded responses have been served."""
        self._streamed_usage = RequestUsage()

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        self._check(canonical_request(messages, model_settings, model_request_parameters))
        return await super().request(messages, model_settings, model_request_parameters)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse, None]:
        """A recorded response served as a stream (`agentrig run --replay --stream`), with its recorded usage."""
        self._check(canonical_request(messages, model_settings, model_request_parameters))
        async with super().request_stream(messages, model_settings, model_request_parameters, run_context) as stream:
            yield with_fixed_usage(stream, self._streamed_usage)

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[StreamItem]:
        response = self._answer(messages, info)
        self._streamed_usage = response.usage
        for item in response_deltas(response.parts):
            yield item

    def _check(self, actual: Mapping[str, Any]) -> None:
        number = self.served + 1
        if self.served >= len(self.exchanges):
            raise ReplayMismatch(
                f"{self.path}: the run made model request {number}, the recording has only {len(self.exchanges)}"
                " (re-record with --record)"
            )
        recorded = self.exchanges[self.served].request
        if recorded == actual:
            return
        diff = "".join(
            difflib.unified_diff(
                _lines(recorded), _lines(actual), fromfile=f"recorded request {number}", tofile=f"request {number} now"
            )
        )
        changed = " ".join(
            line.strip() for line in diff.splitlines()[2:] if line[:1] in "+-" and line.strip() not in "+-"
        )
        if len(changed) > _DIFF_SUMMARY_LIMIT:
            changed = changed[: _DIFF_SUMMARY_LIMIT - 3] + "..."
        raise ReplayMismatch(
            f"{self.path}: model request {number} differs from the recording (re-record with --record): {changed}",
            diff=diff,
        )

    def _answer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        exchange = self.exchanges[self.served]
        self.served += 1
        (response,) = to_pydantic_ai([exchange.response], source=self.path)
        response = cast(ModelResponse, response)
        # Explicit usage: FunctionModel would otherwise estimate it, differently per pydantic-ai version.
        response.usage = RequestUsage(
            input_tokens=exchange.usage.input_tokens,
            output_tokens=exchange.usage.output_tokens,
            cache_read_tokens=exchange.usage.cache_read_tokens,
            cache_write_tokens=exchange.usage.cache_write_tokens,
        )
        return response


def _lines(document: Mapping[str, Any]) -> list[str]:
    return jsonio.dumps(document, pretty=True).decode().splitlines(keepends=True)


def replay_model(path: str | Path) -> ReplayModel:
    """A model answering from the recording at `path`; a missing or malformed file is a `HistoryFormatError`."""
    source = Path(path)
    data = jsonio.read_json_file(source)
    if not isinstance(data, dict) or data.get("format") != RECORDING_FORMAT:
        raise HistoryFormatError(f"not a recording (expected format {RECORDING_FORMAT!r})", path=source, field="format")
    document = cast(dict[str, Any], data)
    raw_exchanges = document.get("exchanges")
    if not isinstance(raw_exchanges, list):
        raise HistoryFormatError("expected a list", path=source, field="exchanges")
    exchanges: list[Exchange] = []
    for index, raw in enumerate(cast(list[Any], raw_exchanges)):
        where = f"exchanges[{index}]"
        if (
            not isinstance(raw, dict)
            or not isinstance(raw.get("request"), dict)
            or not isinstance(raw.get("response"), dict)
        ):
            raise HistoryFormatError("expected an object with request and response objects", path=source, field=where)
        entry = cast(dict[str, Any], raw)
        response_data = cast(dict[str, Any], entry["response"])
        (response,) = history_from_json([{"kind": "response", "parts": response_data.get("parts", [])}], source=source)
        usage = Usage.from_json(response_data.get("usage") or {}, where=f"{where}.response.usage")
        exchanges.append(Exchange(request=cast(dict[str, Any], entry["request"]), response=response, usage=usage))
    return ReplayModel(exchanges, path=source, model_label=str(document.get("model") or "recording"))


def scenario_model(
    scenario: str,
    model: Model | None,
    *,
    record_dir: str | Path | None = None,
    replay_dir: str | Path | None = None,
) -> Model | None:
    """The model one scenario runs with under `--record DIR` / `--replay DIR` (`model` unchanged without them).

    `--replay` needs no model (the recording answers); `--record` needs the real one. A scenario without a
    recording raises `ReplayMismatch` naming the missing file (the scenario fails, `replay_mismatch`).
    """
    if record_dir is not None and replay_dir is not None:
        raise UsageError("--record and --replay cannot be used together")
    if replay_dir is not None:
        recording = recording_path(replay_dir, scenario)
        if not recording.exists():  # nothing recorded: the scenario does not replay (failed), not the agent's error
            raise ReplayMismatch(f"no recording of scenario '{scenario}': {recording} does not exist (a recording run"
                                 " writes it)")  # fmt: skip
        return replay_model(recording)
    if record_dir is not None:
        if model is None:
            raise UsageError("--record needs --model: the real model whose answers are recorded")
        return wrap_for_recording(model, recording_path(record_dir, scenario), scenario=scenario)
    return model
