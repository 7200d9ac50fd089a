"""Running the CLI in-process as `python -m agentrig` would: the real exit code and stderr."""

from __future__ import annotations

import pytest

from agentrig.cli import main


def exit_code_and_stderr(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`main(args)` -> (exit code, stderr). `CliRunner.invoke(app, ...)` cannot show the code of an agentrig error:
    `main` maps each error to its documented code."""
    try:
        main(args)
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    return code, capsys.readouterr().err
