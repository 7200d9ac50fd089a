"""`--help` shows the Examples blocks line by line as written, escapes nothing, and names paths that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentrig.cli import main

REPO = Path(__file__).parents[2]
VERBS = ["run", "diff", "merge", "check", "convert", "validate", "prompt", "matrix", "schema"]


def _help(verb: str, capsys: pytest.CaptureFixture[str]) -> str:
    code: object = 0
    try:
        main([verb, "--help"])
    except SystemExit as exit_:
        code = exit_.code
    assert code in (0, None)
    return capsys.readouterr().out


@pytest.mark.parametrize("verb", VERBS)
def test_example_lines_are_kept_as_written(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(verb, capsys)
    lines = [line.strip() for line in text.splitlines()]
    examples = [line for line in lines if line.startswith("agentrig ")]
    for example in examples:  # a re-wrapped block runs two commands into one line, or splits one over two
        assert example.split("#")[0].count("agentrig ") == 1, example
    assert "\\[" not in text
    assert "\\b" not in text


@pytest.mark.parametrize("verb", VERBS)
def test_example_paths_into_the_repository_exist(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(verb, capsys)
    for path in re.findall(r"(?<![\w/-])(scenarios/[\w./-]+)", text):
        if "NAME" not in path:  # `scenarios/NAME/...` inside an output directory is a placeholder
            assert (REPO / path).exists(), path
