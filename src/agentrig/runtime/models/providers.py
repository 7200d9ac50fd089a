"""Real models: build one from `provider:name`, retry it at the model boundary, translate its errors.

- `build_model("openai:gpt-4o")` gives any model pydantic-ai knows (`pydantic_ai.models.infer_model`);
  with `base_url` it talks to an OpenAI-compatible server (vLLM, Ollama, a gateway) or an
  Anthropic-compatible one. The default model comes from `AGENTRIG_MODEL`.
- Every model is wrapped in a `RetryingModel`: rate limits (429), server errors (5xx) and connection
  failures are retried with exponential backoff and jitter, honouring `Retry-After`, a bounded
  number of times. The OpenAI and Anthropic SDK clients are built with `max_retries=0`, so this
  policy is the only one (an SDK retrying underneath would multiply the attempts and hide them).
- The failure that survives the retries is raised as a `ProviderRequestError` whose one-line message
  names the provider and the HTTP status (`openai: HTTP 401 Unauthorized: invalid api key`) and never
  a key; a context-window failure is also a `ContextOverflowError`.
- `run_many` runs network-bound coroutines concurrently in one event loop, `concurrency` at a time.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import time
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError, UserError
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse, infer_model
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.providers import Provider, infer_provider
from pydantic_ai.settings import ModelSettings

from agentrig.errors import ContextOverflowError, ProviderError, UsageError
from agentrig.runtime.history.redaction import redact, register_secret
from agentrig.runtime.history.run_records import RunErrorKind
from agentrig.runtime.models.failures import describe_provider_failure, one_line, provider_kind
from agentrig.runtime.models.stops import RunStopped

__all__ = [
    "DEFAULT_RETRY_POLICY",
    "MODEL_ENV_VAR",
    "ProviderContextLengthError",
    "ProviderRequestError",
    "RetryPolicy",
    "RetryingModel",
    "build_model",
    "close_model",
    "resolve_model_name",
    "run_many",
]

MODEL_ENV_VAR = "AGENTRIG_MODEL"
"""The environment variable holding the default `provider:name` model."""

# Placeholder key for local OpenAI/Anthropic-compatible servers that need none; the SDKs insist on one.
_LOCAL_SERVER_KEY = "api-key-not-set"
_OPENAI_CHAT_KINDS = frozenset({"openai", "openai-chat"})
_KEY_ENV_VARS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
_BASE_URL_ENV_VARS = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}  # read by the SDKs


_Built: TypeAlias = tuple[Model, list[Any]]
"""A real model and the SDK clients built for it (the provider does not close a client it was handed)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How a model request that failed transiently is retried."""

    max_attempts: int = 3
    """Attempts in total, the first included."""
    base_delay_s: float = 0.5
    """Wait before the second attempt; doubled for each later one."""
    max_delay_s: float = 20.0
    """Upper bound of one computed wait."""
    max_retry_after_s: float = 60.0
    """Upper bound of a wait the provider asked for with `Retry-After`."""


DEFAULT_RETRY_POLICY = RetryPolicy()


class ProviderRequestError(ProviderError, RunStopped):
    """A provider request failed for good (after retries); the message is one redacted line.

    Also a `failures.RunStopped` carrying its `kind`, so `failures.classify` turns it into the right
    `RunError` (rate_limit, auth, server_error, context_length, connection) with this message.
    """

    def __init__(
        self, message: str, *, kind: RunErrorKind, provider: str, status_code: int | None, attempts: int
    ) -> None:
        super().__init__(message)
        self.kind: RunErrorKind = kind
        """The `records.RunError` kind: rate_limit, auth, server_error, context_length or connection."""
        self.provider = provider
        """The provider's name, e.g. `openai`."""
        self.status_code = status_code
        """The HTTP status, None for connection failures."""
        self.attempts = attempts
        """How many requests were made."""


class ProviderContextLengthError(ProviderRequestError, ContextOverflowError):
    """The provider said the request exceeds the model's context window (kind `context_length`)."""


# --------------------------------------------------------------------------------------------- building


def resolve_model_name(model: str | None) -> str:
    """The model string to use: `model`, else `$AGENTRIG_MODEL`; none is a `UsageError`."""
    name = (model or os.environ.get(MODEL_ENV_VAR, "")).strip()
    if not name:
        raise UsageError(f"no model: pass --model provider:name (e.g. openai:gpt-4o) or set {MODEL_ENV_VAR}")
    return name


def build_model(
    model: str | None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    retry_policy: RetryPolicy | None = None,
) -> RetryingModel:
    """A pydantic-ai model for `provider:name` (or `$AGENTRIG_MODEL`), wrapped in the retry policy.

    With `base_url`, `openai:NAME` / `openai-chat:NAME` speak Chat Completions to that server,
    `openai-responses:NAME` the Responses API and `anthropic:NAME` the Messages API; the key is `api_key`,
    else the provider's key variable, else a placeholder (local servers need none).
    """
    name = resolve_model_name(model)
    register_secret(api_key)
    kind, _, model_name = name.partition(":")
    if name != "test" and (not model_name or not kind):
        raise UsageError(f"model {name!r}: expected provider:name, e.g. openai:gpt-4o or anthropic:claude-sonnet-4-5")

    def build() -> _Built:
        clients: list[Any] = []
        if base_url:
            built = _model_at_base_url(kind, model_name, base_url=base_url, api_key=api_key, clients=clients)
        else:
            built = infer_model(name, provider_factory=lambda provider: _provider(provider, None, api_key, clients))
        return built, clients

    try:
        wrapped, clients = build()
    except ImportError as error:
        raise UsageError(
            f"model {name!r} needs an extra package ({error.name or error}): pip install 'agentrig[providers]'"
        ) from None
    except (UserError, ValueError) as error:
        raise UsageError(f"model {name!r}: {redact(one_line(str(error)))}") from None
    return RetryingModel(wrapped, policy=retry_policy or DEFAULT_RETRY_POLICY, owned_clients=clients, rebuild=build)


def _model_at_base_url(kind: str, model_name: str, *, base_url: str, api_key: str | None, clients: list[Any]) -> Model:
    if kind in _OPENAI_CHAT_KINDS:
        from pydantic_ai.models.openai import OpenAIChatModel

        return OpenAIChatModel(model_name, provider=_provider("openai", base_url, api_key, clients))
    if kind == "openai-responses":
        from pydantic_ai.models.openai import OpenAIResponsesModel

        return OpenAIResponsesModel(model_name, provider=_provider("openai", base_url, api_key, clients))
    if kind == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel

        return AnthropicModel(model_name, provider=_provider("anthropic", base_url, api_key, clients))
    raise UsageError(
        f"--base-url works with openai:, openai-chat:, openai-responses: and anthropic: models, not {kind}: "
        "(an OpenAI-compatible server takes openai:NAME)"
    )


def _api_key(family: str, base_url: str | None, api_key: str | None) -> str:
    env_var = _KEY_ENV_VARS[family]
    key = api_key or os.environ.get(env_var)
    if key:
        return key
    if base_url or os.environ.get(_BASE_URL_ENV_VARS[family]):
        return _LOCAL_SERVER_KEY
    raise UsageError(f"{family}: no API key: set {env_var} (or use --base-url for a local server)")


def _provider(kind: str, base_url: str | None, api_key: str | None, clients: list[Any]) -> Provider[Any]:
    """The provider for a model kind; OpenAI and Anthropic get SDK clients that do not retry on their own
    (appended to `clients`: the provider does not close a client it was handed)."""
    if kind in _OPENAI_CHAT_KINDS or kind == "openai-responses":
        from openai import AsyncOpenAI
        from pydantic_ai.providers.openai import OpenAIProvider

        client = AsyncOpenAI(base_url=base_url, api_key=_api_key("openai", base_url, api_key), max_retries=0)
        clients.append(client)
        return OpenAIProvider(openai_client=client)
    if kind == "anthropic":
        from anthropic import AsyncAnthropic
        from pydantic_ai.providers.anthropic import AnthropicProvider

        client = AsyncAnthropic(base_url=base_url, api_key=_api_key("anthropic", base_url, api_key), max_retries=0)
        clients.append(client)
        return AnthropicProvider(anthropic_client=client)
    # Other providers keep their own client (and the SDK's own retries, where it has any).
    return infer_provider(kind)


# --------------------------------------------------------------------------------------------- retrying


class RetryingModel(WrapperModel):
    """Retries rate limits, server errors and connection failures; raises `ProviderRequestError` at the end."""

    def __init__(
        self,
        wrapped: Model,
        *,
        policy: RetryPolicy = DEFAULT_RETRY_POLICY,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        owned_clients: Iterable[Any] = (),
        rebuild: Callable[[], _Built] | None = None,
    ) -> None:
        super().__init__(wrapped)
        self.policy = policy
        self._sleep = sleep
        self._jitter = jitter
        self._rebuild = rebuild
        # SDK clients hold connection pools bound to the event loop that opened them, and callers such as the
        # scenario runner use one model across several `asyncio.run` calls: each loop gets its own real model.
        self._unclaimed: _Built | None = (wrapped, list(owned_clients))
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Built] = weakref.WeakKeyDictionary()

    def _for_this_loop(self) -> Model:
        loop = asyncio.get_running_loop()
        built = self._per_loop.get(loop)
        if built is None:
            if self._unclaimed is not None:
                built, self._unclaimed = self._unclaimed, None
            elif self._rebuild is not None:
                built = self._rebuild()
            else:
                built = (self.wrapped, [])
            self._per_loop[loop] = built
        return built[0]

    async def aclose(self) -> None:
        """Close the SDK clients this event loop used (and unused ones). Call it in the loop that made the
        requests, before the loop closes: a client collected after its loop is gone fails noisily."""
        entries = [self._per_loop.pop(asyncio.get_running_loop(), None), self._unclaimed]
        self._unclaimed = None
        for entry in entries:
            for client in entry[1] if entry is not None else ():
                await client.close()

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        attempt = 1
        while True:
            try:
                return await self._for_this_loop().request(messages, model_settings, model_request_parameters)
            except ModelAPIError as error:
                await self._wait_or_raise(error, attempt)
            attempt += 1

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse, None]:
        # Only opening the stream is retried: once events have been handed on, a retry would repeat them.
        async with AsyncExitStack() as stack:
            attempt = 1
            while True:
                opening = self._for_this_loop().request_stream(
                    messages, model_settings, model_request_parameters, run_context
                )
                try:
                    stream = await stack.enter_async_context(opening)
                    break
                except ModelAPIError as error:
                    await self._wait_or_raise(error, attempt)
                attempt += 1
            try:
                yield stream
            except ModelAPIError as error:
                raise self._failure(error, attempt) from error

    async def _wait_or_raise(self, error: ModelAPIError, attempt: int) -> None:
        kind = provider_kind(error)
        if kind not in ("rate_limit", "server_error", "connection") or attempt >= self.policy.max_attempts:
            raise self._failure(error, attempt) from error
        await self._sleep(self.retry_delay(error, attempt))

    def retry_delay(self, error: ModelAPIError, attempt: int) -> float:
        """Seconds to wait after failed attempt number `attempt`: `Retry-After` (capped) when the provider
        sent one, else exponential backoff with equal jitter."""
        asked = _retry_after_seconds(error)
        if asked is not None:
            return min(asked, self.policy.max_retry_after_s)
        backoff = min(self.policy.base_delay_s * 2 ** (attempt - 1), self.policy.max_delay_s)
        return backoff / 2 + backoff / 2 * self._jitter()

    def _failure(self, error: ModelAPIError, attempts: int) -> ProviderRequestError:
        kind, message = describe_provider_failure(error, provider=self.system, base_url=self.base_url)
        if attempts > 1:
            message += f" (after {attempts} attempts)"
        error_type = ProviderContextLengthError if kind == "context_length" else ProviderRequestError
        return error_type(message, kind=kind, provider=self.system, status_code=_status_of(error), attempts=attempts)


# --------------------------------------------------------------------------------------------- translating


def _status_of(error: BaseException) -> int | None:
    return error.status_code if isinstance(error, ModelHTTPError) else None


def _retry_after_seconds(error: BaseException) -> float | None:
    """`retry-after-ms`, else `Retry-After` as seconds or an HTTP date; None when absent or unreadable."""
    headers = getattr(error, "headers", None)
    if not isinstance(headers, Mapping):
        return None
    lowered = {str(key).lower(): str(value) for key, value in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


async def close_model(model: Model | None) -> None:
    """Close the connections a model built by `build_model` (or a recording around one) opened in this event
    loop; any other model is left alone. Call it at the end of each `asyncio.run` that used the model."""
    close = getattr(model, "aclose", None)
    if close is not None:
        await close()


# --------------------------------------------------------------------------------------------- concurrency

_T = TypeVar("_T")


async def run_many(jobs: Iterable[Callable[[], Awaitable[_T]]], concurrency: int) -> list[_T]:
    """Run `jobs` (zero-argument coroutine functions) in this event loop, at most `concurrency` at once;
    results in the order of `jobs`. The first exception cancels the rest and is raised."""
    if concurrency < 1:
        raise UsageError(f"concurrency must be at least 1, got {concurrency}")
    gate = asyncio.Semaphore(concurrency)

    async def gated(job: Callable[[], Awaitable[_T]]) -> _T:
        async with gate:
            return await job()

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(gated(job)) for job in jobs]
    return [task.result() for task in tasks]
