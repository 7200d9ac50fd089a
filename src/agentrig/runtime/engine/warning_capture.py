"""Warnings as data: each warning the `warnings` machinery shows while a scenario (or a prompt) runs is recorded for
it, whatever raised it: pydantic-ai, a provider SDK, the user's agent or its tools.

    with capturing(owner=loaded, show=False):    # around one scenario's run
        ...
    take_warnings(loaded)                        # its `WarningRecord`s: one per distinct warning, counted, sorted

Where the capture sits: in the display step of the machinery, `warnings._showwarnmsg`, wrapped once per process
(CPython's C `warn` looks it up on the `warnings` module for each warning it shows; tested on 3.11). So a warning is
recorded exactly when Python would show it, after the filters: `-W`, PYTHONWARNINGS, pytest's filterwarnings and the
agent's own `warnings.filterwarnings`. One they ignore is not recorded; one an `error` filter turns into an
exception never reaches the display (it is raised where the warning was, and is the scenario's error as before).
`catch_warnings` swaps `showwarning` and `_showwarnmsg_impl`, never `_showwarnmsg`, so the capture sits above pytest's
recording of a test's warnings and above a `catch_warnings(record=True)` of the agent's own, and passes each warning
on to them with `show` (`agentrig run` does not: its reports hold them; `prompt` says each in one line of its own).

Which scenario a warning belongs to:
1. the one whose context raised it: the scenario's tasks, and the threads pydantic-ai runs its sync tools in (it
   copies the calling context into them, 2.38-2.78: `_utils.run_in_executor`);
2. else (a thread the agent started itself, or the run's own threads) the one capture open in the process, if only
   one is; with scenarios side by side (`--max-concurrency` against a real model) such a warning is nobody's;
3. one raised while a module a scenario names (`agent:`, `deps:`, any `module:attribute`) is imported belongs to
   that module (`importing`): every scenario that names the module lists it, whichever scenario or process
   imported it first (at `-j N` the forkserver does, before any scenario runs, as pytest -n's warm server does).
A warning that is nobody's (before the first scenario, from a thread of a scenario that has ended) gets Python's own
display.

Once per place: the `default` action shows a warning once per place it is raised at (`module` once per module,
`once` once), and the machinery's memory of that is the process's (`_forget_place`). Here it is each scenario's: a
scenario records what it would alone in a fresh process, whatever ran before it or beside it, as pytest shows each
test's warnings. `count` is how many times it was shown in the scenario: once per place under `default`, every call
under `always`.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import threading
import warnings
from collections.abc import Callable, Generator, Iterable
from contextvars import ContextVar
from pathlib import PurePath
from types import FrameType
from typing import Any

from agentrig.runtime.history.warning_records import WarningRecord, merge_warnings

__all__ = [
    "WarningCapture",
    "add_module_warnings",
    "capture_here",
    "capturing",
    "current_warnings",
    "importing",
    "take_warnings",
]

_DISPLAY = "_showwarnmsg"
"""The `warnings` module's display step: called with each `WarningMessage` the filters let through."""

_lock = threading.Lock()


class WarningCapture:
    """The warnings shown while one scenario (or prompt, or module import) ran."""

    def __init__(self, *, show: bool) -> None:
        self.show = show
        """Also pass each warning on to what shows it without agentrig (stderr, pytest's warnings summary)."""
        self.closed = False
        """Its scenario has ended: what its threads raise from now on is nobody's."""
        self.shown: set[tuple[object, ...]] = set()
        """The places the filters' `default`, `module` and `once` actions showed a warning at in this scenario."""
        self._counts: dict[tuple[str, str, str], int] = {}
        self._modules: set[str] = set()

    def add(self, key: tuple[str, str, str], count: int = 1) -> None:
        with _lock:
            self._counts[key] = self._counts.get(key, 0) + count

    def extend(self, records: Iterable[WarningRecord]) -> None:
        for record in records:
            self.add(record.key, record.count)

    def add_import(self, module: str, records: Iterable[WarningRecord]) -> None:
        """What importing `module` raised, once however often the scenario names the module."""
        with _lock:
            if module in self._modules:
                return
            self._modules.add(module)
        self.extend(records)

    def records(self) -> tuple[WarningRecord, ...]:
        """What it holds: one record per distinct warning, sorted."""
        with _lock:
            counts = dict(self._counts)
        return merge_warnings(
            WarningRecord(category=category, message=message, module=module, count=count)
            for (category, message, module), count in counts.items()
        )


_current: ContextVar[WarningCapture | None] = ContextVar("agentrig_warning_capture", default=None)
_open: list[WarningCapture] = []
"""The scenario captures open in this process (not the imports'), for a warning raised outside any of them."""
_owned: dict[int, tuple[object, WarningCapture]] = {}
"""Each capture by what it was opened for (a scenario, by identity), until its records are taken."""
_imported: dict[str, tuple[WarningRecord, ...]] = {}
"""What importing each module a scenario named raised, in this process or the one it was forked from."""
_module_of_file: dict[str, str] = {}
_shown_outside: set[tuple[object, ...]] = set()
"""The places a warning no scenario owns was shown at (`WarningCapture.shown`, for the rest of the process)."""
_passed_on: list[Callable[[warnings.WarningMessage], None]] = []
"""The display the capture wraps (the standard library's, which honours `showwarning` and `catch_warnings`)."""


def _install() -> None:
    """Wrap the `warnings` display, once per process (a forked worker inherits the wrapped one), and make the filters
    forget what they showed before (`_forget_place` keeps them from remembering anything from now on)."""
    with _lock:
        display: Any = getattr(warnings, _DISPLAY)
        if display is _display:
            return
        _passed_on[:] = [display]
        setattr(warnings, _DISPLAY, _display)
    _forget_shown()


def _display(message: warnings.WarningMessage) -> None:
    frame = _warning_frame(message)
    place = _forget_place(message, frame)  # first, before another thread can find it remembered
    capture = _owner()
    shown = capture.shown if capture is not None else _shown_outside
    if place is not None:
        with _lock:
            if place in shown:
                return  # shown already in this scenario (outside any: in this process), as Python would not again
            shown.add(place)
    if capture is not None:
        capture.add((message.category.__name__, str(message.message), _module_of(message, frame)))
        if not capture.show:
            return
    _passed_on[0](message)


def _forget_place(message: warnings.WarningMessage, frame: FrameType | None) -> tuple[object, ...] | None:
    """Make the filters forget they showed this warning here, and say what they remembered (None: nothing, as for
    the `always` action).

    The machinery remembers a shown warning before it displays it: in the `__warningregistry__` of the module it is
    attributed to, by text, category and line (the `default` action), also by text and category (`module`), or in
    `warnings.onceregistry` (`once`), and shows it there no more. That memory is the process's, shared by scenarios
    running side by side: the second to warn at a place would record nothing. So the memory moves here, one per
    scenario (`WarningCapture.shown`), and one for what no scenario owns."""
    text, category = str(message.message), message.category
    registry: Any = frame.f_globals.get("__warningregistry__") if frame is not None else None
    once: Any = getattr(warnings, "onceregistry", None)
    remembered_once = isinstance(once, dict) and once.pop((text, category), None) is not None  # pyright: ignore[reportUnknownMemberType]
    if not isinstance(registry, dict):
        return ("once", text, category) if remembered_once else None
    here = registry.pop((text, category, message.lineno), None) is not None  # pyright: ignore[reportUnknownMemberType]
    # The module action's key: (text, category) in C, (text, category, 0) in the pure-Python `warnings`.
    in_module = registry.pop((text, category), None) is not None  # pyright: ignore[reportUnknownMemberType]
    in_module = registry.pop((text, category, 0), None) is not None or in_module  # pyright: ignore[reportUnknownMemberType]
    if remembered_once:
        return ("once", text, category)
    if in_module:
        return ("module", text, category, id(registry))  # pyright: ignore[reportUnknownArgumentType]
    if here:
        return ("default", text, category, message.lineno, id(registry))  # pyright: ignore[reportUnknownArgumentType]
    return None


def _owner() -> WarningCapture | None:
    capture = _current.get()
    if capture is not None:
        return None if capture.closed else capture
    with _lock:
        return _open[0] if len(_open) == 1 else None


def _warning_frame(message: warnings.WarningMessage) -> FrameType | None:
    """The frame the machinery attributed the warning to (its module's filters and registry are that frame's), still
    on the stack, found by its file and line."""
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_lineno == message.lineno and frame.f_code.co_filename == message.filename:
            return frame
        frame = frame.f_back
    return None


def _module_of(message: warnings.WarningMessage, frame: FrameType | None) -> str:
    """The module the machinery attributed the warning to: the `__name__` its filters match."""
    name = frame.f_globals.get("__name__") if frame is not None else None
    return name if isinstance(name, str) else _module_named_by_file(message.filename)


def _module_named_by_file(filename: str) -> str:
    """A warning whose frame is gone (`warn_explicit` with a file of its own): the imported module of that file, or
    the file's name without its folder (the machinery would use the path, which differs from machine to machine);
    `sys` when the warning's stack level went past the stack, as the machinery says."""
    known = _module_of_file.get(filename)
    if known is not None:
        return known
    for name, module in list(sys.modules.items()):
        if getattr(module, "__file__", None) == filename:
            _module_of_file[filename] = name
            return name
    return PurePath(filename).stem or filename


def _forget_shown() -> None:
    """The filters' memory of what they showed already, forgotten: the next `default` warning is shown again."""
    mutated: Any = getattr(warnings, "_filters_mutated", None)
    if callable(mutated):  # 3.11-3.13: bumps the filters' version, which empties every `__warningregistry__`
        mutated()
    else:
        with warnings.catch_warnings():  # which does the same on its way in and out
            pass
    once: Any = getattr(warnings, "onceregistry", None)
    if isinstance(once, dict):
        once.clear()  # pyright: ignore[reportUnknownMemberType]


@contextlib.contextmanager
def capturing(*, show: bool = True, owner: object | None = None) -> Generator[WarningCapture]:
    """Record the warnings shown while the block runs (and by what it starts, above). `owner` (a scenario) names the
    capture for `take_warnings`, also from another thread (a timeout the run's watcher gives)."""
    _install()
    capture = WarningCapture(show=show)
    token = _current.set(capture)
    with _lock:
        _open.append(capture)
        if owner is not None:
            _owned[id(owner)] = (owner, capture)
    try:
        yield capture
    finally:
        _current.reset(token)
        _close(capture)


def _close(capture: WarningCapture) -> None:
    with _lock:
        capture.closed = True
        if capture in _open:
            _open.remove(capture)


def take_warnings(owner: object) -> tuple[WarningRecord, ...]:
    """The warnings of the capture opened for `owner` (none if there is none), which ends: a scenario the run has
    given up on (a timeout) records nothing more."""
    with _lock:
        entry = _owned.get(id(owner))
        if entry is None or entry[0] is not owner:
            return ()
        del _owned[id(owner)]
    _close(entry[1])
    return entry[1].records()


def current_warnings() -> tuple[WarningRecord, ...]:
    """What the capture of this context holds so far (none outside one)."""
    capture = _current.get()
    return capture.records() if capture is not None else ()


@contextlib.contextmanager
def capture_here(*, show: bool = True) -> Generator[WarningCapture]:
    """The capture already open in this context (a front end's: `agentrig prompt` opens one), or one for the block."""
    capture = _current.get()
    if capture is not None and not capture.closed:
        yield capture
        return
    with capturing(show=show) as opened:
        yield opened


@contextlib.contextmanager
def importing(module: str) -> Generator[None]:
    """Around the import of a module a scenario names: what the import raises is the module's (`add_module_warnings`
    gives it to each scenario naming it). An import that fails leaves it to the scenario it ran in (the next import
    tries again, and warns again)."""
    if module in sys.modules:
        yield
        return
    _install()
    enclosing = _current.get()
    live = enclosing is not None and not enclosing.closed
    capture = WarningCapture(show=enclosing.show if enclosing is not None and live else False)
    token = _current.set(capture)
    imported = False
    try:
        yield
        imported = True
    finally:
        _current.reset(token)
        capture.closed = True
        if imported:
            _imported[module] = capture.records()
        elif enclosing is not None and live:
            enclosing.extend(capture.records())


def add_module_warnings(module: str) -> None:
    """Give the scenario of this context what importing `module` raised, once per scenario however often it names
    it."""
    capture = _current.get()
    records = _imported.get(module)
    if capture is not None and not capture.closed and records:
        capture.add_import(module, records)
