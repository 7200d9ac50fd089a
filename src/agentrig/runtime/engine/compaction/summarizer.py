"""The summarize request a compaction sends to the run's model, and the controller for a scenario's settings."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic_ai.direct import model_request
from pydantic_ai.messages import ModelRequest, SystemPromptPart, UserPromptPart
from pydantic_ai.models import Model

from agentrig.runtime.engine.compaction.controller import SUMMARIZE_PROMPT, CompactionController
from agentrig.runtime.history.sessions import CompactionRecord
from agentrig.runtime.models.scripted import summary_request
from agentrig.scenarios.model import CompactionSettings

__all__ = ["compactor_for", "model_summarizer"]


def model_summarizer(model: Model) -> Callable[[str], Awaitable[str]]:
    """A compaction summarizer that asks `model` (marked as a summarize request for scripted models).

    One direct model request, not an agent run: an agent would answer an empty summary with an output retry
    (a second, paid request); here an empty answer is simply an empty summary, which the controller rejects.
    """

    async def summarize(transcript: str) -> str:
        request = ModelRequest(parts=[SystemPromptPart(content=SUMMARIZE_PROMPT), UserPromptPart(content=transcript)])
        with summary_request():
            response = await model_request(model, [request])
        return response.text or ""

    return summarize


def compactor_for(
    settings: CompactionSettings | None, model: Model | str | Any, record: CompactionRecord | None
) -> CompactionController | None:
    """The controller for `settings` (None when compaction is off or there is no model to summarize with),
    seeded with the session's stored `record` so a resumed session reuses its summary."""
    if settings is None or model is None:
        return None
    summarizing = model
    if not isinstance(summarizing, Model):
        from pydantic_ai.models import infer_model  # a model name on the user's agent, e.g. "openai:gpt-4o"

        summarizing = infer_model(summarizing)
    return CompactionController(
        context_window=settings.context_window,
        reserve=settings.reserve,
        keep_recent=settings.keep_recent,
        summarizer=model_summarizer(summarizing),
        state=record,
    )
