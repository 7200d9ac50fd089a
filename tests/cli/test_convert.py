"""`agentrig convert`: any history form in, canonical or a pydantic-ai dump for the installed version out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.history.wire import HISTORY_FORMAT, history_from_json, loads_history
from agentrig.runtime.models.conversion import to_canonical
from tests.cli.cli_helpers import exit_code_and_stderr, main

DUMPS = Path(__file__).parents[1] / "runtime" / "convert_data"
OLD_DUMP = DUMPS / "tools-and-retries-2.38.0.json"
NEW_DUMP = DUMPS / "tools-and-retries-2.68.0.json"

runner = CliRunner()


@pytest.mark.parametrize("dump", [OLD_DUMP, NEW_DUMP], ids=lambda path: path.stem)
def test_a_pydantic_ai_dump_of_any_version_converts_to_canonical_on_stdout(dump: Path) -> None:
    result = runner.invoke(app, ["convert", str(dump)])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["format"] == HISTORY_FORMAT
    assert loads_history(result.stdout_bytes) == history_from_json(json.loads(dump.read_bytes()))


@pytest.mark.parametrize("dump", [OLD_DUMP, NEW_DUMP], ids=lambda path: path.stem)
def test_to_pydantic_ai_writes_a_dump_the_installed_version_validates(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "dump.json"
    result = runner.invoke(app, ["convert", str(dump), "--to", "pydantic-ai", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    messages = ModelMessagesTypeAdapter.validate_json(out.read_bytes())
    assert to_canonical(messages) == history_from_json(json.loads(dump.read_bytes()))


def test_legacy_and_session_files_convert(tmp_path: Path) -> None:
    legacy = tmp_path / "legacy.json"
    legacy.write_text(json.dumps([{"content": "hi"}, {"thought": "hmm"}, {"role": "assistant", "content": "hello"}]))
    result = runner.invoke(app, ["convert", str(legacy)])
    assert result.exit_code == 0, result.output
    messages = json.loads(result.stdout)["messages"]
    assert [(m["kind"], m["parts"][0]["content"]) for m in messages] == [("request", "hi"), ("response", "hello")]

    canonical_file = tmp_path / "canonical.json"
    canonical_file.write_bytes(result.stdout_bytes)
    again = runner.invoke(app, ["convert", str(canonical_file), "--to", "canonical"])
    assert again.exit_code == 0, again.output
    assert again.stdout == result.stdout  # canonical in, the same canonical out


def test_refuses_to_overwrite_the_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "dump.json"
    source.write_bytes(OLD_DUMP.read_bytes())
    before = source.read_bytes()
    link = tmp_path / "link.json"
    link.symlink_to(source)
    for target in (str(source), str(tmp_path / "." / "dump.json"), str(link)):
        code, err = exit_code_and_stderr(["convert", str(source), "-o", target], capsys)
        assert code == 2
        assert err == f"agentrig: error: {target}: refusing to overwrite the input file; choose another output path\n"
    assert source.read_bytes() == before


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"x": 1}', "not an agentrig session or history"),
        (b'[{"kind": "request", "parts": [', "truncated JSON"),
        (b"", "empty"),
        (b'[{"kind": "request", "parts": [{"part_kind": "tool-return", "content": 1}]}]', "tool_call_id"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(
    content: bytes, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    with pytest.raises(SystemExit) as exit_info:
        main(["convert", str(bad)])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"agentrig: error: {bad}")
    assert expected in lines[0]


def test_missing_file_and_refused_overwrite_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["convert", str(tmp_path / "missing.json")])
    assert exit_info.value.code == 2
    source = tmp_path / "dump.json"
    source.write_bytes(OLD_DUMP.read_bytes())
    with pytest.raises(SystemExit) as exit_info:
        main(["convert", str(source), "-o", str(source)])
    assert exit_info.value.code == 2
    assert "refusing to overwrite the input file" in capsys.readouterr().err


def test_an_unknown_target_is_a_usage_error() -> None:
    result = runner.invoke(app, ["convert", str(OLD_DUMP), "--to", "yaml"])
    assert result.exit_code == 2


def test_to_canonical_does_not_import_pydantic_ai(tmp_path: Path) -> None:
    out = tmp_path / "canonical.json"
    code = (
        "import sys\n"
        "from agentrig.cli import main\n"
        f"main(['convert', {str(NEW_DUMP)!r}, '--to', 'canonical', '-o', {str(out)!r}])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic_ai', 'pydantic_graph')))\n"
    )
    env = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"
    assert json.loads(out.read_bytes())["format"] == HISTORY_FORMAT


@pytest.mark.parametrize("target", ["canonical", "pydantic-ai"])
def test_keys_in_the_history_are_redacted_and_the_output_stays_valid_json(target: str, tmp_path: Path) -> None:
    source = tmp_path / "leaky.json"
    source.write_text(
        json.dumps(
            [
                {"content": 'use Client(api_key="YOUR_KEY")'},
                {"role": "assistant", "content": "the key was sk-proj-abcdefghijkl0123"},
            ]
        ),
        encoding="utf-8",
    )
    result = runner.invoke(app, ["convert", str(source), "--to", target])
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)  # still valid JSON
    assert "YOUR_KEY" not in result.stdout
    assert "sk-proj-abcdefghijkl0123" not in result.stdout
    assert "[REDACTED]" in result.stdout
