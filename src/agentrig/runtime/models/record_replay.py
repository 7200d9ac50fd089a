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

A provider error that survives the retries is recorded too (`"error"` instead of `"response"`), and replayed as
the same error (kind, status, message). A response the provider ended early (`incomplete_response`) keeps what had
arrived (`error.partial`: its parts and usage): a streamed replay streams it before it raises the error, so the
replay is cut where the recording was. `--record-mode` (`record_modes`) picks, per scenario, a replay, a
recording, or both (`new_episodes`: `EpisodesModel` replays while the requests match, then goes live and appends).

Secrets are redacted before anything is written, and the live request is redacted the same way
before it is compared.
"""

from __future__ import annotations

import difflib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.per_run import message_json_without_per_run_values
from agentrig.runtime.history.recordings import RECORDING_FORMAT, recording_exchanges
from agentrig.runtime.history.redaction import redact_json
from agentrig.runtime.history.run_records import PROVIDER_ERROR_KINDS, RunErrorKind
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.history.user_content import elide_base64_data
from agentrig.runtime.history.wire import history_from_json, message_to_json
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.models.conversion import response_usage, to_canonical, to_pydantic_ai
from agentrig.runtime.models.metering import ScenarioMeter
from agentrig.runtime.models.providers import ProviderContextLengthError, ProviderRequestError, close_model
from agentrig.runtime.models.record_modes import recording_path
from agentrig.runtime.models.retrying import IncompleteResponseError
from agentrig.runtime.models.scripted_stream import StreamItem, response_deltas, with_fixed_usage
from agentrig.runtime.models.stops import RunStopped
from agentrig.runtime.runfolder import jsonio

__all__ = [
    "RECORDING_FORMAT",
    "Exchange",
    "RecordedError",
    "RecordingModel",
    "ReplayMismatch",
    "ReplayModel",
    "recording_path",
    "replay_model",
    "wrap_for_recording",
]

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
class RecordedError:
    """A provider failure that survived the retries, as recorded: replayed as the same `ProviderRequestError`."""

    kind: RunErrorKind
    """rate_limit, auth, server_error, context_length, request_rejected or connection."""
    message: str
    """The one-line message, redacted."""
    provider: str
    status_code: int | None
    attempts: int
    partial: Message | None = None
    """An `incomplete_response`'s response as far as it arrived (None for other failures)."""
    partial_usage: Usage = field(default_factory=Usage)
    """The usage the provider reported for `partial`."""

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "kind": self.kind,
            "message": self.message,
            "provider": self.provider,
            "status_code": self.status_code,
            "attempts": self.attempts,
        }
        if self.partial is not None:
            parts = message_to_json(self.partial)["parts"]
            document["partial"] = {"parts": parts, "usage": self.partial_usage.to_json()}
        return document

    @staticmethod
    def of(error: ProviderRequestError) -> RecordedError:
        partial, usage = None, Usage()
        if isinstance(error, IncompleteResponseError):
            (canonical,) = to_canonical([error.partial])
            partial, usage = Message(kind="response", parts=canonical.parts), response_usage(error.partial)
        return RecordedError(
            kind=error.kind,
            message=error.message,
            provider=error.provider,
            status_code=error.status_code,
            attempts=error.attempts,
            partial=partial,
            partial_usage=usage,
        )

    def raised(self, *, source: Path | None = None) -> ProviderRequestError:
        """The error to raise again on replay (a context-length one still triggers a scenario's compaction; an
        incomplete response carries what had arrived)."""
        if self.kind == "incomplete_response":
            (arrived,) = to_pydantic_ai([self.partial or Message(kind="response", parts=())], source=source)
            arrived = cast(ModelResponse, arrived)
            arrived.usage = _request_usage(self.partial_usage)
            return IncompleteResponseError(
                self.message, provider=self.provider, partial=arrived, attempts=self.attempts
            )
        cls = ProviderContextLengthError if self.kind == "context_length" else ProviderRequestError
        return cls(
            self.message,
            kind=self.kind,
            provider=self.provider,
            status_code=self.status_code,
            attempts=self.attempts,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Exchange:
    """One recorded model request and the answer to it: a response, or the provider's error."""

    request: Mapping[str, Any]
    """The canonical request as JSON: messages, instructions, tools, settings."""
    response: Message | None
    """The model's answer, canonical; None when the provider failed (`error`)."""
    usage: Usage
    """The usage the provider reported for this request (nothing for an error)."""
    error: RecordedError | None = None
    """The provider's failure, when the request got no answer."""

    def to_json(self) -> dict[str, Any]:
        if self.error is not None:
            return {"request": self.request, "error": self.error.to_json()}
        assert self.response is not None
        response = {"parts": message_to_json(self.response)["parts"], "usage": self.usage.to_json()}
        return {"request": self.request, "response": response}


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
    # A recording is matched by what was said: the ids drawn per run (history/per_run.py) are left out.
    return message_json_without_per_run_values(message_to_json(message))


class RecordingModel(WrapperModel):
    """Passes requests to the real model and writes each answered one to the recording file."""

    def __init__(
        self,
        wrapped: Model,
        path: str | Path,
        *,
        scenario: str,
        model_label: str | None = None,
        kept: Sequence[Exchange] = (),
    ) -> None:
        super().__init__(wrapped)
        self.path = Path(path)
        self.scenario = scenario
        self.model_label = model_label or f"{wrapped.system}:{wrapped.model_name}"
        self.exchanges: list[Exchange] = list(kept)
        """What the file holds: the exchanges kept from an earlier recording (`new_episodes`), then this run's."""

    async def aclose(self) -> None:
        """Close the wrapped model's connections, when it owns any (`providers.RetryingModel.aclose`)."""
        await close_model(self.wrapped)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        request = canonical_request(messages, model_settings, model_request_parameters)
        try:
            response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        except ProviderRequestError as error:
            self._record_error(request, error)
            raise
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
        try:
            async with self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream:
                yield stream
        except ProviderRequestError as error:  # refused before the stream, or cut off in it
            self._record_error(request, error)
            raise
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
        self._write()

    def _record_error(self, request: Mapping[str, Any], error: ProviderRequestError) -> None:
        self.exchanges.append(Exchange(request=request, response=None, usage=Usage(), error=RecordedError.of(error)))
        self._write()

    def _write(self) -> None:
        jsonio.write_atomic(self.path, jsonio.dumps(self._document(), pretty=True))

    def _document(self) -> dict[str, Any]:
        document = {
            "format": RECORDING_FORMAT,
            "scenario": self.scenario,
            "model": self.model_label,
            "recorded_with": {"pydantic_ai": pydantic_ai_compat.PYDANTIC_AI_VERSION_TEXT},
            "exchanges": [exchange.to_json() for exchange in self.exchanges],
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

    def __init__(
        self,
        exchanges: Sequence[Exchange],
        *,
        path: Path,
        model_label: str = "replay",
        meter: ScenarioMeter | None = None,
    ) -> None:
        super().__init__(self._answer, stream_function=self._stream, model_name=f"replay:{model_label}")
        self.path = path
        self.exchanges = tuple(exchanges)
        self.model_label = model_label
        """The `provider:name` the recording names."""
        self.meter = meter
        """Counts each served response's recorded usage (`ScenarioMeter.replayed`), when given."""
        self.served = 0
        """How many recorded exchanges have been served (responses and errors)."""
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
        self._check(canonical_request(messages, model_settings, model_request_parameters), streamed=True)
        async with super().request_stream(messages, model_settings, model_request_parameters, run_context) as stream:
            yield with_fixed_usage(stream, self._streamed_usage)

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[StreamItem]:
        cut = self._cut_here()
        response = self._answer(messages, info) if cut is None else cut.partial
        self._streamed_usage = response.usage
        for item in response_deltas(response.parts):
            yield item
        if cut is not None:  # recorded cut: what had arrived, then the stream ends before its last event
            raise cut

    def _cut_here(self) -> IncompleteResponseError | None:
        """The next exchange's error when it is a recorded response the provider ended early (served, and metered:
        the provider billed what it sent), else None."""
        error = self.exchanges[self.served].error
        if error is None or error.partial is None:
            return None
        self.served += 1
        if self.meter is not None:
            self.meter.replayed.append(error.partial_usage)
        cut = error.raised(source=self.path)
        assert isinstance(cut, IncompleteResponseError)
        return cut

    def matches_next(self, actual: Mapping[str, Any]) -> bool:
        """Whether the recording holds a next exchange and its request is `actual` (`EpisodesModel` asks)."""
        return self.served < len(self.exchanges) and self.exchanges[self.served].request == actual

    def _check(self, actual: Mapping[str, Any], *, streamed: bool = False) -> None:
        number = self.served + 1
        if self.served >= len(self.exchanges):
            raise ReplayMismatch(
                f"{self.path}: the run made model request {number}, the recording has only {len(self.exchanges)}"
                " (re-record with --record-mode new_episodes or all)"
            )
        exchange = self.exchanges[self.served]
        if exchange.request != actual:
            raise _mismatch(self.path, number, exchange.request, actual)
        if exchange.error is not None and not (streamed and exchange.error.partial is not None):
            # The provider failed here when it was recorded: fail the same way (a streamed replay of a response
            # cut short streams what had arrived first, `_stream`).
            self.served += 1
            raise exchange.error.raised(source=self.path)

    def _answer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        exchange = self.exchanges[self.served]
        self.served += 1
        assert exchange.response is not None  # `_check` raised the recorded error of an exchange without one
        (response,) = to_pydantic_ai([exchange.response], source=self.path)
        response = cast(ModelResponse, response)
        # Explicit usage: FunctionModel would otherwise estimate it, differently per pydantic-ai version.
        response.usage = _request_usage(exchange.usage)
        if self.meter is not None:
            self.meter.replayed.append(exchange.usage)
        return response


def _request_usage(usage: Usage) -> RequestUsage:
    names = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    return RequestUsage(**{name: getattr(usage, name) for name in names})


def _mismatch(path: Path, number: int, recorded: Mapping[str, Any], actual: Mapping[str, Any]) -> ReplayMismatch:
    diff = "".join(
        difflib.unified_diff(
            _lines(recorded), _lines(actual), fromfile=f"recorded request {number}", tofile=f"request {number} now"
        )
    )
    changed = " ".join(line.strip() for line in diff.splitlines()[2:] if line[:1] in "+-" and line.strip() not in "+-")
    if len(changed) > _DIFF_SUMMARY_LIMIT:
        changed = changed[: _DIFF_SUMMARY_LIMIT - 3] + "..."
    return ReplayMismatch(
        f"{path}: model request {number} differs from the recording (re-record with --record-mode new_episodes or"
        f" all): {changed}",
        diff=diff,
    )


def _lines(document: Mapping[str, Any]) -> list[str]:
    """A request as the lines of its diff; an attachment's base64 as its size and hash (one line, still compared)."""
    return elide_base64_data(jsonio.dumps(document, pretty=True).decode()).splitlines(keepends=True)


def read_exchanges(path: Path) -> tuple[str, list[Exchange]]:
    """(the model the recording names, its exchanges); a malformed file is a `HistoryFormatError`. A missing one is a
    `ReplayMismatch`: the scenario does not replay (failed, `replay_mismatch`), which is no error of the agent's."""
    if not path.exists():
        raise ReplayMismatch(
            f"no recording of this scenario: {path} does not exist (record it with --record-mode once or new_episodes)"
        )
    data = jsonio.read_json_file(path)
    exchanges: list[Exchange] = []
    for index, entry in enumerate(recording_exchanges(data, source=path)):
        where = f"exchanges[{index}]"
        request = cast(dict[str, Any], entry["request"])
        error_data = entry.get("error")
        if isinstance(error_data, dict):
            error = _recorded_error(cast(dict[str, Any], error_data), path=path, where=f"{where}.error")
            exchanges.append(Exchange(request=request, response=None, usage=Usage(), error=error))
            continue
        response_data = cast(dict[str, Any], entry["response"])
        (response,) = history_from_json([{"kind": "response", "parts": response_data.get("parts", [])}], source=path)
        usage = Usage.from_json(response_data.get("usage") or {}, where=f"{where}.response.usage")
        exchanges.append(Exchange(request=request, response=response, usage=usage))
    return str(cast(dict[str, Any], data).get("model") or "recording"), exchanges


def _recorded_error(data: dict[str, Any], *, path: Path, where: str) -> RecordedError:
    kind, message, provider = data.get("kind"), data.get("message"), data.get("provider")
    status, attempts = data.get("status_code"), data.get("attempts", 1)
    if kind not in PROVIDER_ERROR_KINDS:
        known = ", ".join(sorted(PROVIDER_ERROR_KINDS))
        raise HistoryFormatError(f"expected one of {known}", path=path, field=f"{where}.kind")
    if not isinstance(message, str) or not isinstance(provider, str):
        raise HistoryFormatError("expected a message and a provider (strings)", path=path, field=where)
    bad_status = status is not None and (not isinstance(status, int) or isinstance(status, bool))
    if bad_status or not isinstance(attempts, int):
        raise HistoryFormatError("expected an integer status_code (or null) and attempts", path=path, field=where)
    partial, usage = None, Usage()
    partial_data = data.get("partial")
    if partial_data is not None:
        if not isinstance(partial_data, dict) or kind != "incomplete_response":
            raise HistoryFormatError(
                "expected an object (the response as far as it arrived), and only for kind incomplete_response",
                path=path,
                field=f"{where}.partial",
            )
        recorded = cast(dict[str, Any], partial_data)
        (partial,) = history_from_json([{"kind": "response", "parts": recorded.get("parts", [])}], source=path)
        usage = Usage.from_json(recorded.get("usage") or {}, where=f"{where}.partial.usage")
    return RecordedError(
        kind=cast(RunErrorKind, kind),
        message=message,
        provider=provider,
        status_code=status,
        attempts=attempts,
        partial=partial,
        partial_usage=usage,
    )


def replay_model(path: str | Path, *, meter: ScenarioMeter | None = None) -> ReplayModel:
    """A model answering from the recording at `path`; a missing or malformed file is a `HistoryFormatError`."""
    source = Path(path)
    model_label, exchanges = read_exchanges(source)
    return ReplayModel(exchanges, path=source, model_label=model_label, meter=meter)
