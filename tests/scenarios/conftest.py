"""Fixtures for the scenario format tests: a writer for scenario files and the docs generator module."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

WriteFile = Callable[[str, str], Path]


@pytest.fixture
def write(tmp_path: Path) -> WriteFile:
    """Write a (dedented) file under tmp_path and return its path."""

    def write_file(relative: str, text: str) -> Path:
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
        return target

    return write_file


def load_docs_generator() -> ModuleType:
    """scripts/gen_scenario_docs.py as a module (scripts/ is not a package)."""
    name = "gen_scenario_docs"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "scripts" / "gen_scenario_docs.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def docs_generator() -> ModuleType:
    """The docs generator module."""
    return load_docs_generator()
