"""The dependency rules, enforced: `cli -> runtime -> scenarios`; only `agentrig.runtime` touches pydantic-ai;
the canonical history layer never does, not even lazily inside a function; `agentrig.scenarios` needs no typer.

Two checks: what importing actually loads (a fresh interpreter), and what the source could import (an AST scan of
every import statement, function bodies included).
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

PYDANTIC_AI_PACKAGES = frozenset({"pydantic_ai", "pydantic_graph"})
"""Top-level names of pydantic-ai's distributions (pydantic-ai-slim, pydantic-graph)."""

PYDANTIC_AI_ALLOWED_UNDER = PACKAGE / "runtime"
"""The only package whose modules may import pydantic-ai."""

CANONICAL_LAYER = (
    "agentrig.runtime.canonical",
    "agentrig.runtime.wire",
    "agentrig.runtime.jsonio",
    "agentrig.runtime.history_ops",
    "agentrig.runtime.invariants",
    "agentrig.runtime.registry",
    "agentrig.runtime.sessions",
    "agentrig.runtime.usage",
    "agentrig.runtime.records",
    "agentrig.runtime.redaction",
)
"""The pydantic-ai-free history layer (the removal contract): these read, write and check stored state without it."""

CANONICAL_LAYER_MAY_IMPORT = frozenset({"agentrig", "agentrig.errors", "agentrig.runtime", *CANONICAL_LAYER})
"""Inside agentrig, the canonical layer imports only itself and the error module."""


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


# --- what importing loads ------------------------------------------------------------------------------------

PYDANTIC_AI_FREE_IMPORTS = (*CANONICAL_LAYER, *all_modules("agentrig.scenarios"), "agentrig.cli")
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


def test_only_the_runtime_imports_pydantic_ai() -> None:
    offenders = [
        f"{path.relative_to(SOURCE_ROOT)}:{line}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.is_relative_to(PYDANTIC_AI_ALLOWED_UNDER)
        for line, name in imported_names(path)
        if top_level(name) in PYDANTIC_AI_PACKAGES
    ]
    assert offenders == []


def test_scenarios_import_neither_typer_nor_the_runtime_nor_the_cli() -> None:
    forbidden = ("typer", "click", "agentrig.runtime", "agentrig.cli")
    offenders = [
        f"{path.relative_to(SOURCE_ROOT)}:{line}: {name}"
        for path in sorted((PACKAGE / "scenarios").rglob("*.py"))
        for line, name in imported_names(path)
        if any(name == banned or name.startswith(f"{banned}.") for banned in forbidden)
    ]
    assert offenders == []


@pytest.mark.parametrize("module", CANONICAL_LAYER)
def test_the_canonical_layer_never_imports_pydantic_ai_even_lazily(module: str) -> None:
    path = module_path(module)
    assert path.exists(), f"{module} is part of the canonical layer but {path} does not exist"
    names = imported_names(path)
    assert [f"{line}: {name}" for line, name in names if top_level(name) in PYDANTIC_AI_PACKAGES] == []
    # Nor through another agentrig module (convert, pydantic_ai_compat, the orchestrator...).
    outside_the_layer = [
        f"{line}: {name}"
        for line, name in names
        if top_level(name) == "agentrig" and not _allowed_in_canonical_layer(name)
    ]
    assert outside_the_layer == []


def _allowed_in_canonical_layer(name: str) -> bool:
    """An allowed module, or a name taken from one (`from agentrig.runtime.canonical import Message`)."""
    if name in CANONICAL_LAYER_MAY_IMPORT:
        return True
    parent = name.rpartition(".")[0]
    return parent in CANONICAL_LAYER_MAY_IMPORT and parent not in ("agentrig", "agentrig.runtime")


def test_the_import_scanner_finds_lazy_and_relative_imports() -> None:
    source = "def later():\n    import pydantic_ai.messages\n\nfrom . import jsonio\nfrom ..cli import app\n"
    names = {name for _, name in imported_names_in_source(source, "agentrig.runtime.example")}
    assert {"pydantic_ai.messages", "agentrig.runtime.jsonio", "agentrig.cli.app"} <= names
    assert not _allowed_in_canonical_layer("agentrig.runtime.convert")
    assert not _allowed_in_canonical_layer("agentrig.runtime.convert.to_canonical")
    assert _allowed_in_canonical_layer("agentrig.runtime.canonical.Message")


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
