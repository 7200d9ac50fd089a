"""Helpers the compatibility cases share: a recording scripted model and part-level views of histories.

Everything here uses public pydantic-ai API that is the same on every pinned version (2.38.0 .. 2.68.0);
version differences go through `agentrig.runtime.models.pydantic_ai_compat` or the canonical layer instead.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponsePart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingCalls, DeltaToolCalls, FunctionModel
from pydantic_ai.usage import RequestUsage

from agentrig.runtime.history.canonical import Message, Part
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.models.conversion import to_canonical

StreamChunk = str | DeltaToolCalls | DeltaThinkingCalls
"""What a FunctionModel stream function may yield in these cases."""


def scripted_usage(step: int) -> RequestUsage:
    """Explicit usage for the `step`-th scripted response: FunctionModel's estimates differ between versions."""
    return RequestUsage(input_tokens=100 + step, output_tokens=10 + step)


@dataclass
class RecordedScript:
    """A FunctionModel answering with `script[n]` on its n-th request, recording every message list it receives.

    The n-th request is counted per model, not from the history, so a reloaded conversation continues the
    script where it stopped. Running past the end of the script fails the test.
    """

    script: Sequence[Sequence[ModelResponsePart]] = ()
    """Parts of each scripted response, in request order."""
    stream_script: Sequence[Sequence[StreamChunk]] = ()
    """Chunks of each streamed response, in request order (for `run_stream_events`)."""
    received: list[list[ModelMessage]] = field(default_factory=list[list[ModelMessage]])
    """A deep copy of the messages of every request, as the model got them."""

    def _record(self, messages: list[ModelMessage]) -> int:
        self.received.append(copy.deepcopy(messages))
        return len(self.received) - 1

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """The FunctionModel function."""
        step = self._record(messages)
        assert step < len(self.script), f"the model was asked {step + 1} times; the script has {len(self.script)}"
        return ModelResponse(parts=list(self.script[step]), usage=scripted_usage(step))

    async def stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[StreamChunk]:
        """The FunctionModel stream function (streamed responses always carry estimated usage, on every version)."""
        step = self._record(messages)
        assert step < len(self.stream_script), (
            f"the model was asked {step + 1} times; the script has {len(self.stream_script)}"
        )
        for chunk in self.stream_script[step]:
            yield chunk

    def model(self) -> FunctionModel:
        """The pydantic-ai model; it answers both `run` and `run_stream_events` when both scripts are given."""
        if self.script and self.stream_script:
            return FunctionModel(self.respond, stream_function=self.stream)
        if self.stream_script:
            return FunctionModel(stream_function=self.stream)
        return FunctionModel(self.respond)

    def received_canonical(self, request: int = -1) -> list[Message]:
        """What the model got on one request, in canonical form."""
        return to_canonical(self.received[request])


def flat_parts(history: Sequence[Message]) -> list[tuple[str, Part]]:
    """Every part with the kind of its message, ignoring message boundaries.

    Message boundaries are not stable across versions (content enqueued from a tool is a separate request on
    2.38 and merged into the tool-return request on 2.68), the parts and their order are.
    """
    return [(message.kind, part) for message in history for part in message.parts]


def without_run_ids(history: Sequence[Message]) -> list[Message]:
    """The history with its per-run values cleared (run and conversation ids): every run gets fresh ones."""
    return without_per_run_values(history)
