"""The test suite itself: settings and patterns that would let a test pass without checking what it claims."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import settings

TESTS = Path(__file__).parent


def _test_modules() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(TESTS.rglob("test_*.py"))]


def test_hypothesis_runs_without_deadlines() -> None:
    # A deadline turns a slow example on a loaded machine into a red test that says nothing about the code.
    assert settings.default is not None
    assert settings.default.deadline is None


def test_no_module_skips_itself_on_import() -> None:
    # A module-level importorskip turns an import error into a silently skipped module instead of a failure.
    offenders = [
        f"{path.relative_to(TESTS)}:{node.lineno}"
        for path, module in _test_modules()
        for node in module.body
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and "importorskip" in ast.unparse(node)
    ]
    assert offenders == []


def test_tests_named_exits_n_assert_that_exact_code() -> None:
    # `..._exits_2` asserting only `!= 0` also passes for a traceback's exit 1.
    offenders: list[str] = []
    for path, module in _test_modules():
        for node in ast.walk(module):
            if not isinstance(node, ast.FunctionDef) or "_exits_" not in node.name:
                continue
            code = node.name.split("_exits_")[1].split("_")[0]
            if not code.isdigit():
                continue
            source = ast.unparse(node)
            if f"== {code}" not in source or "!= 0" in source:
                offenders.append(f"{path.relative_to(TESTS)}::{node.name}")
    assert offenders == []
