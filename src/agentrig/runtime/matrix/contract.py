"""The compatibility contract's rows, and which scenario tags are their evidence: the one place that maps them.

The contract (docs/contracts/compatibility-contract.md, after the runtime this harness serves) names what a
runtime composes from pydantic-ai and must keep working across upgrades. Each row here names its area, the
public API it rests on, and the scenario tags whose scenarios prove it; `agentrig matrix` renders the rows with
those scenarios' status per version (`contract_section`), so docs/compatibility.md is the contract's evidence
column. A row with no scenario says so, with the reason, instead of looking covered.

The per-version expectations scenarios state (`when_pydantic_ai`) are read from the scenario files themselves and
listed under the rows: a difference between versions that a scenario tolerates is named on the page, never hidden.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentrig.errors import AgentrigError
from agentrig.runtime.matrix.compare import ScenarioComparison
from agentrig.scenarios.expectation_model import TurnExpectations
from agentrig.scenarios.loader import load_paths
from agentrig.scenarios.model import Scenario

__all__ = ["CONTRACT_ROWS", "ContractRow", "VersionNote", "contract_section", "version_notes"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ContractRow:
    """One row of the compatibility contract's table."""

    area: str
    """The row's area, as the contract names it."""
    api: str
    """The pydantic-ai API the runtime composes there."""
    tags: tuple[str, ...]
    """Scenario tags whose scenarios are the row's evidence."""
    without_scenario: str = ""
    """Why the row has no scenario (yet), shown instead of a status."""
    not_covered: str = ""
    """What the contract names on the row that no scenario can prove, and why (listed under the table)."""


CONTRACT_ROWS: tuple[ContractRow, ...] = (
    ContractRow(area="Streaming graph traversal", api="`Agent.run_stream_events()` / `iter` + `node.stream`",
                tags=("streaming",)),
    ContractRow(area="Steering", api="`RunContext.enqueue` / `AgentRun.enqueue(priority='asap')`",
                tags=("steering",)),
    ContractRow(area="Cancellation", api="`CancellationToken`, `RunCancelled.new_messages()` / `.usage`",
                tags=("cancellation",)),
    ContractRow(area="Deferred host actions", api="`ExternalToolset`, `DeferredToolRequests`, `DeferredToolResults`",
                tags=("host-actions",)),
    ContractRow(area="Tool arguments", api="`ToolCallPart.args_as_dict()`", tags=("tool-arguments",)),
    ContractRow(area="Model-input history cleanup", api="the public `Agent` run pipeline", tags=("history-cleanup",),
                not_covered="`history-cleanup-public` proves pydantic-ai's own cleanup (`settings.prepare_history: "
                            "false`); `history-cleanup-continuation` proves what the model receives after agentrig's "
                            "own preparation, which runs first by default"),
    ContractRow(area="Application history policy", api="`ProcessHistory`, `Hooks(model_request=...)` capabilities",
                tags=("history-policy",)),
    ContractRow(area="Session storage and reload", api="`ModelMessagesTypeAdapter`, stored histories resumed",
                tags=("sessions", "resume")),
    ContractRow(area="Harness compaction / memory", api="pydantic-ai-harness capabilities (optional extra)",
                tags=("harness",),
                not_covered="harness compaction (`ClearToolResults`, `SlidingWindowCompaction`) sends the model the "
                            "same input on every pin but stores it differently: harness 0.30, 0.31, 0.59 and 0.60 "
                            "keep the compacted history, 0.36 (beside 2.68) only the original, so no golden holds on "
                            "every pin; the shipped scenario uses `ToolOutputLimits`, which is the same everywhere"),
    ContractRow(area="UI protocols", api="`AGUIAdapter.build_run_input`, `AGUIEventStream`; `VercelAIAdapter`",
                tags=("ag-ui", "vercel-ai"),
                not_covered="pydantic-ai's adapters answer no 501 (an unknown message role is skipped with a warning "
                            "and the request runs); a duplicate tool result is passed on, not refused (refusing it is "
                            "the runtime's own work); the session mapping (thread to session) is the application's"),
    ContractRow(area="Definitions / evolving artifacts", api="native instructions / capabilities", tags=(),
                without_scenario="application behaviour (definition versions, activation, rollback): no pydantic-ai "
                                 "surface for a scenario to exercise"),
    ContractRow(area="Host attachments", api="`BinaryContent`, `ImageUrl`, `DocumentUrl` on the user prompt",
                tags=("attachments",)),
    ContractRow(area="Usage, models, images and toolsets", api="`UsageLimits`, `RunUsage`, `FunctionToolset`",
                tags=("usage", "limits")),
)  # fmt: skip
"""The contract's rows, in its order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionNote:
    """A per-version expectation a scenario states."""

    scenario: str
    where: str
    """e.g. `turn 1: steering "STEER: ..." stored`."""
    per_version: tuple[tuple[str, str], ...]
    """(when_pydantic_ai, expected value), in the scenario's order."""


def version_notes(paths: Sequence[Path]) -> list[VersionNote]:
    """Every per-version expectation in the scenarios under `paths` (unreadable files are skipped: the run that
    produced the report already named them)."""
    try:
        loaded = load_paths(list(paths))
    except AgentrigError:
        return []
    notes: list[VersionNote] = []
    for item in loaded:
        scenario = item.scenario
        places: list[tuple[str, TurnExpectations]] = [
            (f"turn {index + 1}", turn.expect) for index, turn in enumerate(scenario.turns)
        ]
        places.append(("scenario", scenario.expect))
        notes.extend(_ui_notes(scenario))
        for label, expect in places:
            for wanted in expect.steering:
                if isinstance(wanted.stored, tuple):
                    notes.append(
                        VersionNote(
                            scenario=scenario.name,
                            where=f"{label}: steering {wanted.text!r} stored as",
                            per_version=tuple((s.when_pydantic_ai, s.placement) for s in wanted.stored),
                        )
                    )
    return notes


def _ui_notes(scenario: Scenario) -> list[VersionNote]:
    """A UI scenario's per-version statuses and event fields."""
    notes: list[VersionNote] = []
    for index, turn in enumerate(scenario.turns):
        status = turn.expect.ui.status if turn.expect.ui is not None else None
        if isinstance(status, tuple):
            per_version = tuple((variant.when_pydantic_ai, str(variant.status)) for variant in status)
            where = f"turn {index + 1}: UI status"
            notes.append(VersionNote(scenario=scenario.name, where=where, per_version=per_version))
    golden = scenario.expect.ui_events
    if golden is not None and golden.versions:
        per_version = tuple(
            (
                ", ".join(f"{name} {spec}" for name, spec in (("pydantic-ai", v.when_pydantic_ai),
                                                              ("ag-ui-protocol", v.when_ag_ui_protocol)) if spec),
                json.dumps(v.fields, sort_keys=True) if v.fields else "none",
            )
            for v in golden.versions
        )  # fmt: skip
        notes.append(VersionNote(scenario=scenario.name, where="UI event fields", per_version=per_version))
    return notes


def _row_status(row: ContractRow, scenarios: Sequence[ScenarioComparison], versions: Sequence[str]) -> list[str]:
    covering = [item for item in scenarios if set(item.tags) & set(row.tags)]
    if not covering:
        reason = row.without_scenario or "no scenario carries the tags " + ", ".join(f"`{t}`" for t in row.tags)
        return [row.area, row.api, f"— ({reason})", *("—" for _ in versions)]
    names = ", ".join(f"`{item.name}`" for item in covering)
    cells = [
        f"{sum(item.statuses.get(version) == 'passed' for item in covering)}/{len(covering)}" for version in versions
    ]
    return [row.area, row.api, names, *cells]


def contract_section(
    scenarios: Sequence[ScenarioComparison], versions: Sequence[str], notes: Sequence[VersionNote]
) -> list[str]:
    """The markdown section; empty when no scenario carries a contract tag (a suite that is not about it)."""
    contract_tags = {tag for row in CONTRACT_ROWS for tag in row.tags}
    if not any(set(item.tags) & contract_tags for item in scenarios):
        return []
    header = ["area", "pydantic-ai API", "scenarios (by tag, `agentrig.runtime.matrix.contract`)", *versions]
    lines = [
        "## The compatibility contract, row by row",
        "",
        "Each row of the compatibility contract (docs/contracts/compatibility-contract.md) with the scenarios that "
        "prove it and how many of them pass on each version.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(" --- " for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(_row_status(row, scenarios, versions)) + " |" for row in CONTRACT_ROWS]
    lines.append("")
    uncovered = [row for row in CONTRACT_ROWS if row.not_covered]
    if uncovered:
        lines += ["What the rows' scenarios do not prove, and why:", ""]
        lines += [f"- {row.area}: {row.not_covered}." for row in uncovered]
        lines.append("")
    if notes:
        lines += [
            "### Differences between versions that scenarios state",
            "",
            "Where pydantic-ai versions really behave differently, the scenario says what it expects on each "
            "(`when_pydantic_ai`), and the check holds it to that; the canonical history stays the same.",
            "",
        ]
        for note in notes:
            variants = "; ".join(f"`{spec}`: {value}" for spec, value in note.per_version)
            lines.append(f"- `{note.scenario}`, {note.where}: {variants}")
        lines.append("")
    return lines
