"""Another run to compare a run's page with (`agentrig report RUN --baseline DIR`): each scenario's status, time,
usage and canonical history there."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentrig.runtime.reports.scenario_data import canonical_diff, canonical_history_text

__all__ = ["Baseline"]


def _output_dir(entry: Mapping[str, Any]) -> str:
    return str(entry.get("output_dir") or f"scenarios/{entry['name']}")


@dataclass(slots=True)
class Baseline:
    """Another run to compare with (`agentrig report RUN --baseline DIR`): its entries' status and history."""

    directory: Path
    label: str
    head: dict[str, Any]
    statuses: dict[str, str]
    """Scenario id -> status."""
    output_dirs: dict[str, str]
    """Scenario id -> its folder, relative to `directory`."""
    names: dict[str, str]
    """Scenario id -> name."""
    entries: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    """Scenario id -> its time and usage (`duration_s`, `usage`)."""
    seen: set[str] = field(default_factory=set)

    @classmethod
    def from_report(cls, directory: Path, report: Mapping[str, Any], label: str | None = None) -> Baseline:
        entries = [entry for entry in report.get("scenarios") or () if isinstance(entry, dict)]
        return cls(
            directory=directory,
            label=label or str(directory),
            head={key: value for key, value in report.items() if key != "scenarios"},
            statuses={str(entry["id"]): str(entry.get("status")) for entry in entries},
            output_dirs={
                str(entry["id"]): str(entry.get("output_dir") or f"scenarios/{entry['name']}") for entry in entries
            },
            names={str(entry["id"]): str(entry.get("name")) for entry in entries},
            entries={
                str(entry["id"]): {"duration_s": entry.get("duration_s"), "usage": entry.get("usage")}
                for entry in entries
            },
        )

    def compare(self, run_dir: Path, entry: Mapping[str, Any], candidate_label: str) -> dict[str, Any]:
        """How this entry differs from the baseline's: its status there and the canonical diff of the histories."""
        scenario_id = str(entry["id"])
        self.seen.add(scenario_id)
        name = str(entry["name"])
        if scenario_id not in self.statuses:
            return {"status": None, "diff": "", "missing": True, "duration_s": None, "usage": None}
        mine = canonical_history_text(run_dir / _output_dir(entry) / "history.json")
        theirs = canonical_history_text(self.directory / self.output_dirs[scenario_id] / "history.json")
        diff = canonical_diff(
            theirs,
            mine,
            baseline_label=f"{self.label}/scenarios/{name}/history.json",
            candidate_label=f"{candidate_label}/scenarios/{name}/history.json",
        )
        return {"status": self.statuses[scenario_id], "diff": diff, "missing": False, **self.entries[scenario_id]}

    def unseen(self) -> list[dict[str, str]]:
        """The baseline's scenarios the candidate did not report (removed, renamed, or not selected)."""
        return [
            {"id": scenario_id, "name": self.names[scenario_id], "status": status}
            for scenario_id, status in self.statuses.items()
            if scenario_id not in self.seen
        ]
