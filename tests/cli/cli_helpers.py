"""Running the CLI in-process as `python -m agentrig` would: the real exit code, stdout and stderr."""

from __future__ import annotations

import pytest

from agentrig.cli import main


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`main(args)` -> (exit code, stdout, stderr). `CliRunner.invoke(app, ...)` cannot show the code of an
    agentrig error: `main` maps each error to its documented code."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def exit_code_and_stderr(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`main(args)` -> (exit code, stderr)."""
    code, _, err = run_main(capsys, *args)
    return code, err
