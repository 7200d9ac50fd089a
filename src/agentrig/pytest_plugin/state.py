"""One pytest session's agentrig state: which YAML it collects, the run options, the scenario session items run in,
and what the reports need. Registered as a plugin object per session (`pytest_configure`), so its hooks see their
own session's state (pytester runs sessions inside sessions).

Under pytest-xdist the controller prepares the output directory and writes the report files from the entries each
worker's reports carry (`agentrig_entry`); each worker runs its own items and writes only their folders and goldens.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentrig.errors import EXIT_TERMINATED, AgentrigError
from agentrig.pytest_plugin.markers import TagMarkers
from agentrig.pytest_plugin.provider_options import provider_options, turn_timeout, worker_limiter_address
from agentrig.pytest_plugin.run_report import RunReport
from agentrig.runtime.reports.report_shape import installed_pydantic_ai_version

if TYPE_CHECKING:
    from agentrig.pytest_plugin.parse_cache import ParseCacheReader, ParseCacheWriter, UserModules
    from agentrig.runtime.suite.options import RunOptions
    from agentrig.runtime.suite.single import ScenarioSession
    from agentrig.testing.scenarios import ScenarioRunner

__all__ = ["STATE_KEY", "PluginState", "is_xdist_worker"]

SKIPPED_DIRECTORIES = frozenset({"golden", "recordings"})
"""As `agentrig.scenarios.loader.SKIPPED_DIRECTORIES` (run artifacts beside scenarios; a test keeps them equal):
not imported here, so a session that collects no scenario loads none of agentrig's YAML models."""


def is_xdist_worker(config: pytest.Config) -> bool:
    """This process is a pytest-xdist worker (its controller writes the reports)."""
    return hasattr(config, "workerinput")


def _absolute(base: Path, value: str | None) -> Path | None:
    return None if value is None else (base / value).resolve()


class PluginState:
    """What one pytest session knows about its scenarios."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        here = config.invocation_params.dir
        self.roots = tuple((config.rootpath / entry).resolve() for entry in config.getini("agentrig_scenarios"))
        """The `agentrig_scenarios` paths: the YAML under them is scenarios."""
        self.named = frozenset((here / str(arg).split("::")[0]).resolve() for arg in config.args)
        """The paths on the command line: a YAML file named there is collected wherever it is."""
        option = config.getoption
        self.out_dir = _absolute(here, option("agentrig_out"))
        self.update_golden = bool(option("agentrig_update_golden"))
        self.engine = str(option("agentrig_engine"))
        self.options = self._run_options(here)
        self.pydantic_ai_version = installed_pydantic_ai_version()
        self.tag_markers = TagMarkers(config)
        """Which scenario tags become markers (only names no other plugin or conftest registered)."""
        self.names: dict[str, str] = {}
        """Scenario name -> `file:line` where it is first collected (names are unique across a run, as in `run`)."""
        self.report = RunReport(self.out_dir, model=self.options.model)
        """The scenarios, their entries and the session's signals (on the controller: of every worker)."""
        self.collected_count = 0
        """Scenario items collected in this process, before -k and -m deselect any."""
        self.worker_counts: list[int] = []
        """Under pytest-xdist, on the controller: each finished worker's `collected_count`."""
        self.problem: str | None = None
        """Why the session is a usage error, decided only once the workers ended (pytest-xdist)."""
        self.parse_cache: ParseCacheReader | None = None
        """In a pytest-xdist worker: the scenario files the controller read for it (`parse_cache`)."""
        self._parse_cache_writer: ParseCacheWriter | None = None
        self._session: ScenarioSession | None = None
        self._test_runner: ScenarioRunner | None = None
        self._frozen = False
        self.only_scenarios_here = True
        """Every item this process collected is a scenario (a pytest-xdist controller collects none)."""
        self._resolved_folders: dict[str, str] = {}
        self._scenario_paths: dict[str, bool] = {}
        atexit.unregister(gc.freeze)  # an earlier session's in this process (pytester's), decided again at the end
        if self.options.model is not None or self.options.replay_dir or self.options.record_dir or self.update_golden:
            self._usage_errors_now()

    @classmethod
    def from_config(cls, config: pytest.Config) -> PluginState:
        return cls(config)

    def _run_options(self, here: Path) -> RunOptions:
        from agentrig.runtime.suite.options import RunOptions

        option = self.config.getoption
        mode: str | None = option("agentrig_record_mode")
        recordings = _absolute(here, option("agentrig_recordings"))
        if mode is not None and recordings is None:
            raise pytest.UsageError(f"--agentrig-record-mode {mode} needs --agentrig-recordings DIR")
        if mode is None and recordings is not None:
            modes = "none, once, new_episodes, all"
            raise pytest.UsageError(f"--agentrig-recordings needs --agentrig-record-mode ({modes})")
        replays = mode == "none"  # without a model, as `agentrig run --replay`: the recordings name theirs
        return RunOptions(
            paths=(),
            out_dir=self.out_dir,
            update_golden=self.update_golden,
            model=option("agentrig_model"),
            base_url=option("agentrig_base_url"),
            record_dir=None if replays else recordings,
            replay_dir=recordings if replays else None,
            record_mode=None if replays or mode is None else mode,
            stream=bool(option("agentrig_stream")),
            default_deps=option("agentrig_deps"),
            timeout=turn_timeout(self.config),
            require_extras=bool(option("agentrig_require_extras") or self.config.getini("agentrig_require_extras")),
            provider=provider_options(self.config),
            limiter=worker_limiter_address(self.config),
        )

    # ---------------------------------------------------------------------------------------- collection

    def resolved(self, path: Path) -> Path:
        """`path.resolve()`, each folder resolved once per session: every file pytest reaches is resolved, and a
        suite's files share a few folders (one system call per file instead of one per folder on its way)."""
        folder, name = os.path.split(path)
        if not path.is_absolute() or name in ("", ".", "..") or os.path.islink(path):
            return path.resolve()
        real = self._resolved_folders.get(folder)
        if real is None:
            real = self._resolved_folders[folder] = os.path.realpath(folder)
        return Path(real, name)

    def collects(self, path: Path) -> bool:
        """Whether `path` (a *.yaml / *.yml file pytest reached) is a scenario file of this session."""
        resolved = self.resolved(path)
        if resolved in self.named:
            return True
        for root in self.roots:
            if resolved == root:
                return True
            if resolved.is_relative_to(root):
                relative = resolved.relative_to(root).parts
                hidden_or_artifact = any(part in SKIPPED_DIRECTORIES or part.startswith(".") for part in relative[:-1])
                return not hidden_or_artifact and not resolved.name.startswith(("_", "."))
        return False

    # ---------------------------------------------------------------------------------------- running

    def _usage_errors_now(self) -> None:
        """Option combinations that cannot run are a usage error before anything runs, as `agentrig run` says."""
        try:
            self.session()
        except AgentrigError as error:
            raise pytest.UsageError(_pytest_names(error.message)) from None

    def session(self) -> ScenarioSession:
        """The scenario session every item of this process runs in (built on first use: it loads pydantic-ai)."""
        if self._session is None:
            from agentrig.pytest_plugin.parse_cache import without_cyclic_collection

            with without_cyclic_collection():
                from agentrig.runtime.suite.single import ScenarioSession

                self._session = ScenarioSession(self.options, execute=self._engine())
        return self._session

    def test_runner(self) -> ScenarioRunner:
        """The `agentrig_scenario` fixture's runner: this session's options, nothing written to --agentrig-out (its
        reports list the collected scenarios; a test's own scenario comes back to the test)."""
        if self._test_runner is None:
            from dataclasses import replace

            from agentrig.runtime.suite.single import ScenarioSession
            from agentrig.testing.failures import PYTEST_UPDATE_GOLDEN
            from agentrig.testing.scenarios import ScenarioRunner

            self._test_runner = ScenarioRunner(
                session=ScenarioSession(replace(self.options, out_dir=None)),
                update_golden_option=PYTEST_UPDATE_GOLDEN,
            )
        return self._test_runner

    def _engine(self) -> Any:
        if self.engine == "tinyagent":
            from agentrig.runtime.engine.tinyagent_engine.execution import execute_scenario_tinyagent

            return execute_scenario_tinyagent
        return None

    # ---------------------------------------------------------------------------------------- reports

    def prepare_out_dir(self) -> None:
        try:
            self.report.prepare()
        except AgentrigError as error:
            raise pytest.UsageError(_pytest_names(error.message)) from None

    def _scenario_nodeid(self, nodeid: str) -> tuple[str, str] | None:
        """(path, name) when `nodeid` (a worker's, under pytest-xdist) is a scenario item of this session."""
        path, separator, name = nodeid.partition("::")
        if not separator or not path.endswith((".yaml", ".yml")):
            return None
        collected = self._scenario_paths.get(path)
        if collected is None:  # every worker names every item: each path decided once
            collected = self._scenario_paths[path] = self.collects(self.config.rootpath / path)
        return (path, name) if collected else None

    # ---------------------------------------------------------------------------------------- hooks

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.report.started = time.perf_counter()
        from _pytest.junitxml import xml_key  # the LogXML object (record_testsuite_property uses it the same way)

        xml = session.config.stash.get(xml_key, None)
        if xml is not None and self.pydantic_ai_version is not None:
            xml.add_global_property("pydantic_ai_version", self.pydantic_ai_version)

    def warn_about_unreached_roots(self) -> None:
        from agentrig.pytest_plugin.guards import AgentrigConfigWarning, unreached_roots

        for root in unreached_roots(self.config, self.roots):
            testpaths = " ".join(self.config.getini("testpaths"))
            warning = AgentrigConfigWarning(
                f"agentrig_scenarios path {root} is not under testpaths ({testpaths}): pytest collects none of"
                " its scenarios; add it to testpaths, name it on the command line, or set"
                " `agentrig_scenarios =` (empty) to say the plugin should collect none"
            )
            try:
                self.config.issue_config_time_warning(warning, stacklevel=2)
            except AgentrigConfigWarning:  # `filterwarnings = error`: the user's policy, said in one line (exit 4)
                raise pytest.UsageError(f"{type(warning).__name__}: {warning}") from None

    def _nothing_collected(self) -> str | None:
        """The error line of a session asked for scenarios that collected none, or None."""
        from agentrig.pytest_plugin.guards import asked_for_scenarios, nothing_collected

        why = asked_for_scenarios(self.config, self.roots)
        return None if why is None else nothing_collected(self.config, self.roots, why)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """pytest-xdist is starting a worker: tell it where the controller leaves the files it reads (`parse_cache`)."""
        from agentrig.pytest_plugin.parse_cache import WORKER_INPUT_KEY, ParseCacheWriter

        if self._parse_cache_writer is None:
            self._parse_cache_writer = ParseCacheWriter()
        node.workerinput[WORKER_INPUT_KEY] = self._parse_cache_writer.directory

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """On pytest-xdist's controller, its workers started: read the scenario files while they start."""
        if self._parse_cache_writer is not None and self._parse_cache_writer.used:
            self.read_files_for_workers()

    def read_files_for_workers(self, user_modules: UserModules | None = None) -> None:
        """On pytest-xdist's controller: read the scenario files on a thread, into the folder the workers collect
        from (`parse_cache`); from `pytest_configure` when the workers fork warm (they are ready sooner, and the
        warm server imports the `user_modules` the files name), else once the workers were started."""
        if self.config.option.collectonly:
            if user_modules is not None:
                user_modules.write([])
            return
        from agentrig.pytest_plugin.parse_cache import ParseCacheWriter, scenario_files_under

        if self._parse_cache_writer is None:
            self._parse_cache_writer = ParseCacheWriter()
        if user_modules is not None:
            self._parse_cache_writer.user_modules = user_modules
        starts, roots, named = sorted(self.named), self.roots, sorted(self.named)
        self._parse_cache_writer.start(
            lambda: scenario_files_under(starts, roots, named, self.collects), self.config.invocation_params.dir
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> None:
        """In a pytest-xdist worker: collect from the controller's reading of the files (`parse_cache`)."""
        if not is_xdist_worker(session.config):
            return
        from agentrig.pytest_plugin.parse_cache import ParseCacheReader, import_for_items

        self.parse_cache = ParseCacheReader.for_worker(session.config.workerinput)  # pyright: ignore[reportAttributeAccessIssue]
        option = session.config.option
        may_deselect_all = bool(option.keyword or option.markexpr)
        if (
            self.parse_cache is not None
            and self.parse_cache.planned()
            and not option.collectonly
            and not may_deselect_all
        ):
            import_for_items(self.engine)  # needed by the first item anyway; the controller reads files meanwhile

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if is_xdist_worker(session.config):
            session.config.workeroutput["agentrig_collected"] = self.collected_count  # pyright: ignore[reportAttributeAccessIssue]
        elif self.collected_count == 0:
            problem = self._nothing_collected()
            if problem is not None:
                raise pytest.UsageError(problem)
        scenarios = [item for item in session.items if getattr(item, "agentrig_scenario", False)]
        self.only_scenarios_here = len(scenarios) == len(session.items)
        if not scenarios:
            return
        for item in scenarios:
            path, tags = item.scenario_path, item.scenario_tags  # pyright: ignore[reportAttributeAccessIssue]
            self.report.collect(item.nodeid, path.as_posix(), item.name, tags)
        if session.config.option.collectonly:
            return
        if not is_xdist_worker(session.config):
            self.report.hold_signals()
            self._start_writing()
        # pydantic-ai loads now, not inside the first scenario's time (--durations would blame that scenario).
        try:
            self.session()
        except AgentrigError as error:
            raise pytest.UsageError(_pytest_names(error.message)) from None
        # As `agentrig run` does (runner.py): what lives now (modules, collected items) lives as long as the run, so
        # the cyclic collector's full passes leave it alone and scan only what the scenarios make (8% of a run).
        gc.freeze()
        self._frozen = True

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The controller learns the scenarios from its workers' collections (it collects nothing itself)."""
        for nodeid in ids:
            found = self._scenario_nodeid(nodeid)
            if found is not None:
                self.report.collect(nodeid, *found)
        if self.report.collected and not self.config.option.collectonly:
            self.report.hold_signals()
            self._start_writing()  # the workers run nothing before every one has collected

    def _start_writing(self) -> None:
        try:
            self.report.mark_started()
        except AgentrigError as error:
            raise pytest.UsageError(_pytest_names(error.message)) from None

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """A pytest-xdist worker ended: how many scenario items it collected (before -k and -m)."""
        output = getattr(node, "workeroutput", None) or {}
        self.worker_counts.append(int(output.get("agentrig_collected", 0)))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if is_xdist_worker(self.config):
            return  # the controller gathers the entries and writes the reports
        entry = getattr(report, "agentrig_entry", None)
        if entry is not None and report.when == "call":
            self.report.add(report.nodeid, json.loads(entry) if isinstance(entry, str) else entry)  # from a worker
        elif report.when == "setup" and report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)  # `RuntimeError: the database is down`
            lines = [line for line in report.longreprtext.splitlines() if line.strip()]
            cause = getattr(crash, "message", None) or (lines[-1] if lines else "an error")
            self.report.setup_failed(report.nodeid, f"its pytest setup failed: {cause.splitlines()[0]}")

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if is_xdist_worker(session.config):
            return
        if self.worker_counts and not any(self.worker_counts) and exitstatus in (0, 1, 5):
            # Under pytest-xdist only the workers collect: the check the controller could not make before the run.
            self.problem = self._nothing_collected()
            if self.problem is not None:
                session.exitstatus = pytest.ExitCode.USAGE_ERROR
        try:
            self.report.write(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)
        finally:
            if self.report.stopped_by_sigterm():
                session.exitstatus = EXIT_TERMINATED  # as `agentrig run` (docs/exit-codes.md); Ctrl-C keeps pytest's 2
            self.report.release_signals()
        if not self._frozen and self.report.entries:
            # What the reports imported and the entries live to the end: pytest's end-of-session collections
            # need not scan them (given back to the collector last, `unfreeze`).
            gc.freeze()
            self._frozen = True

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.problem is not None:
            terminalreporter.write_line(f"ERROR: {self.problem}", red=True)
        if self.update_golden and self.report.entries:
            terminalreporter.section("agentrig goldens")
            for line in self.report.golden_lines():
                terminalreporter.write_line(line)
        if self.out_dir is not None and self.report.entries:
            terminalreporter.write_line(f"agentrig reports: {self.out_dir}/ (report.json, junit.xml, summary.md)")

    def unfreeze(self) -> None:
        """Give the objects frozen at collection back to the cyclic collector: a config cleanup registered before
        pytest's own, so it runs after them (LIFO) and after pytest's end-of-session collections, which would
        otherwise scan every module and item again (70 ms each here). A pytest-xdist worker ends without tearing
        anything down (`worker_exit`), so it keeps them frozen."""
        if self._frozen and not is_xdist_worker(self.config):
            gc.unfreeze()
            self._frozen = False

    def pytest_unconfigure(self) -> None:
        if self._parse_cache_writer is not None:
            self._parse_cache_writer.close()
        self.report.release_signals()
        if self.report.entries and self.only_scenarios_here and not is_xdist_worker(self.config):
            # As the `agentrig` command ends (`agentrig/__main__.py`): what lives at the process's exit (pydantic-ai,
            # the entries) is frozen, and the interpreter's final cyclic collections pass it by (60 ms here). Only
            # when this process ran scenarios and nothing else: a user's own tests keep the exit they always had.
            atexit.register(gc.freeze)
        if self._session is not None:
            self._session.close()
        if self._test_runner is not None:
            self._test_runner.close()
        if self._session is not None and is_xdist_worker(self.config):
            from agentrig.pytest_plugin.worker_exit import end_without_teardown

            end_without_teardown()


def _pytest_names(message: str) -> str:
    """An `agentrig run` usage message in the plugin's option names."""
    for cli, plugin in (
        ("--update-golden", "--agentrig-update-golden"),
        ("--record-mode", "--agentrig-record-mode"),
        ("--record and --replay", "--agentrig-record-mode"),
        ("--record", "--agentrig-record-mode rewrite"),
        ("--replay", "--agentrig-record-mode none"),
        ("--model", "--agentrig-model"),
        ("--out", "--agentrig-out"),
    ):
        message = message.replace(cli, plugin)
    return message


STATE_KEY = pytest.StashKey[PluginState]()
