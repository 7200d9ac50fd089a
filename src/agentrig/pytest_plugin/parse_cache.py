"""Under pytest-xdist, scenario files read once, by the controller while its workers start, not once per worker.

Every pytest-xdist worker collects every file itself (the controller compares their collections), and reading and
validating the scenario files was most of a worker's collection (0.4 s of CPU for 200 files, in each worker). The
controller collects nothing and has nothing to do while its workers start. So once it has started them, it reads
the scenario files the session can collect on a thread of its own (`ParseCacheWriter`) and leaves each valid file's
scenarios in a folder of the session's, one pickle per file, detached from their YAML as `agentrig run` hands them
to its `-j` workers. A worker collecting a file (`ParseCacheReader`) takes that file's entry when there is one and
the file is still what the controller read (same device, inode, size and modification time, named by the same
relative path), and reads the file itself otherwise: one the controller has not reached yet, one changed since, one
that does not validate (no entry: the worker raises its error in its own words), a worker on another host. Nothing
waits for anything: a collection is the same whichever way each file was read. An entry's scenarios are
`CachedScenario`s: collected at once, unpickled by the item that runs them.

A worker that finds the controller's plan (the files it reads) imports pydantic-ai before it collects instead of
after: it needs it for its first item anyway, and meanwhile the controller gets ahead with the files. Not when
`-k` or `-m` may deselect every scenario (then pydantic-ai is imported only if one is selected, as without
pytest-xdist), nor with `--collect-only`.

The folder is the controller's (`tempfile.mkdtemp`, readable by its user only) and removed when its session ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import importlib
import json
import os
import pickle
import shutil
import tempfile
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentrig.runtime.suite.processes.pool import WorkerImport

__all__ = [
    "CLOSE_WAIT_S",
    "WORKER_INPUT_KEY",
    "CachedScenario",
    "ParseCacheReader",
    "ParseCacheWriter",
    "import_for_items",
    "scenario_files_under",
    "shown_path",
]

WORKER_INPUT_KEY = "agentrig_parse_cache"
"""The key of `workerinput` (what the controller sends each pytest-xdist worker) naming the cache's folder."""

PLAN_FILE = "plan.json"
"""The files the controller reads, in the order it reads them (written before the first entry)."""

_ITEM_MODULES = (
    "agentrig.runtime.suite.single",
    "agentrig.runtime.suite.outputs.reports",
    "agentrig.runtime.history.redaction",
)
"""What a scenario item imports before it runs (`items.ScenarioItem.runtest`), besides its engine."""

_ENGINE_MODULES = {
    # warm_up: what the first scenario would build (pydantic-ai's message adapter) or import on first use.
    "pydantic-ai": (
        "agentrig.runtime.engine.pydantic_ai_engine.scenario_execution",
        "agentrig.runtime.engine.pydantic_ai_engine.warm_up",
    ),
    "tinyagent": ("agentrig.runtime.engine.tinyagent_engine.execution",),
}


@dataclasses.dataclass(frozen=True)
class CachedScenario:
    """A scenario of the controller's reading as a worker collects it: what collection needs now, the scenario itself
    (a `LoadedScenario`) unpickled only when its item first needs it. Every worker collects every item and runs its
    share of them (about half, with two workers); unpickling each scenario's models was a third of a worker's
    collection, before its first item could run."""

    name: str
    line: int
    tags: tuple[str, ...]
    pickled: bytes = dataclasses.field(repr=False)

    @classmethod
    def of(cls, loaded: Any) -> CachedScenario:
        return cls(loaded.name, loaded.line, loaded.tags, pickle.dumps(loaded, pickle.HIGHEST_PROTOCOL))

    def load(self) -> Any:
        """The `LoadedScenario` (as the controller read it: `path` as shown from where pytest started)."""
        return pickle.loads(self.pickled)

    def line_of(self, *field_path: str | int) -> int:
        return self.load().line_of(*field_path)


def _stat_key(path: Path) -> tuple[int, int, int, int] | None:
    """What says a file is unchanged since it was read: device, inode, size, modification time (ns)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


def _entry_name(resolved: Path) -> str:
    return hashlib.sha256(os.fsencode(resolved)).hexdigest()[:32] + ".pickle"


def shown_path(path: Path, base: Path) -> Path:
    """`path` relative to `base` when it is inside it (how messages and reports name it), else absolute."""
    try:
        return Path(os.path.relpath(path, base)) if path.is_relative_to(base) else path
    except ValueError:  # another drive (Windows)
        return path


def scenario_files_under(
    starts: Iterable[Path], roots: Sequence[Path], named: Iterable[Path], collects: Callable[[Path], bool]
) -> list[Path]:
    """The scenario files a session can collect, resolved, in pytest's order (each folder's entries by name): those
    under both a path the session collects (`starts`, pytest's arguments) and a scenario root, and the YAML files
    named on the command line. A superset is harmless (pytest's own `--ignore` and `norecursedirs` are not
    applied: an entry no worker asks for is never read), so the walk stays inside the scenario roots."""
    found: dict[Path, None] = {}
    for start in starts:
        if start.is_file():
            if start.suffix in (".yaml", ".yml") and collects(start):
                found[start] = None
            continue
        for root in roots:
            if root.is_relative_to(start):
                top = root
            elif start.is_relative_to(root):
                top = start
            else:
                continue
            for path in _walk(top):
                if collects(path):
                    found[path] = None
    for path in named:
        if path.suffix in (".yaml", ".yml") and path.is_file() and collects(path):
            found.setdefault(path, None)
    return list(found)


def _walk(top: Path) -> Iterator[Path]:
    if top.is_file():
        yield top
        return
    try:
        entries = sorted(os.scandir(top), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        try:
            if entry.is_dir():
                yield from _walk(path)
            elif entry.is_file() and path.suffix in (".yaml", ".yml"):
                yield path
        except OSError:
            continue


NamedModules = tuple[tuple[str, ...], Path, float | None, int]
"""A scenario's `agent:` and `deps:` modules, its directory, its `settings.timeout` and how many turns it has."""


class ParseCacheWriter:
    """The controller's side: a folder for the entries (`directory`, made on first use), filled by `start`."""

    def __init__(self) -> None:
        self._directory: str | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.user_modules: UserModules | None = None
        """Where the warm server waits for the user's modules to import (`warm_workers`), written once read."""

    @property
    def directory(self) -> str:
        if self._directory is None:
            self._directory = tempfile.mkdtemp(prefix="agentrig-parse-cache-")
        return self._directory

    @property
    def used(self) -> bool:
        """A worker was told about the folder (pytest-xdist is starting workers)."""
        return self._directory is not None

    def start(self, files: Callable[[], list[Path]], base: Path) -> None:
        """Read `files()` (called on the thread: walking the roots is part of the work moved off the critical path)
        one by one, each shown relative to `base` as a worker names it."""
        if self._thread is not None:
            return
        directory = Path(self.directory)
        thread = threading.Thread(
            target=self._fill, args=(directory, files, base), name="agentrig-parse-cache", daemon=True
        )
        thread.start()
        self._thread = thread  # started (a Ctrl-C inside `start` leaves none to join)

    def _fill(self, directory: Path, files: Callable[[], list[Path]], base: Path) -> None:
        named: list[NamedModules] = []
        try:
            self._read(directory, files, base, named)
        finally:
            if self.user_modules is not None:
                self.user_modules.write(named)  # whatever happened: the warm server waits for it

    def _read(self, directory: Path, files: Callable[[], list[Path]], base: Path, named: list[NamedModules]) -> None:
        """Fill the folder; with `user_modules`, add to `named` what each scenario names (`NamedModules`)."""
        with contextlib.suppress(Exception):  # only ever a shortcut: whatever fails here, the workers read the files
            planned = files()
            _write_atomically(directory / PLAN_FILE, json.dumps([str(path) for path in planned]).encode())
            from agentrig.errors import AgentrigError
            from agentrig.scenarios.loader import iter_scenarios

            for resolved in planned:
                if self._stop.is_set():
                    return
                before = _stat_key(resolved)
                shown = shown_path(resolved, base)
                try:
                    scenarios = list(iter_scenarios([shown]))
                except AgentrigError:
                    continue  # the worker reads it and raises the error itself
                if before is None or _stat_key(resolved) != before:
                    continue  # changed while it was read: which version would this be?
                cached = [CachedScenario.of(loaded) for loaded in scenarios]
                entry = pickle.dumps((str(shown), before, cached), protocol=pickle.HIGHEST_PROTOCOL)
                _write_atomically(directory / _entry_name(resolved), entry)
                if self.user_modules is not None:
                    from agentrig.runtime.suite.scenario_store import named_modules

                    for loaded in scenarios:
                        scenario = loaded.scenario
                        named.append(
                            (named_modules(loaded), loaded.base_dir, scenario.settings.timeout, scenario.most_turns)
                        )

    def wait(self, timeout: float | None = None) -> None:
        """Until every planned file is read (or skipped), or `timeout` seconds."""
        if self._thread is not None:
            self._thread.join(timeout)

    def close(self) -> None:
        """Stop reading and remove the folder (the workers are done with it). The thread stops at its next file; it
        is given `CLOSE_WAIT_S` for that, then left behind (a daemon): a Ctrl-C that landed inside an import of the
        session's main thread can leave that module's import lock held for ever, and the thread, importing the
        scenario models beside it, would wait on it for ever. Whatever it writes after the folder is gone fails, and
        is ignored."""
        self._stop.set()
        self.wait(CLOSE_WAIT_S)
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)


CLOSE_WAIT_S = 2.0
"""How long the end of a session waits for the reading thread to stop (it stops between two files)."""


class UserModules:
    """The modules the scenarios' `agent:` and `deps:` name (and `--agentrig-deps`), for the warm server to import
    before it forks the workers, as `agentrig run -j N`'s forkserver does (`pydantic_ai_engine/warm_up.py` reads
    the file). Imported as a test module would import them: with placeholder provider keys only under
    `agentrig_placeholder_keys` (in a cold worker the test modules, collected first, import them so); an import
    that fails there (a key that is not set) is left to the worker, which imports the module itself."""

    def __init__(
        self, path: Path, *, offline: bool, default_deps: str | None, default_timeout: float | None, here: Path
    ) -> None:
        self.path = path
        self.offline = offline
        self.default_deps = default_deps
        self.default_timeout = default_timeout
        """The session's default `settings.timeout` (a scenario's own comes first)."""
        self.here = here
        self._written = False

    def write(self, named: list[NamedModules]) -> None:
        """Write the import list of `named`, once."""
        if self._written:
            return
        self._written = True
        modules: list[WorkerImport] = []
        with contextlib.suppress(Exception):  # the server waits for the file: it is written, if empty
            from agentrig.runtime.suite.processes.pool import worker_imports
            from agentrig.runtime.suite.timeouts import budget_of

            budgeted = (
                (names, base_dir, budget_of(self.default_timeout if timeout is None else timeout, turns))
                for names, base_dir, timeout, turns in named
            )
            modules = worker_imports(budgeted, default_deps=self.default_deps, offline=self.offline, cwd=self.here)
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(exist_ok=True)
            _write_atomically(self.path, json.dumps(modules).encode())


def _write_atomically(path: Path, data: bytes) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)  # whole or not there: a worker may look at any moment


class ParseCacheReader:
    """A worker's side: the controller's entries, each used only while its file is unchanged."""

    def __init__(self, directory: str) -> None:
        self.directory = Path(directory)
        self.used = 0
        """Files collected from an entry (tests look)."""

    @classmethod
    def for_worker(cls, workerinput: dict[str, Any]) -> ParseCacheReader | None:
        directory = workerinput.get(WORKER_INPUT_KEY)
        if not isinstance(directory, str) or not os.path.isdir(directory):
            return None  # no controller's cache, or one on another host
        return cls(directory)

    def planned(self) -> bool:
        """The controller is reading scenario files for this session."""
        try:
            return bool(json.loads((self.directory / PLAN_FILE).read_bytes()))
        except (OSError, ValueError):
            return False

    def scenarios(self, resolved: Path, shown: Path) -> list[CachedScenario] | None:
        """The scenarios of the file at `resolved` as the controller read them, or None (read the file)."""
        try:
            data = (self.directory / _entry_name(resolved)).read_bytes()
        except OSError:
            return None
        try:
            entry_shown, entry_stat, scenarios = pickle.loads(data)
        except Exception:  # a cache is never a reason to fail: read the file
            return None
        if entry_shown != str(shown) or entry_stat != _stat_key(resolved):
            return None
        self.used += 1
        return list(scenarios)


def item_modules(engine: str) -> tuple[str, ...]:
    """The modules a scenario item imports before it runs on `engine` (pydantic-ai with the engine)."""
    return (*_ITEM_MODULES, *_ENGINE_MODULES.get(engine, _ENGINE_MODULES["pydantic-ai"]))


def import_for_items(engine: str) -> None:
    """Import what this process's first scenario item imports, now. An import that fails is left for the item,
    which reports it where it always did."""
    with without_cyclic_collection():
        for module in item_modules(engine):
            with contextlib.suppress(Exception):
                importlib.import_module(module)


@contextlib.contextmanager
def without_cyclic_collection() -> Generator[None]:
    """No cyclic collection while pydantic-ai and agentrig are imported: what an import makes lives as long as the
    process, and the collector's passes over it were a quarter of the import's time (as in `agentrig run -j N`'s
    forkserver, `runtime/suite/processes/forkserver_start.py`). Collection is as it was afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
