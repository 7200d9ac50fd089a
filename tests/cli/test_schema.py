"""`agentrig schema`: the JSON Schema on stdout or in a file, without importing pydantic-ai."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.runfolder.jsonio import dumps
from agentrig.scenarios.schema import scenario_json_schema
from tests.cli.cli_helpers import run_main
from tests.cli.test_validate import run_cli_in_subprocess

runner = CliRunner()


def test_prints_the_schema() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == scenario_json_schema()
    assert result.output.startswith('{\n  "$schema": "https://json-schema.org/draft/2020-12/schema"')


def test_writes_the_schema_to_a_file(tmp_path: Path) -> None:
    target = tmp_path / "out" / "scenario.schema.json"
    result = runner.invoke(app, ["schema", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert json.loads(target.read_text(encoding="utf-8")) == scenario_json_schema()
    assert "wrote" in result.output


def test_writing_onto_a_directory_is_a_usage_error_and_leaves_it_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "keep.txt").write_text("mine", encoding="utf-8")
    code, _, err = run_main(capsys, "schema", "-o", str(tmp_path))
    assert (code, err) == (2, f"agentrig: error: -o {tmp_path}: is a directory; name the file to write\n")
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_a_path_that_cannot_be_written_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    code, _, err = run_main(capsys, "schema", "-o", str(tmp_path / "file" / "schema.json"))
    assert code == 2, err
    assert f"-o {tmp_path / 'file' / 'schema.json'}: cannot write there (" in err


def test_help_shows_the_editor_comment() -> None:
    result = runner.invoke(app, ["schema", "--help"])
    assert result.exit_code == 0, result.output
    assert "yaml-language-server: $schema=" in result.output


def test_schema_never_imports_pydantic_ai(tmp_path: Path) -> None:
    result = run_cli_in_subprocess("schema", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[-1] == "pydantic_ai imported: False", result.stderr
    assert json.loads(result.stdout)["title"] == "agentrig scenario file"


def test_help_never_imports_pydantic_ai(tmp_path: Path) -> None:
    result = run_cli_in_subprocess("--help", cwd=tmp_path)
    assert result.stderr.splitlines()[-1] == "pydantic_ai imported: False", result.stderr


def test_prints_the_stored_schema_which_is_the_generated_one() -> None:
    # `agentrig schema` prints the file scripts/gen_scenario_docs.py stores; it must be what the models give.
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0, result.output
    assert result.output.encode() == dumps(scenario_json_schema(), pretty=True)


def test_schema_never_builds_the_scenario_models(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from agentrig.cli import main\n"
        "try:\n"
        "    main(['schema'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('models imported:', 'agentrig.scenarios.model' in sys.modules, file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert result.stderr.splitlines()[-1] == "models imported: False", result.stderr
