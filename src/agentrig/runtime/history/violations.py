"""A broken history invariant, located in the history: what `invariants.check_invariants` and
`ToolCallRegistry.check_against_history` report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias, get_args

__all__ = ["INVARIANT_NAMES", "InvariantName", "Violation"]

InvariantName: TypeAlias = Literal[
    "no_dangling_tool_calls",
    "no_orphaned_tool_returns",
    "no_consecutive_requests",
    "no_persisted_system_prompt",
    "no_duplicate_tool_call_ids",
    "registry_matches_parts",
]
"""The invariant names, the same as `agentrig.scenarios.model.InvariantName`."""

INVARIANT_NAMES: tuple[InvariantName, ...] = get_args(InvariantName)


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    """One broken invariant, located in the history."""

    code: InvariantName
    """Which invariant is broken."""
    message: str
    """One line saying what is wrong, naming the tool call id where there is one."""
    message_index: int | None
    """The message concerned (0-based); None for a registry entry with no part in the history."""
    part_index: int | None
    """The part concerned within that message; None when the whole message is concerned."""

    @property
    def location(self) -> str:
        """`message[i].parts[j]`, `message[i]` or `registry`."""
        if self.message_index is None:
            return "registry"
        if self.part_index is None:
            return f"message[{self.message_index}]"
        return f"message[{self.message_index}].parts[{self.part_index}]"
