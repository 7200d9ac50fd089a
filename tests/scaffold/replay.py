"""Shared by the scaffold tests: write a scenario from a source, run it with the real runner, read the verdict."""

from __future__ import annotations

from pathlib import Path

from agentrig.runtime.history.run_records import ScenarioResult
from agentrig.runtime.scaffold import ScaffoldOptions, ScaffoldResult, scaffold
from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite

REPO = Path(__file__).resolve().parents[2]


def scaffold_to(source: Path, directory: Path, **options: object) -> ScaffoldResult:
    """`agentrig scaffold SOURCE -o DIRECTORY/replay.yaml` with these options."""
    return scaffold(ScaffoldOptions(source=source, output=directory / "replay.yaml", **options))  # pyright: ignore[reportArgumentType]


def run_scenario(path: Path, out: Path | None = None) -> ScenarioResult:
    """The one scenario in `path`, run offline by `agentrig run`'s runner."""
    (result,) = run_suite(RunOptions(paths=(path,), out_dir=out)).results
    return result


def failures(result: ScenarioResult) -> list[str]:
    """The failed checks and the error, for assertion messages."""
    lines = [f"{check.name}: {check.detail or check.actual}" for check in result.checks if not check.passed]
    if result.error is not None:
        lines.append(f"error {result.error.kind}: {result.error.message}")
    return lines
