"""Huge and deeply nested inputs, as each command meets them: one line naming the file, exit code 2, and memory
bounded (a file over its limit is refused from its size, never read; nesting is refused before anything recurses).

The files over a size limit are sparse (`os.truncate`): their size is what is checked, so no test writes 16 MiB."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentrig.input_files import HISTORY_FILE_LIMIT, SCENARIO_FILE_LIMIT
from tests.cli.cli_helpers import run_main

SCENARIO = "name: plain\nturns:\n  - user: hi\n    model: [{text: ok}]\n"


def _one_line_error(code: int, stderr: str, path: Path, says: str) -> None:
    assert code == 2, stderr
    assert stderr.startswith(f"agentrig: error: {path}"), stderr
    assert stderr.count("\n") == 1, stderr
    assert says in stderr
    assert "Traceback" not in stderr


def _deep_scenario(directory: Path, levels: int) -> Path:
    path = directory / "deep.yaml"
    nested = "[" * levels + "]" * levels  # inside `args`, itself 8 levels down: past the 200 limit either way
    path.write_text(SCENARIO.replace("{text: ok}", f"{{tool_calls: [{{id: c, name: t, args: {{a: {nested}}}}}]}}"))
    return path


@pytest.mark.parametrize("levels", [990, 10_000])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_deeply_nested_scenario_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, levels: int
) -> None:
    path = _deep_scenario(tmp_path, levels)  # 990 was a RecursionError traceback, exit 1
    code, out, err = run_main(
        capsys, command, str(path), *(["--out", str(tmp_path / "out")] if command == "run" else [])
    )
    report = err if command == "run" else out  # validate lists each file's errors on stdout, exit 2
    assert code == 2, out + err
    assert f"{path}:4:" in report
    assert "nest" in report
    assert "Traceback" not in out + err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["check", "convert", "scaffold", "diff"])
@pytest.mark.parametrize(
    "shape", ["[" * 10_000 + "]" * 10_000, '{"a":' * 1_100 + "1" + "}" * 1_100, "[" * 300 + "]" * 300]
)
def test_a_deeply_nested_json_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, shape: str
) -> None:
    path = tmp_path / "deep.json"
    path.write_text(shape)
    args = {"scaffold": ["-o", str(tmp_path / "s.yaml")], "diff": [str(path)]}.get(command, [])
    code, _, err = run_main(capsys, command, str(path), *args)
    _one_line_error(code, err, path, "nested" if shape.startswith("[" * 300 + "]") else "depth limit")


def test_a_scenario_over_its_limit_is_refused_from_its_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text(SCENARIO)
    os.truncate(path, SCENARIO_FILE_LIMIT + 1)
    for command in (["validate", str(path)], ["run", str(path), "--out", str(tmp_path / "out")]):
        code, out, err = run_main(capsys, *command)
        assert code == 2, out + err
        assert f"{path}" in out + err
        assert "over the 16 MiB limit for a scenario file" in out + err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["check", "convert", "scaffold"])
def test_a_json_file_over_its_limit_is_refused_from_its_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = tmp_path / "huge.json"
    path.write_text("[]")
    os.truncate(path, HISTORY_FILE_LIMIT + 1)
    args = ["-o", str(tmp_path / "s.yaml")] if command == "scaffold" else []
    code, _, err = run_main(capsys, command, str(path), *args)
    _one_line_error(code, err, path, "over the 256 MiB limit")


@pytest.mark.parametrize("shape", ["deep", "huge"])
def test_a_prices_file_nested_deep_or_over_its_limit_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    from agentrig.errors import InputError
    from agentrig.runtime.models.pricing import read_price_table

    path = tmp_path / "prices.yaml"
    if shape == "deep":
        path.write_text("openai:gpt-4o: " + "[" * 900 + "]" * 900 + "\n")  # PyYAML's Python parser: RecursionError
    else:
        path.write_text("openai:gpt-4o: {input: 1, output: 2}\n")
        os.truncate(path, SCENARIO_FILE_LIMIT + 1)
    with pytest.raises(InputError) as caught:
        read_price_table(path)
    assert str(path) in caught.value.message
    assert "\n" not in caught.value.message
    assert ("nested" if shape == "deep" else "over the 16 MiB limit") in caught.value.message
