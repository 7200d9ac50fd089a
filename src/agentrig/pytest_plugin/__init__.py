"""pytest's front end (a `pytest11` entry point): scenario files collected as test items, one per scenario.

    pytest scenarios/                      # every scenario under scenarios/ as an item, `scenarios/f.yaml::name`
    pytest -n auto -m smoke --lf           # pytest-xdist, tags as markers, last-failed: pytest's own features
    pytest --agentrig-out=agentrig-out     # the folders and report files `agentrig run --out` writes

Thin, like `cli/`: options in, and each item runs through `runtime.suite.single.ScenarioSession.run_watched`, the
watched lane `agentrig run -j 1` runs every scenario on (`sequential.FedLane`). Which YAML is collected:
files under the `agentrig_scenarios` ini paths (default `scenarios`, `agentrig run`'s default) by the loader's
discovery rules, and files named on the command line; no other YAML is opened. Importing this module loads only
pytest and the standard library: it is loaded by every pytest session of a project where agentrig is installed.
docs/pytest.md is the user's guide.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentrig.pytest_plugin.provider_options import add_provider_options
from agentrig.pytest_plugin.state import STATE_KEY, PluginState, is_xdist_worker

if TYPE_CHECKING:
    from agentrig.pytest_plugin.items import ScenarioFile
    from agentrig.pytest_plugin.parse_cache import UserModules
    from agentrig.pytest_plugin.warm_workers import WarmWorkers
    from agentrig.testing.scenarios import ScenarioRunner

__all__ = ["RECORD_MODES", "agentrig_scenario"]


def _not_rewritten() -> None:
    """Keep pytest's assertion rewriting off agentrig's own modules.

    pytest rewrites every module of a distribution that registers a pytest11 plugin, imported from then on: here
    all of agentrig (a hundred modules, the runtime and pydantic-ai's callers), which gains nothing from it (its
    asserts are invariants, not tests) and is parsed, rewritten and compiled again wherever bytecode is not cached.
    `mark_rewrite` has no public inverse; without the hook's set (another pytest) everything still works."""
    for hook in sys.meta_path:
        must_rewrite = getattr(hook, "_must_rewrite", None)
        if type(hook).__name__ == "AssertionRewritingHook" and isinstance(must_rewrite, set):
            must_rewrite.discard("agentrig")  # pyright: ignore[reportUnknownMemberType]


_not_rewritten()

RECORD_MODES = ("none", "once", "new_episodes", "all", "rewrite")
"""pytest-recording's modes, as `agentrig run --record-mode` has them (`runtime/models/record_modes.py`); `rewrite`
is the older name of `all`."""


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    group = parser.getgroup("agentrig", "agentrig scenarios (docs/pytest.md)")
    parser.addini(
        "agentrig_placeholder_keys",
        "Import test modules and conftest.py files with placeholder provider API keys (those unset), as agentrig"
        " imports agent modules for a scripted run; removed once collection ends.",
        type="bool",
        default=False,
    )
    parser.addini(
        "agentrig_warm_workers",
        "Under pytest-xdist (-n N), fork the workers from one process that imported pytest, pydantic-ai and agentrig"
        " once, instead of starting each cold (docs/pytest.md).",
        type="bool",
        default=True,
    )
    parser.addini(
        "agentrig_require_extras",
        "A scenario whose `requires:` extras are not installed fails as an error instead of being skipped with the"
        " command that installs them (as --agentrig-require-extras; for a gate that must run every scenario).",
        type="bool",
        default=False,
    )
    parser.addini(
        "agentrig_scenarios",
        "Paths (relative to the rootdir) whose *.yaml / *.yml files are agentrig scenarios.",
        type="args",
        default=["scenarios"],
    )
    group.addoption(
        "--agentrig-out",
        metavar="DIR",
        help="Write report.json, junit.xml, summary.md and per-scenario folders as `agentrig run --out DIR` does.",
    )
    group.addoption(
        "--agentrig-update-golden",
        action="store_true",
        help="Write this run's histories into the golden files (each scenario its own, atomically; works under -n).",
    )
    group.addoption("--agentrig-stream", action="store_true", help="Run every scenario streamed (`stream: true`).")
    group.addoption("--agentrig-model", metavar="PROVIDER:NAME", help="Run against a real model; scripts are ignored.")
    group.addoption("--agentrig-base-url", metavar="URL", help="Base URL of an OpenAI- or Anthropic-compatible server.")
    group.addoption(
        "--agentrig-record-mode",
        choices=RECORD_MODES,
        help="none: replay --agentrig-recordings offline, a changed request fails; once: replay what is recorded, "
        "record what is not; new_episodes: replay, then record the new requests; all (or rewrite): record every "
        "scenario anew (all but none need --agentrig-model).",
    )
    group.addoption("--agentrig-recordings", metavar="DIR", help="The recordings directory of --agentrig-record-mode.")
    group.addoption("--agentrig-deps", metavar="MODULE:ATTR", help="Deps for scenarios that name none of their own.")
    group.addoption(
        "--agentrig-require-extras",
        action="store_true",
        help="A scenario whose `requires:` extras are not installed is an error, not skipped (as `agentrig run "
        "--require-extras`; the ini's agentrig_require_extras).",
    )
    group.addoption(
        "--agentrig-engine",
        choices=("pydantic-ai", "tinyagent"),
        default="pydantic-ai",
        help="The engine each scenario runs on (as `agentrig run --engine`).",
    )
    add_provider_options(group)  # --agentrig-max-concurrency, --agentrig-rpm, ... (docs/providers.md)
    _start_warm_workers_early(pluginmanager)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, args: list[str]) -> None:
    # The first hook that sees the plugin's options parsed, before any conftest is imported from a wrong rootdir.
    from agentrig.pytest_plugin.guards import check_path_options
    from agentrig.pytest_plugin.offline_keys import set_placeholder_keys

    check_path_options(early_config)
    _start_warm_workers(early_config, args)
    set_placeholder_keys(early_config)  # before the project's conftest.py files and test modules are imported


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    from agentrig.pytest_plugin.offline_keys import lift_placeholder_keys

    lift_placeholder_keys(session.config)  # collection is over: the tests run with the environment as it was


def pytest_unconfigure(config: pytest.Config) -> None:
    from agentrig.pytest_plugin.offline_keys import lift_placeholder_keys

    lift_placeholder_keys(config)


@pytest.hookimpl(tryfirst=True)  # before other plugins register their markers (`markers.TagMarkers`)
def pytest_configure(config: pytest.Config) -> None:
    state = PluginState.from_config(config)
    config.stash[STATE_KEY] = state
    config.add_cleanup(state.unfreeze)  # first registered, last to run (`PluginState.unfreeze`)
    config.pluginmanager.register(state, "agentrig-state")  # its hooks see this session's state, not a global
    if state.options.provider_bound and getattr(config.option, "numprocesses", None) and not is_xdist_worker(config):
        from agentrig.pytest_plugin.provider_options import XdistLimiter

        config.pluginmanager.register(XdistLimiter(state.options.provider), "agentrig-limiter")
    config.addinivalue_line("markers", "agentrig: an agentrig scenario (added to every scenario item)")
    if not is_xdist_worker(config):
        warm = config.pluginmanager.get_plugin(WARM_WORKERS_PLUGIN)
        if warm is not None:  # while the warm server imports: its workers are ready to collect sooner
            state.read_files_for_workers(_user_modules(config, warm))
        state.prepare_out_dir()  # before any worker starts writing into it
        state.warn_about_unreached_roots()


def _start_warm_workers_early(pluginmanager: pytest.PytestPluginManager) -> None:
    """Where the command line asks for pytest-xdist workers, start their server as this plugin registers, before
    pytest imports the plugins after it (`warm_workers.guess_early`); `_start_warm_workers` adopts it or ends it."""
    from agentrig.pytest_plugin.warm_workers import WarmWorkers, guess_early

    config = pluginmanager.get_plugin("pytestconfig")
    if os.environ.get("PYTEST_XDIST_WORKER") or not isinstance(config, pytest.Config) or _EARLY_SERVER in config.stash:
        return
    guess = guess_early(config)
    if guess is None or not _may_collect_scenarios(config, guess[0]):
        return
    collect_only = bool(getattr(config.known_args_namespace, "collectonly", False))
    imports, user_modules = _server_needs(guess[1], collect_only=collect_only)
    warm = WarmWorkers.start(imports, user_modules=user_modules)
    if warm is not None:
        config.stash[_EARLY_SERVER] = warm
        config.add_cleanup(lambda: _discard(_take_early_server(config)))  # never claimed: the session ended first


def _take_early_server(config: pytest.Config) -> WarmWorkers | None:
    """The server started early, if any, taken: no one else will take it."""
    warm = config.stash.get(_EARLY_SERVER, None)
    if warm is not None:
        del config.stash[_EARLY_SERVER]
    return warm


def _discard(warm: WarmWorkers | None) -> None:
    if warm is not None:
        warm.discard()


def _server_needs(engine: str, *, collect_only: bool) -> tuple[tuple[str, ...], bool]:
    """What the server imports on `engine` (a scenario item's modules), and whether it imports the user's modules
    (agent:, deps:) too: on pydantic-ai's engine, once the controller has read the files."""
    from agentrig.pytest_plugin.parse_cache import item_modules

    return item_modules(engine), engine == "pydantic-ai" and not collect_only


def _start_warm_workers(early_config: pytest.Config, args: list[str]) -> None:
    """Under pytest-xdist, the server its workers fork from starts as early as the options are known (or earlier,
    on a guess: `_start_warm_workers_early`), and imports while the session goes on (`warm_workers`)."""
    from agentrig.pytest_plugin.warm_workers import WarmWorkers, wanted

    early = _take_early_server(early_config)
    if os.environ.get("PYTEST_XDIST_WORKER") or not wanted(early_config, _may_collect_scenarios(early_config, args)):
        _discard(early)
        return
    option = early_config.known_args_namespace
    imports, user_modules = _server_needs(str(option.agentrig_engine), collect_only=option.collectonly)
    if early is not None and early.serves(imports, user_modules=user_modules):
        warm: WarmWorkers | None = early
    else:
        _discard(early)
        warm = WarmWorkers.start(imports, user_modules=user_modules)
    if warm is not None:
        early_config.pluginmanager.register(warm, WARM_WORKERS_PLUGIN)
        early_config.add_cleanup(warm.close)


def _may_collect_scenarios(early_config: pytest.Config, args: list[str]) -> bool:
    """An `agentrig_scenarios` path exists, or a YAML file is named: a project of plain tests pays nothing."""
    roots = (early_config.rootpath / str(entry) for entry in early_config.getini("agentrig_scenarios"))
    named = (arg.split("::")[0] for arg in args if not arg.startswith("-"))
    return any(root.exists() for root in roots) or any(name.endswith((".yaml", ".yml")) for name in named)


def _user_modules(config: pytest.Config, warm: WarmWorkers) -> UserModules | None:
    from agentrig.pytest_plugin.offline_keys import INI_NAME
    from agentrig.pytest_plugin.parse_cache import UserModules

    if not warm.waits_for_user_modules:
        return None
    offline = bool(config.getini(INI_NAME)) and not config.getoption("agentrig_model")
    from agentrig.pytest_plugin.provider_options import turn_timeout

    deps: str | None = config.getoption("agentrig_deps")
    here = config.invocation_params.dir
    timeout = turn_timeout(config)
    return UserModules(warm.user_modules_path, offline=offline, default_deps=deps, default_timeout=timeout, here=here)


WARM_WORKERS_PLUGIN = "agentrig-warm-workers"
_EARLY_SERVER = pytest.StashKey["WarmWorkers"]()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ScenarioFile | None:
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    state = parent.config.stash[STATE_KEY]
    if not state.collects(file_path):
        return None
    from agentrig.pytest_plugin.items import ScenarioFile

    return ScenarioFile.from_parent(parent, path=file_path)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    entry = getattr(item, "agentrig_entry", None)
    if call.when == "call" and entry is not None:
        # A plain attribute holding JSON data: pytest-xdist sends it from the worker with the report, as one JSON
        # text (execnet's serializer walks a nested dict item by item: half of a worker's time spent on a report).
        report.agentrig_entry = json.dumps(entry) if is_xdist_worker(item.config) else entry
    return report


@pytest.fixture
def agentrig_scenario(request: pytest.FixtureRequest) -> ScenarioRunner:
    """Run a scenario inside your test with this session's `--agentrig-*` options (stream, model, record mode,
    goldens): `agentrig_scenario.run({...}, agent=my_agent, deps=deps)` -> `agentrig.testing.ScenarioRun`."""
    return request.config.stash[STATE_KEY].test_runner()
