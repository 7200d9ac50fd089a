"""`RetryingModel`: the one place a request to a real provider waits for its turn, is timed, retried and counted.

Each attempt of a request

1. waits for a slot of the run-wide limiter (`limiter`: requests in flight, `--rpm`, `--tpm`, a 429's pause),
2. goes to the provider model with the request timeout (`--request-timeout`, `settings.provider.request_timeout`):
   as pydantic-ai's `timeout` model setting for the OpenAI and Anthropic clients agentrig builds, and as an asyncio
   bound around the attempt for every provider,
3. on a 429, a 5xx, a connection failure or no answer in time, is retried after the provider's `Retry-After` (or
   `retry-after-ms`, capped at `--max-retry-wait`) or exponential backoff with jitter, while attempts
   (`--max-attempts`) and the run's retry budget (`--retry-budget`) last. Every retry is counted in the scenario's
   `AttemptLog` and told to its event log (a `request_retry` event with the status).

What fails for good is a `ProviderRequestError`: one redacted line naming the provider and the HTTP status (or the
request and how long it waited), with the attempts made. A response the provider ended before finishing it (a stream
whose body closed before its last event, `pydantic_ai_compat.stream_ended_early`; a response 2.78 marks
`incomplete`) is an `IncompleteResponseError`, raised where the stream's events are read, and never retried.
docs/architecture.md says why this is agentrig's own loop rather than `pydantic_ai.retries`' transport.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TypeAlias

from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from agentrig.errors import ContextOverflowError, ProviderError
from agentrig.runtime.history.run_records import RunErrorKind
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.models.attempt_log import AttemptLog, RetryNotice, current_attempt_log, notify_retry
from agentrig.runtime.models.failures import (
    describe_incomplete_response,
    describe_provider_failure,
    is_no_answer,
    provider_kind,
)
from agentrig.runtime.models.limiter import Limiter, Slot
from agentrig.runtime.models.provider_options import ProviderOptions, RetryPolicy
from agentrig.runtime.models.request_policy import RequestPolicy, current_scenario_settings, request_policy
from agentrig.runtime.models.stops import RunStopped

__all__ = [
    "IncompleteResponseError",
    "ProviderContextLengthError",
    "ProviderRequestError",
    "RetryingModel",
    "retry_after_seconds",
]

Built: TypeAlias = tuple[Model, list[Any]]
"""A real model and the SDK clients built for it (the provider does not close a client it was handed)."""

RETRIED_KINDS = frozenset({"rate_limit", "server_error", "connection", "provider_timeout"})
"""The failures worth another attempt: the same request may well succeed a moment later."""

_BOUND_MARGIN_S = 1.0
"""The asyncio bound of an attempt waits this much longer than the timeout the SDK client was given, so that a
client honouring it ends the request itself (closing its connection cleanly) and the bound catches the others."""


class ProviderRequestError(ProviderError, RunStopped):
    """A provider request failed for good (after retries); the message is one redacted line.

    Also a `failures.RunStopped` carrying its `kind`, so `failures.classify` turns it into the right `RunError`
    (rate_limit, auth, server_error, context_length, connection, provider_timeout) with this message.
    """

    def __init__(
        self, message: str, *, kind: RunErrorKind, provider: str, status_code: int | None, attempts: int
    ) -> None:
        super().__init__(message)
        self.kind: RunErrorKind = kind
        """The `records.RunError` kind."""
        self.provider = provider
        """The provider's name, e.g. `openai`."""
        self.status_code = status_code
        """The HTTP status, None for connection failures and requests that got no answer."""
        self.attempts = attempts
        """How many requests were made."""


class ProviderContextLengthError(ProviderRequestError, ContextOverflowError):
    """The provider said the request exceeds the model's context window (kind `context_length`)."""


class IncompleteResponseError(ProviderRequestError):
    """The provider ended a response before it finished it (kind `incomplete_response`): its stream stopped before
    the final event. Raised by the provider layer, and by the scripted model and a replay imitating it."""

    def __init__(self, message: str, *, provider: str, partial: ModelResponse, attempts: int = 1) -> None:
        super().__init__(message, kind="incomplete_response", provider=provider, status_code=None, attempts=attempts)
        self.partial = partial
        """The response as far as it arrived, with the usage the provider reported for it (a recording keeps both)."""

    @property
    def partial_text(self) -> str:
        """The text that had arrived, kept as the turn's `[INTERRUPTED]` response (as for a stream that broke off)."""
        return "".join(part.content for part in self.partial.parts if isinstance(part, TextPart))


class RetryingModel(WrapperModel):
    """A real model behind the limiter, the request timeout and the retry policy (see the module docstring)."""

    def __init__(
        self,
        wrapped: Model,
        *,
        policy: RetryPolicy | None = None,
        options: ProviderOptions | None = None,
        limiter: Limiter | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        owned_clients: Iterable[Any] = (),
        rebuild: Callable[[], Built] | None = None,
        timeout_setting: bool = False,
    ) -> None:
        super().__init__(wrapped)
        self.base_policy = policy or RetryPolicy()
        """Backoff constants and the defaults the run's flags and a scenario's settings adjust."""
        self.options = options or ProviderOptions()
        self.limiter = limiter
        self.limiter_key = f"{wrapped.system}@{wrapped.base_url or ''}"
        """The provider, as the limiter tells providers apart."""
        self.timeout_setting = timeout_setting
        """The provider model honours pydantic-ai's `timeout` model setting (the OpenAI and Anthropic clients)."""
        self._sleep = sleep
        self._jitter = jitter
        self._rebuild = rebuild
        # SDK clients hold connection pools bound to the event loop that opened them, and callers such as the
        # scenario runner use one model across several event loops: each loop gets its own real model.
        self._unclaimed: Built | None = (wrapped, list(owned_clients))
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Built] = weakref.WeakKeyDictionary()

    @property
    def policy(self) -> RequestPolicy:
        """The policy of a request made now: the running scenario's `settings.provider`, the run's flags, defaults."""
        return request_policy(self.options, current_scenario_settings(), base=self.base_policy)

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
        run = _Attempts(self)
        while True:
            await run.begin()
            try:
                async with asyncio.timeout(run.bound_s):
                    model = self._for_this_loop()
                    response = await model.request(messages, run.settings(model_settings), model_request_parameters)
            except Exception as error:
                await run.failed(error)
                continue
            except BaseException:  # a cancellation (Ctrl-C, the turn's timeout): the slot goes back too
                run.end(cancelled=True)
                raise
            run.end(tokens=_tokens(response.usage))
            if response.state == "incomplete":  # 2.78+: e.g. a Responses API answer still `in_progress`
                raise run.incomplete(response)
            return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse, None]:
        # Only opening the stream is retried: once events have been handed on, a retry would repeat them.
        run = _Attempts(self)
        async with AsyncExitStack() as stack:
            stack.push_async_exit(run.exit_stream)
            while True:
                await run.begin()
                opening = self._for_this_loop().request_stream(
                    messages, run.settings(model_settings), model_request_parameters, run_context
                )
                try:
                    async with asyncio.timeout(run.bound_s):
                        stream = await stack.enter_async_context(opening)
                    break
                except Exception as error:
                    await run.failed(error)
            run.streaming = True
            # A stream the provider ended early is not retried, unlike a 5xx: its deltas were handed on already (to
            # a UI, the event log, `prompt --stream`'s output), so a second attempt would show a second answer after
            # half of the first; and the provider answered, and billed, it. The turn fails with the partial text.
            pydantic_ai_compat.check_stream_end(stream, lambda: run.check_complete(stream))
            try:
                yield stream
            except Exception as error:
                # The stream broke off (a dropped connection, a stall past the request timeout): not retried.
                if isinstance(error, ModelAPIError) or is_no_answer(error):
                    raise run.final_error(error) from error
                raise
            run.end(tokens=_tokens(stream.usage))

    def retry_delay(self, error: BaseException, attempt: int, policy: RetryPolicy | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt`: `retry-after-ms` or `Retry-After` (capped at the
        longest wait) when the provider sent one, else exponential backoff with equal jitter."""
        policy = policy or self.policy.retry
        asked = retry_after_seconds(error)
        if asked is not None:
            return min(asked, policy.max_wait_s)
        backoff = min(policy.base_delay_s * 2 ** (attempt - 1), policy.max_delay_s, policy.max_wait_s)
        return backoff / 2 + backoff / 2 * self._jitter()


class _Attempts:
    """The attempts of one request: its slot, its counts, and what follows a failed attempt."""

    def __init__(self, model: RetryingModel) -> None:
        self.model = model
        self.policy = model.policy
        self.log: AttemptLog | None = current_attempt_log()
        self.number = self.log.start_request() if self.log is not None else 0
        self.attempt = 0
        self.slot: Slot | None = None
        self.budget_spent = False
        self.streaming = False
        """The response has begun streaming: a timeout now is a stream that stalled, not a request unanswered."""

    @property
    def bound_s(self) -> float:
        margin = _BOUND_MARGIN_S if self.model.timeout_setting else 0.0
        return self.policy.request_timeout_s + margin

    def settings(self, model_settings: ModelSettings | None) -> ModelSettings | None:
        """The request's settings with the request timeout for the SDK client, unless the agent set its own."""
        if not self.model.timeout_setting or (model_settings is not None and "timeout" in model_settings):
            return model_settings
        with_timeout: ModelSettings = {**(model_settings or {}), "timeout": self.policy.request_timeout_s}
        return with_timeout

    async def begin(self) -> None:
        """Wait for a slot, then count the attempt as sent."""
        self.attempt += 1
        queued = time.monotonic()
        if self.model.limiter is not None:
            self.slot = await self.model.limiter.acquire(self.model.limiter_key)
        if self.log is not None:
            system, name = self.model.system, self.model.model_name
            self.log.sending(self.number, provider=system, model=name, queued_s=time.monotonic() - queued)

    def end(self, *, tokens: int | None = None, pause_s: float | None = None, cancelled: bool = False) -> None:
        """The attempt in flight is over: its slot goes back (once), with the tokens it used or the pause a 429
        asks of every request to this provider."""
        if self.log is not None:
            self.log.answered(self.number, cancelled=cancelled)
        slot, self.slot = self.slot, None
        if slot is not None and self.model.limiter is not None:
            self.model.limiter.release(slot, tokens=tokens, pause_s=pause_s)

    async def exit_stream(self, exc_type: type[BaseException] | None, *_: object) -> bool:
        """The stream's context is left: the slot goes back (a cancellation is noted as such)."""
        cancelled = exc_type is not None and not issubclass(exc_type, Exception)
        self.end(cancelled=cancelled)
        return False

    async def failed(self, error: Exception) -> None:
        """After a failed attempt: wait and return for the next one, or raise the request's final error. The slot
        goes back before the wait (with a 429's pause), and whatever ends this early."""
        try:
            await self._retry_or_raise(error)
        finally:
            self.end()

    async def _retry_or_raise(self, error: Exception) -> None:
        no_answer = isinstance(error, TimeoutError) or is_no_answer(error)
        if not no_answer and not isinstance(error, ModelAPIError):
            raise error
        kind = "provider_timeout" if no_answer else provider_kind(error)
        retry = kind in RETRIED_KINDS and self.attempt < self.policy.retry.max_attempts
        if retry and self.model.limiter is not None and not await self.model.limiter.take_retry():
            retry, self.budget_spent = False, True
        delay = self.model.retry_delay(error, self.attempt, self.policy.retry) if retry else 0.0
        self.end(pause_s=delay if retry and kind == "rate_limit" else None)
        status = error.status_code if isinstance(error, ModelHTTPError) else None
        if self.log is not None:
            self.log.failed_attempt(str(status) if status is not None else "timeout" if no_answer else "connection")
        if not retry:
            raise self.final_error(error) from error
        if self.log is not None:
            self.log.retrying(delay)
        _, line = self._describe(error, no_answer)
        notice = RetryNotice(
            request=self.number, attempt=self.attempt, status=status, kind=kind, wait_s=round(delay, 3), message=line
        )
        notify_retry(notice)
        await self.model._sleep(delay)  # pyright: ignore[reportPrivateUsage]

    def check_complete(self, stream: StreamedResponse) -> None:
        """Raise an `IncompleteResponseError` when `stream`, whose events ran out, ended before the provider
        finished the response."""
        if pydantic_ai_compat.stream_ended_early(stream):
            raise self.incomplete(stream.get())

    def incomplete(self, response: ModelResponse) -> IncompleteResponseError:
        text = "".join(part.content for part in response.parts if isinstance(part, TextPart))
        which = f"request {self.number}" if self.number else "a request"
        provider, model = self.model.system, self.model.model_name
        message = describe_incomplete_response(provider, response_to=f"{which} from {model}", text=text)
        return IncompleteResponseError(message, provider=provider, partial=response, attempts=self.attempt)

    def final_error(self, error: BaseException) -> ProviderRequestError:
        no_answer = isinstance(error, TimeoutError) or is_no_answer(error)
        kind, message = self._describe(error, no_answer)
        if self.attempt > 1:
            message += f" (after {self.attempt} attempts)"
        if self.budget_spent:
            message += f" (the run's retry budget of {self.model.options.retry_budget} is spent)"
        error_type = ProviderContextLengthError if kind == "context_length" else ProviderRequestError
        status = error.status_code if isinstance(error, ModelHTTPError) else None
        provider = self.model.system
        return error_type(message, kind=kind, provider=provider, status_code=status, attempts=self.attempt)

    def _describe(self, error: BaseException, no_answer: bool) -> tuple[RunErrorKind, str]:
        model = self.model
        if no_answer:
            which = f"request {self.number}" if self.number else "a request"
            timeout = self.policy.request_timeout_s
            what = (
                f"stopped answering for {timeout:g}s mid-stream"
                if self.streaming
                else f"got no answer within {timeout:g}s"
            )
            return (
                "provider_timeout",
                f"{model.system}: {which} to {model.model_name} {what} ({self.policy.timeout_source})",
            )
        return describe_provider_failure(error, provider=model.system, base_url=model.base_url)


def _tokens(usage: Any) -> int | None:
    """Input and output tokens of a response's usage; None when it reports none."""
    total = int(getattr(usage, "input_tokens", 0) or 0) + int(getattr(usage, "output_tokens", 0) or 0)
    return total or None


def retry_after_seconds(error: BaseException) -> float | None:
    """`retry-after-ms`, else `Retry-After` as seconds or an HTTP date; None when absent or unreadable (the same
    precedence as the OpenAI and Anthropic SDKs, and as `pydantic_ai.retries.wait_retry_after` since 2.68)."""
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
