"""`agentrig validate`: human and JSON output, exit codes, and a start that never imports pydantic-ai."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app

runner = CliRunner()

VALID = "name: {name}\nturns:\n  - user: hi\n    model:\n      - text: hello\n"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A scenarios/ directory with one valid file of two scenarios."""
    directory = tmp_path / "scenarios"
    directory.mkdir()
    one = VALID.format(name="a").replace("\n", "\n  ").rstrip()
    two = VALID.format(name="b").replace("\n", "\n  ").rstrip()
    (directory / "pair.yaml").write_text(f"- {one}\n- {two}\n", encoding="utf-8")
    return directory


def test_valid_files(suite: Path) -> None:
    result = runner.invoke(app, ["validate", str(suite)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"ok     {suite / 'pair.yaml'} (2 scenarios)",
        "valid: 1 file, 2 valid scenarios",
    ]


def test_defaults_to_the_scenarios_directory(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(suite.parent)
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 0, result.output
    assert "ok     scenarios/pair.yaml (2 scenarios)" in result.output


def test_errors_exit_2_with_one_line_each(suite: Path) -> None:
    (suite / "bad.yaml").write_text("name: bad\ntrns: []\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", str(suite)])
    assert result.exit_code == 2, result.output
    bad = suite / "bad.yaml"
    assert result.output.splitlines() == [
        f"error  {bad}:1:1: missing required field 'turns'",
        f"error  {bad}:2:1: trns: unknown field 'trns'; did you mean 'turns'?",
        f"ok     {suite / 'pair.yaml'} (2 scenarios)",
        "INVALID: 2 files, 2 valid scenarios, 2 errors in 1 file",
    ]


def test_warnings_do_not_fail(suite: Path) -> None:
    (suite / "g.yaml").write_text(VALID.format(name="g") + "expect: {golden: golden/g.json}\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", str(suite / "g.yaml")])
    assert result.exit_code == 0, result.output
    assert "warn   " in result.output
    assert result.output.splitlines()[-1] == "valid: 1 file, 1 valid scenario, 1 warning"


def test_missing_path_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(tmp_path / "nope")])
    assert result.exit_code == 2, result.output
    assert "no such file or directory" in result.output


def test_json_output(suite: Path) -> None:
    (suite / "bad.yaml").write_text("name: bad\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", "--json", str(suite)])
    assert result.exit_code == 2, result.output
    document = json.loads(result.output)
    assert document["valid"] is False
    assert document["summary"] == {"files": 2, "invalid_files": 1, "scenarios": 2, "errors": 1, "warnings": 0}
    bad, pair = document["files"]
    assert bad["errors"] == [
        {
            "message": f"{suite / 'bad.yaml'}:1:1: missing required field 'turns'",
            "reason": "missing required field 'turns'",
            "path": (suite / "bad.yaml").as_posix(),
            "line": 1,
            "column": 1,
            "field": None,
        }
    ]
    assert [s["name"] for s in pair["scenarios"]] == ["a", "b"]
    assert pair["scenarios"][1]["line"] == 6


def test_help_has_an_example() -> None:
    result = runner.invoke(app, ["validate", "--help"])
    assert result.exit_code == 0, result.output
    assert "agentrig validate scenarios/" in result.output


def run_cli_in_subprocess(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the real entry point and report on stderr's last line whether pydantic_ai got imported."""
    code = (
        "import sys\n"
        "from agentrig.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "    code = 0\n"
        "except SystemExit as exit_:\n"
        "    code = exit_.code\n"
        "print('pydantic_ai imported:', 'pydantic_ai' in sys.modules, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, check=False)


def test_validate_never_imports_pydantic_ai(suite: Path) -> None:
    (suite / "bad.yaml").write_text("name: bad\n", encoding="utf-8")
    result = run_cli_in_subprocess("validate", "scenarios", cwd=suite.parent)
    assert result.stderr.splitlines()[-1] == "pydantic_ai imported: False", result.stderr
    assert "error  scenarios/bad.yaml:1:1: missing required field 'turns'" in result.stdout
    assert result.returncode == 2, result.stdout + result.stderr
