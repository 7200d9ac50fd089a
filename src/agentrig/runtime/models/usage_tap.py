"""`UsageTap`: a model wrapper that remembers the usage of the latest response, plain or streamed.

The canonical messages an engine reports carry no usage; the event log puts each response's usage on its
`message_end`, so the engine's model is wrapped in a tap the event side reads once the response is there.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from agentrig.runtime.history.usage import Usage

__all__ = ["UsageTap"]


class UsageTap(WrapperModel):
    """Wraps a model; `take_usage()` is the usage of the response that arrived last (None if none did)."""

    def __init__(self, wrapped: Model) -> None:
        super().__init__(wrapped)
        self._response: ModelResponse | None = None
        self._stream: StreamedResponse | None = None

    @property
    def reports_exact_usage(self) -> bool:
        """As the wrapped model: the engine asks whether usage is estimated (FunctionModel, TestModel)."""
        exact = getattr(self.wrapped, "reports_exact_usage", None)
        if isinstance(exact, bool):
            return exact
        return not isinstance(self.wrapped, FunctionModel | TestModel)

    def take_usage(self) -> Usage | None:
        """The latest response's usage, once (a stream's is read now, when it has ended)."""
        usage: Any = None
        if self._stream is not None:
            usage = self._stream.usage
        elif self._response is not None:
            usage = self._response.usage
        self._response = None
        self._stream = None
        return Usage.from_object(usage) if usage is not None else None

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        self._response, self._stream = response, None
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse]:
        async with self.wrapped.request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as stream:
            self._response, self._stream = None, stream
            yield stream
