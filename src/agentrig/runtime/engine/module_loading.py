"""Resolve a `module:attribute` name from a scenario (an agent, a factory, a deps builder).

The module is imported with the scenario's directory and the current directory in front of `sys.path`
(only while importing). Failures are the caller's `ScenarioError` (naming the file, line and field).
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentrig.errors import ScenarioError
from agentrig.runtime.engine import warning_capture

__all__ = ["on_sys_path", "resolve_attribute", "sys_exit_hint"]


def sys_exit_hint(exit_: SystemExit) -> str:
    """What to add to the message when user code called `sys.exit()` while agentrig loaded or called it."""
    # argparse exits with 2 on arguments it does not know: at import time it parses agentrig's command line.
    return " (an argparse parser run at import time reads agentrig's own command line)" if exit_.code == 2 else ""


@contextmanager
def on_sys_path(paths: Sequence[Path]) -> Generator[None]:
    """`paths` in front of `sys.path` for the duration of the block (those not there already)."""
    added = [str(p.resolve()) for p in paths if str(p.resolve()) not in sys.path]
    sys.path[:0] = added
    try:
        yield
    finally:
        for entry in added:
            if entry in sys.path:
                sys.path.remove(entry)


def _import_module(module_name: str, fail: Callable[[str], ScenarioError]) -> Any:
    # What the import warns belongs to the module, and so to every scenario naming it: this one, and those of a
    # process that finds it imported already (the forkserver imported it for every `-j N` worker).
    try:
        with warning_capture.importing(module_name):
            module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            raise fail(
                f"module {module_name!r} not found (searched the scenario's directory, the current directory"
                " and sys.path)"
            ) from None
        raise fail(f"importing {module_name!r} failed: {error}") from None
    except Exception as error:  # the user's module may raise anything while importing
        raise fail(f"importing {module_name!r} failed: {type(error).__name__}: {error}") from None
    except SystemExit as exit_:  # sys.exit() or argparse at import time must not end agentrig's run
        raise fail(f"importing {module_name!r} called sys.exit({exit_.code!r}){sys_exit_hint(exit_)}") from None
    warning_capture.add_module_warnings(module_name)
    return module


def resolve_attribute(spec: str, *, search_paths: Sequence[Path], fail: Callable[[str], ScenarioError]) -> Any:
    """The value `module:attribute` names (a dotted attribute path is allowed)."""
    module_name, _, attribute_path = spec.partition(":")
    if not module_name or not attribute_path:
        raise fail(f"{spec!r} is not of the form module:attribute")
    with on_sys_path(search_paths):
        value: Any = _import_module(module_name, fail)
    for attribute in attribute_path.split("."):
        names = dir(value)
        if attribute not in names:
            raise fail(f"module {module_name!r} has no attribute {attribute_path!r}{_close_name(attribute, names)}")
        value = getattr(value, attribute)
    return value


def _close_name(given: str, names: Sequence[str]) -> str:
    """`; did you mean 'build_deps'?` for a typo of one of `names` (dunder names are never offered)."""
    close = difflib.get_close_matches(given, [name for name in names if not name.startswith("__")], n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""
