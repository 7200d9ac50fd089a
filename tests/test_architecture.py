"""The dependency rules, enforced (docs/architecture.md draws them).

- `cli -> runtime -> scenarios`; `agentrig.scenarios` needs neither typer nor the runtime.
- Inside `agentrig.runtime` the sub-packages are layers: `runfolder` < `history` < `models` < `engine` < `suite`,
  `matrix` and the flat modules. A module imports only its own layer and the layers below, never one above, not even
  lazily.
- Only `engine` and `models` import an agent framework (pydantic-ai, pydantic-graph, tinyagent). `history`, the
  canonical layer of the removal contract, imports none and nothing of agentrig beyond itself, `runfolder`,
  `agentrig.errors` and `agentrig.media_types` (a table, standard library only); `runfolder`, the run folder's files,
  nothing beyond itself, `agentrig.errors`, `agentrig.input_files` and `agentrig.media_types`.
- `history` holds formats and their conversions: it opens, reads, writes, stats or removes no file itself, only
  through `runfolder` (an AST scan of the calls).
- No import cycle between modules, function-level imports included; no module over 500 lines; at most six modules
  directly in `runtime/`.

Two kinds of check: what importing actually loads (a fresh interpreter), and what the source could import (an AST
scan of every import statement, function bodies included).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE_ROOT = Path(__file__).parents[1] / "src"
PACKAGE = SOURCE_ROOT / "agentrig"
RUNTIME = PACKAGE / "runtime"

FRAMEWORK_PACKAGES = frozenset({"pydantic_ai", "pydantic_graph", "tinyagent"})
"""Top-level import names of the agent frameworks (pydantic-ai-slim, pydantic-graph, tiny-agent-os)."""
PYDANTIC_AI_PACKAGES = frozenset({"pydantic_ai", "pydantic_graph"})

FRAMEWORK_ALLOWED_UNDER = (RUNTIME / "engine", RUNTIME / "models")
"""The only packages whose modules may import an agent framework."""

RUNTIME_LAYERS = {
    "runfolder": 0,
    "history": 1,
    "models": 2,
    "checks": 2,
    "reports": 2,
    "engine": 3,
    "suite": 4,
    "matrix": 4,
    "scaffold": 4,
    "": 4,
}
"""Rank of each runtime sub-package ("" = runtime's flat modules): imports point only to a lower or equal rank."""

MAX_FLAT_RUNTIME_MODULES = 6
MAX_MODULE_LINES = 500


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_path(name: str) -> Path:
    relative = Path(*name.split("."))
    package = SOURCE_ROOT / relative / "__init__.py"
    return package if package.exists() else (SOURCE_ROOT / relative).with_suffix(".py")


def all_modules(package: str) -> list[str]:
    directory = SOURCE_ROOT / Path(*package.split("."))
    return sorted(module_name(path) for path in directory.rglob("*.py"))


def imported_names(path: Path) -> list[tuple[int, str]]:
    """Every module an import statement anywhere in the file names (line, dotted name)."""
    return imported_names_in_source(
        path.read_text(encoding="utf-8"), module_name(path), is_package=path.name == "__init__.py"
    )


def imported_names_in_source(source: str, module: str, *, is_package: bool = False) -> list[tuple[int, str]]:
    """Every module the import statements of `source` name, function bodies included, relative imports resolved.

    `from package import name` yields both `package` and `package.name`, since the name may be a submodule.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            found.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names if alias.name != "*")
    return found


def top_level(name: str) -> str:
    return name.split(".")[0]


CANONICAL_LAYER = tuple(all_modules("agentrig.runtime.history"))
"""The framework-free history layer (the removal contract): the formats of stored state, read, written and checked."""
RUN_FOLDER_LAYER = tuple(all_modules("agentrig.runtime.runfolder"))
"""The run folder's files, below the formats: atomic writes, owned folders and their manifests, locks, temporaries."""

RUN_FOLDER_MAY_IMPORT = frozenset(
    {
        "agentrig",
        "agentrig.errors",
        "agentrig.input_files",
        "agentrig.media_types",
        "agentrig.runtime",
        *RUN_FOLDER_LAYER,
    }
)
"""Inside agentrig, the run folder's package imports only itself, the error module, the reader of input files and
the media types (standard library only)."""
CANONICAL_LAYER_MAY_IMPORT = (RUN_FOLDER_MAY_IMPORT - {"agentrig.input_files"}) | set(CANONICAL_LAYER)
"""The canonical layer imports itself, the run folder's package, the error module and the media types: its files are
read and written through `runfolder` (`test_history_does_no_file_io_but_through_the_run_folder`)."""

AGENTRIG_MODULES = frozenset(all_modules("agentrig"))


def resolve_module(name: str) -> str | None:
    """The agentrig module an imported name refers to (`a.b.Name` -> `a.b`), or None outside agentrig."""
    while name and name not in AGENTRIG_MODULES:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """Module -> the agentrig modules it imports (any import statement, lazy ones included)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = module_name(path)
        targets = {resolve_module(name) for _, name in imported_names(path) if top_level(name) == "agentrig"}
        graph[source] = {target for target in targets if target and target != source}
    return graph


def runtime_layer(module: str) -> str | None:
    """The runtime sub-package a module belongs to ("" for runtime's flat modules), None outside the runtime."""
    parts = module.split(".")
    if parts[:2] != ["agentrig", "runtime"] or len(parts) < 3:
        return None
    return parts[2] if len(parts) > 3 or parts[2] in RUNTIME_LAYERS else ""


# --- what importing loads ------------------------------------------------------------------------------------

PYDANTIC_AI_FREE_IMPORTS = (
    *RUN_FOLDER_LAYER,
    *CANONICAL_LAYER,
    *all_modules("agentrig.scenarios"),
    *all_modules("agentrig.runtime.reports"),  # report.html reads a run's JSON: any front end may call it
    "agentrig.cli",
    # pytest loads the plugin in every session of a project where agentrig is installed: it must stay light.
    "agentrig.pytest_plugin",
    # The loop contract and the engine seam are framework-free: an engine for another framework reuses them.
    "agentrig.runtime.engine.orchestrator",
    "agentrig.runtime.engine.seam",
)
"""Importing all of these together must leave pydantic-ai unloaded (agentrig.cli: `agentrig --help` stays fast)."""


def test_the_canonical_layer_scenarios_and_cli_load_without_pydantic_ai() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {list(PYDANTIC_AI_FREE_IMPORTS)!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(PYDANTIC_AI_PACKAGES)!r}))\n"
    )
    env = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]", f"loaded: {completed.stdout.strip()}"


# --- what the source could import ------------------------------------------------------------------------------


def test_only_the_engine_and_models_packages_import_an_agent_framework() -> None:
    offenders = [
        f"{path.relative_to(SOURCE_ROOT)}:{line}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not any(path.is_relative_to(allowed) for allowed in FRAMEWORK_ALLOWED_UNDER)
        for line, name in imported_names(path)
        if top_level(name) in FRAMEWORK_PACKAGES
    ]
    assert offenders == []


def test_runtime_layers_import_only_downwards() -> None:
    offenders: list[str] = []
    for source, targets in import_graph().items():
        source_layer = runtime_layer(source)
        for target in targets:
            front_end = target.startswith(("agentrig.cli", "agentrig.pytest_plugin", "agentrig.testing"))
            if front_end and source.startswith(("agentrig.runtime", "agentrig.scenarios")):
                offenders.append(f"{source} -> {target}")
                continue
            target_layer = runtime_layer(target)
            if source_layer is None or target_layer is None or source_layer == target_layer:
                continue
            if RUNTIME_LAYERS[target_layer] >= RUNTIME_LAYERS[source_layer]:
                offenders.append(f"{source} -> {target}")
    assert sorted(offenders) == []


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_no_import_cycles_lazy_imports_included() -> None:
    # A package's __init__ importing its own modules is not a cycle worth reporting; nothing else is exempt.
    graph = {
        source: {t for t in targets if not (source.endswith("__init__") or t == source.rpartition(".")[0])}
        for source, targets in import_graph().items()
    }
    assert find_cycles(graph) == []


def test_the_cycle_finder_sees_a_cycle() -> None:
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_runtime_is_sub_packages_with_few_flat_modules() -> None:
    flat = sorted(path.name for path in RUNTIME.glob("*.py") if path.name != "__init__.py")
    assert len(flat) <= MAX_FLAT_RUNTIME_MODULES, flat
    packages = sorted(path.name for path in RUNTIME.iterdir() if (path / "__init__.py").exists())
    assert set(packages) <= set(RUNTIME_LAYERS), packages


def test_no_module_is_over_500_lines() -> None:
    long_modules = {
        str(path.relative_to(SOURCE_ROOT)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long_modules == {}


def test_scenarios_import_neither_typer_nor_the_runtime_nor_the_cli() -> None:
    forbidden = ("typer", "click", "agentrig.runtime", "agentrig.cli")
    offenders = [
        f"{path.relative_to(SOURCE_ROOT)}:{line}: {name}"
        for path in sorted((PACKAGE / "scenarios").rglob("*.py"))
        for line, name in imported_names(path)
        if any(name == banned or name.startswith(f"{banned}.") for banned in forbidden)
    ]
    assert offenders == []


@pytest.mark.parametrize("module", CANONICAL_LAYER + RUN_FOLDER_LAYER)
def test_the_canonical_layer_never_imports_pydantic_ai_even_lazily(module: str) -> None:
    path = module_path(module)
    assert path.exists(), f"{module} is part of the canonical layer but {path} does not exist"
    names = imported_names(path)
    assert [f"{line}: {name}" for line, name in names if top_level(name) in PYDANTIC_AI_PACKAGES] == []
    # Nor through another agentrig module (convert, pydantic_ai_compat, the orchestrator...).
    allowed = RUN_FOLDER_MAY_IMPORT if module in RUN_FOLDER_LAYER else CANONICAL_LAYER_MAY_IMPORT
    outside_the_layer = [
        f"{line}: {name}"
        for line, name in names
        if top_level(name) == "agentrig" and not _allowed_in_canonical_layer(name, allowed)
    ]
    assert outside_the_layer == []


def _allowed_in_canonical_layer(name: str, allowed: frozenset[str] = CANONICAL_LAYER_MAY_IMPORT) -> bool:
    """An allowed module, or a name taken from one (`from agentrig.runtime.history.canonical import Message`)."""
    if name in allowed:
        return True
    parent = name.rpartition(".")[0]
    return parent in allowed and parent not in ("agentrig", "agentrig.runtime")


def test_the_import_scanner_finds_lazy_and_relative_imports() -> None:
    source = "def later():\n    import pydantic_ai.messages\n\nfrom . import wire\nfrom ...cli import app\n"
    names = {name for _, name in imported_names_in_source(source, "agentrig.runtime.history.example")}
    assert {"pydantic_ai.messages", "agentrig.runtime.history.wire", "agentrig.cli.app"} <= names
    assert not _allowed_in_canonical_layer("agentrig.runtime.models.conversion")
    assert not _allowed_in_canonical_layer("agentrig.runtime.models.conversion.to_canonical")
    assert _allowed_in_canonical_layer("agentrig.runtime.history.canonical.Message")
    assert _allowed_in_canonical_layer("agentrig.runtime.runfolder.jsonio.dumps")
    assert not _allowed_in_canonical_layer("agentrig.runtime.history.canonical.Message", RUN_FOLDER_MAY_IMPORT)


# --- history/ holds formats; the run folder's package does the file I/O -----------------------------------------

FILE_IO_MODULES = frozenset({"shutil", "tempfile", "fcntl", "msvcrt", "mmap", "glob", "io", "agentrig.input_files"})
"""Modules whose import means file I/O (`io` too: `io.open` is `open`)."""
OS_NAMES_WITHOUT_IO = frozenset({"environ", "getenv", "fspath", "sep", "linesep", "PathLike"})
"""The only `os` names a history module may use: the environment and path spelling, no file system call."""
PATH_IO_METHODS = frozenset(
    {
        *("open", "read_text", "read_bytes", "write_text", "write_bytes", "touch", "mkdir", "rmdir", "unlink"),
        *("iterdir", "glob", "rglob", "walk", "exists", "is_file", "is_dir", "is_symlink", "is_fifo", "stat"),
        *("lstat", "chmod", "lchmod", "symlink_to", "hardlink_to", "readlink", "samefile", "resolve", "absolute"),
        *("fileno", "flush", "truncate", "seek"),
    }
)
"""Methods of `pathlib.Path` (and of open files) that reach the file system; `rename` and `replace` too, told from
`str.replace(old, new)` by their single argument."""


def file_io_calls(source: str) -> list[str]:
    """Each place in `source` that touches the file system itself: a call of `open`, a `Path` method that reads,
    writes, stats or lists, any `os` name but the environment's and the path's spelling, an import of a module
    that does file I/O (`FILE_IO_MODULES`)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found.extend(f"{node.lineno}: import {name}" for name in names if name in FILE_IO_MODULES)
            if isinstance(node, ast.ImportFrom) and node.module == "os":
                found.extend(f"{node.lineno}: from os import {alias.name}" for alias in node.names)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os":
            if node.attr not in OS_NAMES_WITHOUT_IO:
                found.append(f"{node.lineno}: os.{node.attr}")
        elif isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name) and function.id == "open":
                found.append(f"{node.lineno}: open()")
            elif isinstance(function, ast.Attribute) and not (
                isinstance(function.value, ast.Name) and function.value.id == "os"  # counted as an os name above
            ):
                one_argument = len(node.args) == 1 and not node.keywords
                renames = function.attr in ("rename", "replace") and one_argument
                if function.attr in PATH_IO_METHODS or renames:
                    found.append(f"{node.lineno}: .{function.attr}()")
    return sorted(found, key=lambda place: int(place.partition(":")[0]))


@pytest.mark.parametrize("module", CANONICAL_LAYER)
def test_history_does_no_file_io_but_through_the_run_folder(module: str) -> None:
    path = module_path(module)
    assert file_io_calls(path.read_text(encoding="utf-8")) == [], f"{module}: through agentrig.runtime.runfolder"


def test_the_file_io_scan_sees_each_kind() -> None:
    source = (
        "import os, shutil\nfrom os import replace\nfrom agentrig.input_files import read_input_file\n"
        "def f(path, text, session):\n"
        "    open(path)\n    path.write_bytes(b'')\n    path.is_file()\n    os.unlink(path)\n"
        "    path.replace(path)\n    os.environ.get('A')\n    text.replace('a', 'b')\n    session.replace(x=1)\n"
    )
    assert file_io_calls(source) == [
        "1: import shutil",
        "2: from os import replace",
        "3: import agentrig.input_files",
        "5: open()",
        "6: .write_bytes()",
        "7: .is_file()",
        "8: os.unlink",
        "9: .replace()",
    ]


# --- CLI verb modules stay light at import time -------------------------------------------------------------


CLI_MODULE_LEVEL_MAY_IMPORT = ("typer", "click", "agentrig", "agentrig.cli", "agentrig.errors")
"""At module level a CLI verb imports typer and the standard library; the engine is imported inside the command."""


def module_level_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.append((node.lineno, node.module or ""))
    return found


def test_cli_modules_import_only_typer_and_the_standard_library_at_module_level() -> None:
    offenders = [
        f"{path.relative_to(SOURCE_ROOT)}:{line}: {name}"
        for path in sorted((PACKAGE / "cli").rglob("*.py"))
        for line, name in module_level_imports(path)
        if top_level(name) not in sys.stdlib_module_names and name not in CLI_MODULE_LEVEL_MAY_IMPORT
    ]
    assert offenders == []
