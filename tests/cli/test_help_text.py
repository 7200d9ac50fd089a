"""`--help` shows the Examples blocks line by line as written, escapes nothing, and names paths that exist."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest

from agentrig.cli import main
from tests.cli.cli_helpers import run_main

REPO = Path(__file__).parents[2]
VERBS = ["run", "diff", "merge", "check", "convert", "validate", "prompt", "matrix", "schema", "report", "scaffold"]


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


def _documented_exit_codes(text: str) -> set[int]:
    """The codes the `Exit codes:` paragraph of a --help names."""
    paragraph = text[text.index("Exit codes:") :].split("\n\n")[0]
    return {int(code) for code in re.findall(r"(?<![\w.-])(0|1|2|3|130|143)(?![\w.-])", paragraph)}


def _no_space(descriptor: int) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("verb", ["report", "convert", "schema", "scaffold"])
def test_the_help_names_the_code_a_full_disk_exits_with(
    verb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `report --help` said 2 where a full disk exits 3 (issue 27, item 4): the code is taken from a real run.
    history = tmp_path / "history.json"
    history.write_text(
        '[{"kind": "request", "parts": [{"part_kind": "text", "content": "hi"}]},'
        ' {"kind": "response", "parts": [{"part_kind": "text", "content": "hello"}]}]',
        encoding="utf-8",
    )
    run_dir = tmp_path / "run"
    argv = {
        "report": ["report", str(run_dir)],
        "convert": ["convert", str(history), "-o", str(tmp_path / "out.json")],
        "schema": ["schema", "-o", str(tmp_path / "schema.json")],
        "scaffold": ["scaffold", str(history), "-o", str(tmp_path / "suite" / "s.yaml")],
    }[verb]
    if verb == "report":
        scenarios = tmp_path / "scenarios"
        scenarios.mkdir()
        (scenarios / "s.yaml").write_text("name: s\nturns:\n  - user: hi\n    model:\n      - text: hello\n")
        assert run_main(capsys, "run", str(scenarios), "--out", str(run_dir), "-q")[0] == 0
    monkeypatch.setattr(os, "fsync", _no_space)

    code, _, err = run_main(capsys, *argv)

    assert code == 3, err
    monkeypatch.undo()
    assert code in _documented_exit_codes(_help(verb, capsys)), _help(verb, capsys)
