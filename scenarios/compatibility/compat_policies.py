"""History policies the history-policy scenarios attach by `module:attribute` (a user's would live in their app).

`clear_old_tool_results` clears earlier runs' tool results in what the model is sent, through the public
`wrap_model_request` hook (`Hooks(model_request=...)`): the run's stored history keeps the originals.
`keep_recent` is a history processor (attached as `ProcessHistory`): pydantic-ai stores what it returns.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import Hooks
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolReturnPart

CLEARED = "[cleared: old tool result]"


def cleared_earlier_runs(messages: list[ModelMessage], run_id: str | None) -> list[ModelMessage]:
    """New messages with the tool results of earlier runs cleared; the inputs are not mutated."""
    result: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest) and message.run_id != run_id:
            parts = [
                dataclasses.replace(part, content=CLEARED) if isinstance(part, ToolReturnPart) else part
                for part in message.parts
            ]
            message = dataclasses.replace(message, parts=parts)
        result.append(message)
    return result


async def _clear_in_model_input(ctx: RunContext[Any], *, request_context: Any, handler: Any) -> ModelResponse:
    model_input = cleared_earlier_runs(request_context.messages, ctx.run_id)
    response: ModelResponse = await handler(dataclasses.replace(request_context, messages=model_input))
    return response


def clear_old_tool_results() -> Hooks[Any]:
    """The model-input-only policy, as a capability factory."""
    return Hooks(model_request=_clear_in_model_input)


def keep_recent(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Keep the last three messages (the newest request first in them): pydantic-ai stores the result."""
    return messages[-3:] if len(messages) > 3 else messages
