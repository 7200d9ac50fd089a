"""What a compaction changes in the model's input, as the engine seam carries it (`seam.CompactedInput`)."""

from __future__ import annotations

from collections.abc import Sequence

from agentrig.runtime.engine.seam import CompactedInput
from agentrig.runtime.history.canonical import Message

__all__ = ["compacted_input"]


def compacted_input(full: Sequence[Message], model_input: Sequence[Message]) -> CompactedInput | None:
    """The model-input-only replacement a compaction asks for: `model_input` shares a tail with `full`."""
    if list(model_input) == list(full):
        return None
    shared = 0
    while (
        shared < min(len(full), len(model_input))
        and full[len(full) - 1 - shared] == model_input[len(model_input) - 1 - shared]
    ):
        shared += 1
    return CompactedInput(replaced_count=len(full) - shared, messages=tuple(model_input[: len(model_input) - shared]))
