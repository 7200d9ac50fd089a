"""A session that was asked for scenarios runs them, or says why not: never a green run that silently ran none.

pytest finds its rootdir and ini file from the command line's paths *before* it loads the plugins of installed
packages, so it does not know yet that `--agentrig-out DIR` takes a value: an existing DIR is taken for a test
path, and when DIR lies outside the project pytest looks for the ini file above DIR, never finds the project's,
and runs with defaults (no `agentrig_scenarios`, no `testpaths`): the scenarios are silently not collected.
`check_path_options` (at `pytest_load_initial_conftests`, the first hook that sees the parsed options) finds
that out and stops with a usage error naming the `--agentrig-out=DIR` form. A path option cannot be made known
earlier: pytest parses the command line for its configuration before any installed plugin is loaded (pytest
8 and 9), and `addini` values come from the very file pytest failed to find.

`asked_for_scenarios` and `nothing_collected` are the net under it: a session given `--agentrig-out` (or
`--agentrig-engine`) on its command line, or whose collection reaches the `agentrig_scenarios` it configures, and
that collected no scenario item, is a usage error (exit 4). `unreached_roots` warns when `testpaths` keeps pytest
away from them.
"""

from __future__ import annotations

import inspect
import os
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "AgentrigConfigWarning",
    "asked_for_scenarios",
    "check_path_options",
    "nothing_collected",
    "unreached_roots",
]

PATH_OPTIONS = ("--agentrig-out", "--agentrig-recordings")
"""The plugin's options whose value is a path: in the `--option DIR` form, pytest's first parse takes DIR for a
test path."""

DEFAULT_ROOTS = ("scenarios",)
"""The `agentrig_scenarios` default (as `agentrig run` reads `scenarios/` by default)."""


class AgentrigConfigWarning(pytest.PytestWarning):
    """agentrig's plugin configuration will not do what it seems to (e.g. `testpaths` keeps its scenarios out)."""


def _command_line(config: pytest.Config) -> list[str]:
    """The arguments the user gave: PYTEST_ADDOPTS and the command line (not the ini's `addopts`)."""
    return [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *map(str, config.invocation_params.args)]


def _space_form_values(arguments: Sequence[str]) -> list[tuple[str, str]]:
    """(option, value) of each path option given as `--option VALUE` (two arguments)."""
    return [
        (argument, arguments[index + 1])
        for index, argument in enumerate(arguments[:-1])
        if argument in PATH_OPTIONS and not arguments[index + 1].startswith("-")
    ]


def _setup_without(config: pytest.Config, namespace: Any) -> tuple[Path, Path | None] | None:
    """The rootdir and ini file pytest would have found had it known the plugin's options (the positional
    arguments of the full parse), or None when pytest's `determine_setup` cannot be called as expected."""
    try:
        from _pytest.config.findpaths import determine_setup

        accepted = inspect.signature(determine_setup).parameters
        given: dict[str, Any] = {
            "inifile": getattr(namespace, "inifilename", None),
            "override_ini": getattr(namespace, "override_ini", None),  # pytest 9
            "args": [str(arg) for arg in getattr(namespace, "file_or_dir", None) or ()],
            "rootdir_cmd_arg": getattr(namespace, "rootdir", None) or None,
            "invocation_dir": config.invocation_params.dir,
        }
        found = determine_setup(**{key: value for key, value in given.items() if key in accepted})
        return Path(found[0]), None if found[1] is None else Path(found[1])
    except Exception:  # a pytest whose private setup finder changed: no check rather than a wrong one
        return None


def check_path_options(config: pytest.Config) -> None:
    """A usage error when `--agentrig-out DIR` (or `--agentrig-recordings DIR`) made pytest find another rootdir or
    ini file than it finds without DIR (see the module docstring)."""
    given = _space_form_values(_command_line(config))
    if not given:
        return
    expected = _setup_without(config, config.known_args_namespace)
    if expected is None or expected == (config.rootpath, config.inipath):
        return
    option, value = given[0]
    found_ini = str(config.inipath) if config.inipath is not None else "no ini file"
    expected_ini = str(expected[1]) if expected[1] is not None else "no ini file"
    raise pytest.UsageError(
        f"{option} {value}: pytest took {value} for a test path while it looked for its configuration (its options"
        f" are not known then), and found rootdir {config.rootpath} with {found_ini} instead of rootdir"
        f" {expected[0]} with {expected_ini}; write {option}={value}"
    )


SCENARIO_ITEM_OPTIONS = ("--agentrig-out", "--agentrig-engine")
"""The options only scenario items use: the others (`--agentrig-update-golden`, `--agentrig-model`, ...) also
apply to the `agentrig_scenario` fixture, which a session without scenario items may use alone."""


def _given_options(config: pytest.Config) -> list[str]:
    """The scenario items' options on the command line itself (or PYTEST_ADDOPTS), by name."""
    given = {argument.split("=")[0] for argument in _command_line(config)}
    return sorted(given & set(SCENARIO_ITEM_OPTIONS))


def configured_roots(config: pytest.Config) -> bool:
    """Whether the ini sets `agentrig_scenarios` to something else than its default."""
    return tuple(config.getini("agentrig_scenarios")) != DEFAULT_ROOTS


def _collection_paths(config: pytest.Config) -> list[Path]:
    here = config.invocation_params.dir
    return [(here / str(arg).split("::")[0]).resolve() for arg in config.args]


def _reaches(paths: Iterable[Path], root: Path) -> bool:
    return any(root == path or root.is_relative_to(path) or path.is_relative_to(root) for path in paths)


def asked_for_scenarios(config: pytest.Config, roots: Sequence[Path]) -> str | None:
    """Why this session is expected to run scenarios (a phrase for the error), or None."""
    options = _given_options(config)
    if options:
        return f"given {', '.join(options)}"
    paths = _collection_paths(config)
    reached = [root for root in roots if _reaches(paths, root)]
    if configured_roots(config) and reached:
        return f"its collection reaches agentrig_scenarios ({', '.join(map(str, reached))})"
    return None


def nothing_collected(config: pytest.Config, roots: Sequence[Path], why: str) -> str:
    """The one line of the usage error of a session asked for scenarios that collected none."""
    ini = str(config.inipath) if config.inipath is not None else "no ini file"
    shown = ", ".join(str(root) for root in roots) or "none (agentrig_scenarios is empty)"
    return (
        f"agentrig: this session was asked for scenarios ({why}) but collected none: no scenario file under"
        f" {shown} was reached (rootdir {config.rootpath}, {ini}); name the scenario paths, or set agentrig_scenarios"
        " in the ini file (docs/pytest.md#what-is-collected)"
    )


def unreached_roots(config: pytest.Config, roots: Sequence[Path]) -> list[Path]:
    """The existing `agentrig_scenarios` paths pytest's `testpaths` keep it from collecting (only when the
    collection comes from `testpaths`: paths named on the command line are the user's choice)."""
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return []
    paths = _collection_paths(config)
    return [root for root in roots if root.exists() and not _reaches(paths, root)]
