"""The `--agentrig-out` reports of one pytest session, and how a session is stopped: what `agentrig run` does with
its report files and its signals, for a run whose scenarios pytest schedules.

- Every scenario the session collected is in the reports: with its result when it ran, `error` when its pytest
  setup failed (a fixture raised), else `skipped` with why it did not run (interrupted, or pytest stopped early).
- While scenario items run, SIGTERM stops the session as Ctrl-C does (`stop_signals.StopSignals`, in the main
  process): pytest's own KeyboardInterrupt path runs (teardown, `--junitxml`), the reports say
  `"interrupted": true`, and the exit code is 143 (Ctrl-C keeps pytest's own code, 2).
- Once the session has scenarios to run, and before the first writes into `--agentrig-out`, the earlier run's
  report.json is replaced by an interrupted one (`reports.mark_run_started`): a session killed outright leaves no
  earlier green report, and one that stops before (a usage or collection error) leaves the earlier reports alone.

Under pytest-xdist the controller holds this (its workers' entries come with their test reports) and learns which
scenarios exist from the workers' collections (`pytest_xdist_node_collection_finished`).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentrig.runtime.runfolder.owned_folder import OwnedFolder
    from agentrig.runtime.suite.processes.stop_signals import StopSignals

__all__ = ["INTERRUPTED_REASON", "STOPPED_EARLY_REASON", "RunReport"]

INTERRUPTED_REASON = "interrupted before it finished"
"""As `agentrig run` says of a scenario that a signal kept from finishing."""

STOPPED_EARLY_REASON = "not run: pytest stopped before it (-x, --maxfail or a failing session fixture)"


class RunReport:
    """The scenarios of one session (on the controller: of every worker) and their report entries."""

    def __init__(self, out_dir: Path | None, *, model: str | None) -> None:
        self.out_dir = out_dir
        self.model = model
        self.entries: dict[str, dict[str, Any]] = {}
        """pytest node id -> the report entry of its scenario, for those that ran (or whose setup failed)."""
        self.collected: dict[str, tuple[str, str, tuple[str, ...]]] = {}
        """pytest node id -> (path, name, tags) of every scenario item the session collected."""
        self.out_folder: OwnedFolder | None = None
        """The --agentrig-out folder, claimed (`prepare`) by the controller before any worker writes into it: what
        the session may replace or remove there is what its manifest proves agentrig wrote (docs/output-folder.md)."""
        self.started = time.perf_counter()
        self.writing = False
        """The session started writing into `out_dir` (`mark_started`): its reports must be written."""
        self._signals: StopSignals | None = None

    # ------------------------------------------------------------------------------------ the scenarios

    def collect(self, nodeid: str, path: str, name: str, tags: Iterable[str] = ()) -> None:
        self.collected.setdefault(nodeid, (path, name, tuple(tags)))

    def add(self, nodeid: str, entry: dict[str, Any]) -> None:
        self.entries[nodeid] = entry

    def setup_failed(self, nodeid: str, message: str) -> None:
        """The item's pytest setup raised (a fixture): the scenario never ran, and says so as an `error`."""
        known = self.collected.get(nodeid)
        if known is not None and nodeid not in self.entries:
            path, name, tags = known
            self.entries[nodeid] = _not_run_entry(path, name, tags, status="error", message=message)

    # ------------------------------------------------------------------------------------ signals

    def hold_signals(self) -> None:
        """From now until `release_signals`, SIGINT and SIGTERM stop the session (in the main thread only)."""
        if self._signals is None:
            from agentrig.runtime.suite.processes.stop_signals import StopSignals

            self._signals = StopSignals().__enter__()

    def stopped_by_sigterm(self) -> bool:
        return self._signals is not None and self._signals.signum == signal.SIGTERM

    def release_signals(self) -> None:
        signals, self._signals = self._signals, None
        if signals is not None:
            signals.__exit__(None, None, None)

    # ------------------------------------------------------------------------------------ files

    def prepare(self) -> None:
        """Claim `out_dir` (new, empty, or provably agentrig's) before anything runs: an `AgentrigError` if not."""
        if self.out_dir is not None:
            from agentrig.runtime.suite.outputs.scenario_files import (
                prepare_run_out_dir,  # light: not the reports' imports
            )

            self.out_folder = prepare_run_out_dir(self.out_dir)

    def mark_started(self) -> None:
        """Replace the earlier run's reports by an interrupted one, before any scenario writes into `out_dir`
        (once the session has scenarios to run: a usage error before that leaves the earlier reports alone)."""
        if self.out_folder is not None and not self.writing:
            self.writing = True
            from agentrig.runtime.checks.outcome import SuiteResult
            from agentrig.runtime.suite.outputs.reports import mark_run_started

            mark_run_started(self.out_folder, SuiteResult(results=(), duration_s=0.0, interrupted=True))

    def write(self, *, interrupted: bool) -> None:
        """report.json, junit.xml and summary.md of every collected scenario; what an earlier run left and this
        session did not write again is removed, where the folder's manifest proves it agentrig's."""
        if self._signals is not None:
            self._signals.protect()  # a signal now is held: the reports are written whole
        if self.out_dir is None or self.out_folder is None or not self.writing:  # nothing of an earlier run touched
            return
        from agentrig.runtime.suite.outputs.reports import entries_report, write_report_files

        entries = self.all_entries(interrupted=interrupted)
        report = entries_report(
            entries, duration_s=time.perf_counter() - self.started, model=self.model, interrupted=interrupted
        )
        write_report_files(self.out_dir, report, owner=self.out_folder)
        self.out_folder.finish()

    def all_entries(self, *, interrupted: bool) -> list[dict[str, Any]]:
        """The entries, and a `skipped` one for each collected scenario that did not finish."""
        reason = INTERRUPTED_REASON if interrupted else STOPPED_EARLY_REASON
        unfinished = [
            _not_run_entry(path, name, tags, status="skipped", message=reason)
            for nodeid, (path, name, tags) in self.collected.items()
            if nodeid not in self.entries
        ]
        return [*self.entries.values(), *unfinished]

    def golden_lines(self) -> Iterable[str]:
        """`golden written: PATH` / `golden updated: PATH` for each golden this run wrote, and a count line."""
        written = unchanged = 0
        for entry in sorted(self.entries.values(), key=lambda entry: entry["id"]):
            for check in entry["checks"]:
                if check["name"] != "scenario: golden" or not check["passed"]:
                    continue
                detail = str(check.get("detail") or "")
                if detail.startswith(("golden written", "golden updated")):
                    written += 1
                    yield detail
                else:
                    unchanged += 1
        yield f"golden files: {written} written or updated, {unchanged} unchanged"


def _not_run_entry(path: str, name: str, tags: Iterable[str], *, status: str, message: str) -> dict[str, Any]:
    """The report entry of a scenario that did not run: `skipped` (with the reason), or `error` (its setup)."""
    from agentrig.runtime.history.run_records import Check, RunError, ScenarioResult
    from agentrig.runtime.suite.outputs.reports import scenario_json

    if status == "skipped":
        result = ScenarioResult(
            name=name,
            path=path,
            tags=tuple(tags),
            status="skipped",
            checks=(Check(name="scenario: run", passed=True, skipped_reason=message),),
        )
    else:
        result = ScenarioResult(
            name=name, path=path, tags=tuple(tags), status="error", error=RunError(kind="agent_error", message=message)
        )
    return scenario_json(result)
