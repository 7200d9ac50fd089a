"""report.html: one self-contained page of a run, streamed one scenario at a time.

    <html><head><style>(report.css)</style></head><body>
    <script type="application/json" id="ar-s0">{scenario 0: entry, messages, checks, ...}</script>   (scenario_data)
    ...                                                                             one block per scenario
    <script type="application/json" id="ar-index">{"head", "rows", "totals", "baseline"}</script>
    <script>(report.js)</script></body></html>

The page makes no network request (no CDN, no web font; a Content-Security-Policy of `default-src 'none'` says so
to the browser too) and opens from `file://`. The script draws the table from the small index and parses a
scenario's block only when it is opened, so 2,000 scenarios open as fast as twenty. Every block is redacted
(`redaction.dumps_redacted`) and escaped so no string can close its `<script>` (`<` is written `\\u003c`).
The writer holds one scenario's data at a time plus a row of a few numbers per scenario: memory stays flat.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import IO, Any

from agentrig.runtime.history.redaction import dumps_redacted, redact_json
from agentrig.runtime.reports.scenario_data import canonical_diff, canonical_history_text, scenario_payload

__all__ = ["REPORT_HTML", "Baseline", "HtmlReport", "asset_text", "embed_json", "page_end", "page_start"]

REPORT_HTML = "report.html"

_USAGE_KEYS = ("requests", "tool_calls", "input_tokens", "output_tokens", "total_tokens")


def asset_text(name: str) -> str:
    """A file of the page (report.css, report.js, page.html), shipped as package data."""
    return resources.files("agentrig.runtime.reports").joinpath("assets", name).read_text(encoding="utf-8")


def embed_json(value: Any) -> bytes:
    """`value` as JSON that is safe inside `<script type="application/json">`: redacted, and with every `<`
    written `\\u003c` (valid JSON, the same string), so no `</script>` or `<!--` can end or bend the block."""
    return dumps_redacted(value).replace(b"<", b"\\u003c")


def data_block(block_id: str, value: Any) -> bytes:
    return f'<script type="application/json" id="{block_id}">'.encode() + embed_json(value) + b"</script>\n"


def page_start(title: str) -> bytes:
    """Everything before the data blocks: the document head with its style."""
    template = asset_text("page.html")
    start = template.split("<!--DATA-->", 1)[0]
    return start.replace("<!--TITLE-->", html.escape(title)).replace("/*CSS*/", asset_text("report.css")).encode()


def page_end() -> bytes:
    """Everything after the data blocks: the script and the closing tags."""
    end = asset_text("page.html").split("<!--DATA-->", 1)[1]
    # A literal `</script` cannot occur inside the script element; report.js is written without one.
    return end.replace("/*JS*/", asset_text("report.js")).encode()


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
        )

    def compare(self, run_dir: Path, entry: Mapping[str, Any], candidate_label: str) -> dict[str, Any]:
        """How this entry differs from the baseline's: its status there and the canonical diff of the histories."""
        scenario_id = str(entry["id"])
        self.seen.add(scenario_id)
        name = str(entry["name"])
        if scenario_id not in self.statuses:
            return {"status": None, "diff": "", "missing": True}
        mine = canonical_history_text(run_dir / _output_dir(entry) / "history.json")
        theirs = canonical_history_text(self.directory / self.output_dirs[scenario_id] / "history.json")
        diff = canonical_diff(
            theirs,
            mine,
            baseline_label=f"{self.label}/scenarios/{name}/history.json",
            candidate_label=f"{candidate_label}/scenarios/{name}/history.json",
        )
        return {"status": self.statuses[scenario_id], "diff": diff, "missing": False}

    def unseen(self) -> list[dict[str, str]]:
        """The baseline's scenarios the candidate did not report (removed, renamed, or not selected)."""
        return [
            {"id": scenario_id, "name": self.names[scenario_id], "status": status}
            for scenario_id, status in self.statuses.items()
            if scenario_id not in self.seen
        ]


class HtmlReport:
    """report.html of a run: `add` each report.json entry (redacted), then `finish`."""

    def __init__(
        self,
        handle: IO[bytes],
        head: Mapping[str, Any],
        *,
        run_dir: Path,
        files_base: str = "",
        engine: str | None = None,
        baseline: Baseline | None = None,
        label: str | None = None,
    ) -> None:
        self._handle = handle
        self._head: dict[str, Any] = redact_json(dict(head))
        self._run_dir = run_dir
        self._files_base = files_base
        self._engine = engine
        self._baseline = baseline
        self._label = label or str(run_dir)
        self._rows: list[dict[str, Any]] = []
        self._totals = dict.fromkeys(_USAGE_KEYS, 0)
        summary = self._head.get("summary") or {}
        title = f"agentrig: {summary.get('passed', 0)} passed, {summary.get('failed', 0)} failed"
        handle.write(page_start(title))

    def add(self, entry: Mapping[str, Any], *, folder: str | None = None) -> None:
        """One scenario: `entry` is its report.json entry (redacted); `folder` the folder its files are in, relative
        to the run, when that is not the entry's `output_dir` (redaction changed the name it is written under)."""
        number = len(self._rows)
        payload = scenario_payload(self._run_dir, entry, self._files_base, folder=folder)
        usage = entry.get("usage") or {}
        for key in _USAGE_KEYS:
            self._totals[key] += int(usage.get(key) or 0)
        row: dict[str, Any] = {
            "i": number,
            "id": entry["id"],
            "name": entry["name"],
            "path": entry.get("path"),
            "status": entry["status"],
            "duration_s": entry.get("duration_s"),
            "requests": usage.get("requests", 0),
            "input_tokens": usage.get("input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0),
            "tags": entry.get("tags") or [],
            "failed_checks": sum(1 for check in entry.get("checks") or () if not check.get("passed")),
            "error": (entry.get("error") or {}).get("kind"),
        }
        if self._baseline is not None:
            comparison = self._baseline.compare(self._run_dir, entry, self._label)
            payload["baseline"] = comparison
            row["baseline_status"] = comparison["status"]
            row["changed"] = bool(comparison["diff"]) or comparison["status"] != entry["status"]
        self._handle.write(data_block(f"ar-s{number}", payload))
        self._rows.append(row)

    def finish(self) -> None:
        index: dict[str, Any] = {
            "kind": "run",
            "head": self._head,
            "engine": self._engine,
            "label": self._label,
            "totals": self._totals,
            "rows": self._rows,
            "baseline": None,
        }
        if self._baseline is not None:
            index["baseline"] = {
                "label": self._baseline.label,
                "head": redact_json(self._baseline.head),
                "only_in_baseline": self._baseline.unseen(),
            }
        self._handle.write(data_block("ar-index", index))
        self._handle.write(page_end())
