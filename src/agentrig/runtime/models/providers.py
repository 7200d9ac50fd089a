"""Real models: build one from `provider:name`, behind the provider layer (`retrying.RetryingModel`).

- `build_model("openai:gpt-4o")` gives any model pydantic-ai knows (`pydantic_ai.models.infer_model`);
  with `base_url` it talks to an OpenAI-compatible server (vLLM, Ollama, a gateway) or an
  Anthropic-compatible one. The default model comes from `AGENTRIG_MODEL`.
- Every model is wrapped in a `RetryingModel`: the run-wide limiter (`limiter`), the request timeout, and the
  retry policy (429, 5xx, connection failures and requests that got no answer, honouring `Retry-After`), every
  attempt counted. The OpenAI and Anthropic SDK clients are built with `max_retries=0`, so this policy is the
  only one (an SDK retrying underneath would multiply the attempts and hide them).
- The failure that survives the retries is raised as a `ProviderRequestError` whose one-line message
  names the provider and the HTTP status (`openai: HTTP 401 Unauthorized: invalid api key`) and never
  a key; a context-window failure is also a `ContextOverflowError`.
- The key is registered as a secret (`redaction.register_secret`) wherever it came from: `api_key`, and the user
  information of the base URL (`http://user:KEY@host/v1`, from `base_url` or the SDK's `*_BASE_URL` variable), which
  pydantic-ai writes into every response's `provider_url` and a provider may echo in an error body; the provider's
  key variable is redacted by its name already.
- `run_many` runs network-bound coroutines concurrently in one event loop, `concurrency` at a time.
"""

from __future__ import annotations

import asyncio
import os
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from pydantic_ai.exceptions import UserError
from pydantic_ai.models import Model, infer_model
from pydantic_ai.providers import Provider, infer_provider

from agentrig.errors import UsageError
from agentrig.runtime.history.redaction import redact, register_secret
from agentrig.runtime.models.failures import one_line
from agentrig.runtime.models.limiter import Limiter
from agentrig.runtime.models.provider_options import ProviderOptions, RetryPolicy
from agentrig.runtime.models.retrying import Built, ProviderContextLengthError, ProviderRequestError, RetryingModel

__all__ = [
    "DEFAULT_RETRY_POLICY",
    "MODEL_ENV_VAR",
    "ProviderContextLengthError",
    "ProviderRequestError",
    "RetryPolicy",
    "RetryingModel",
    "build_model",
    "close_model",
    "register_url_credentials",
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


DEFAULT_RETRY_POLICY = RetryPolicy()
"""The backoff constants and defaults of every model `build_model` makes (tests make its waits shorter)."""


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
    options: ProviderOptions | None = None,
    limiter: Limiter | None = None,
) -> RetryingModel:
    """A pydantic-ai model for `provider:name` (or `$AGENTRIG_MODEL`), behind the provider layer: `options` (the
    run's flags), `limiter` (the run's, None: no limit) and `retry_policy` (backoff constants).

    With `base_url`, `openai:NAME` / `openai-chat:NAME` speak Chat Completions to that server,
    `openai-responses:NAME` the Responses API and `anthropic:NAME` the Messages API; the key is `api_key`,
    else the provider's key variable, else a placeholder (local servers need none).
    """
    name = resolve_model_name(model)
    register_secret(api_key)
    for url in (base_url, *(os.environ.get(variable) for variable in _BASE_URL_ENV_VARS.values())):
        register_url_credentials(url)
    kind, _, model_name = name.partition(":")
    if name != "test" and (not model_name or not kind):
        raise UsageError(f"model {name!r}: expected provider:name, e.g. openai:gpt-4o or anthropic:claude-sonnet-4-5")

    def build() -> Built:
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
    return RetryingModel(
        wrapped,
        policy=retry_policy or DEFAULT_RETRY_POLICY,
        options=options,
        limiter=limiter,
        owned_clients=clients,
        rebuild=build,
        # The clients agentrig builds take pydantic-ai's `timeout` setting (2.38 and 2.68 alike); another provider's
        # model would warn that it ignores it, and gets the asyncio bound alone.
        timeout_setting=bool(clients),
    )


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


def register_url_credentials(url: str | None) -> None:
    """Treat the user name and password of `url` as secrets, as written (percent-encoded) and decoded: a gateway's
    token may be either (`http://TOKEN@host`, `http://user:TOKEN@host`)."""
    if not url or "@" not in url:
        return
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # not a URL: the SDK refuses it, with a message redaction sees through the rest
        return
    userinfo = parts.netloc.rpartition("@")[0]
    for written in userinfo.split(":", 1):
        register_secret(written)
        register_secret(urllib.parse.unquote(written))


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
