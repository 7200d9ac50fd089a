"""`agentrig validate`: check scenario files without running them.

Imports only typer and the standard library at module level; the loader (pydantic + PyYAML, never
pydantic-ai) is imported inside the command so `agentrig --help` stays fast and `validate` never pays
for pydantic-ai.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentrig.errors import printable_path

if TYPE_CHECKING:
    from agentrig.errors import ScenarioError
    from agentrig.scenarios.loader import FileReport, ScenarioWarning, ValidationReport

HELP = """Check scenario files without running them.

Directories are searched recursively for *.yaml and *.yml (skipping golden/, recordings/ and files
starting with _). Every error is printed on one line as FILE:LINE:COLUMN: FIELD: MESSAGE.

Example:

    agentrig validate scenarios/ extra/one.yaml

Exit codes: 0 every file is valid (warnings allowed), 2 any file has an error.
"""


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("validate", help=HELP)
    def validate(  # pyright: ignore[reportUnusedFunction]
        paths: Annotated[
            list[Path] | None,
            typer.Argument(metavar="PATH", help="Scenario files or directories.", show_default="scenarios/"),
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object for machines.")] = False,
    ) -> None:
        from agentrig.scenarios.loader import validation_report

        report = validation_report(paths or [Path("scenarios")])
        if as_json:
            from agentrig.runtime.runfolder.jsonio import dumps

            typer.echo(dumps(report_as_json(report), pretty=True).decode(), nl=False)
        else:
            for line in human_lines(report):
                typer.echo(line)
        if not report.ok:
            raise typer.Exit(code=2)


def human_lines(report: ValidationReport) -> list[str]:
    """`ok  path (N scenarios)` per valid file, one line per error and warning, then a summary."""
    lines: list[str] = []
    for file in report.files:
        if file.ok:
            count = len(file.scenarios)
            lines.append(f"ok     {printable_path(file.path)} ({count} scenario{'' if count == 1 else 's'})")
        lines.extend(f"error  {error.message}" for error in file.errors)
        lines.extend(f"warn   {warning}" for warning in file.warnings)
    lines.append(_summary(report))
    return lines


def _summary(report: ValidationReport) -> str:
    files = len(report.files)
    invalid = sum(not file.ok for file in report.files)
    scenarios = len(report.scenarios)
    parts = [f"{files} file{'' if files == 1 else 's'}", f"{scenarios} valid scenario{'' if scenarios == 1 else 's'}"]
    if invalid:
        errors = len(report.errors)
        parts.append(f"{errors} error{'' if errors == 1 else 's'} in {invalid} file{'' if invalid == 1 else 's'}")
    warnings = len(report.warnings)
    if warnings:
        parts.append(f"{warnings} warning{'' if warnings == 1 else 's'}")
    verdict = "valid" if report.ok else "INVALID"
    return f"{verdict}: {', '.join(parts)}"


def report_as_json(report: ValidationReport) -> dict[str, Any]:
    """The `--json` document: a verdict, per-file results and totals."""
    return {
        "valid": report.ok,
        "files": [_file_as_json(file) for file in report.files],
        "summary": {
            "files": len(report.files),
            "invalid_files": sum(not file.ok for file in report.files),
            "scenarios": len(report.scenarios),
            "errors": len(report.errors),
            "warnings": len(report.warnings),
        },
    }


def _file_as_json(file: FileReport) -> dict[str, Any]:
    return {
        "path": printable_path(file.path.as_posix()),
        "valid": file.ok,
        "scenarios": [
            {"name": loaded.name, "id": loaded.id, "index": loaded.index, "line": loaded.line}
            for loaded in file.scenarios
        ],
        "errors": [_problem_as_json(error.reason, error) for error in file.errors],
        "warnings": [_problem_as_json(warning.message, warning) for warning in file.warnings],
    }


def _problem_as_json(reason: str, problem: ScenarioError | ScenarioWarning) -> dict[str, Any]:
    return {
        "message": str(problem),
        "reason": reason,
        "path": None if problem.path is None else printable_path(Path(problem.path).as_posix()),
        "line": problem.line,
        "column": problem.column,
        "field": problem.field,
    }
