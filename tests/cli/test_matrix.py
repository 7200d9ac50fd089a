"""`agentrig matrix`: arguments, exit codes and output, on fake per-version environments (no network)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentrig.runtime.matrix import environments as matrix_module
from agentrig.runtime.matrix.environments import EnvironmentSpec, environment_spec, probe_python
from tests.cli.cli_helpers import run_main
from tests.runtime.test_matrix import executable, fake_environment, no_real_builds

__all__ = ["no_real_builds"]  # the autouse fixture applies here too


def cli_spec(version: str) -> EnvironmentSpec:
    """The environment the CLI computes in the current directory (no pyproject there, so no project)."""
    python, python_version = probe_python(sys.executable)
    return environment_spec(
        version, python=python, python_version=python_version, env_root=Path(".agentrig/matrix"), project=None
    )


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project-less directory with a scenarios/ folder, as the current directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scenarios").mkdir()
    return tmp_path


def test_help_documents_the_options_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(capsys, *["matrix", "--help"])
    assert code == 0
    for option in ("--versions", "--project", "--out", "--python", "--jobs", "--rebuild"):
        assert option in out
    assert "3 an environment could not be built" in " ".join(out.split())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["matrix", "nowhere/"], "nowhere: no such file or directory"),
        (["matrix", "scenarios", "--versions", " , "], "--versions: give at least one pydantic-ai version"),
        (["matrix", "scenarios", "--versions", "2.38.0,2.38.0"], "a version is listed twice"),
        (
            ["matrix", "scenarios", "--versions", "2.38.0,newest"],
            "--versions: 'newest' is not a version number (like 2.38.0), latest, locked, or a range",
        ),
        (["matrix", "scenarios", "--versions", ">=2.68,<<3"], "--versions: '>=2.68,<<3' is not a PEP 440 range"),
        (["matrix", "scenarios", "--versions", "locked"], "--versions locked: give --lock FILE"),
        (["matrix", "scenarios", "--each", "patch"], "--each patch: give release or minor"),
        (["matrix", "scenarios", "--max-versions", "0"], "--max-versions 0: give at least 1"),
        (["matrix", "scenarios", "--lock", "nowhere.lock"], "--lock nowhere.lock: cannot read it"),
        (
            ["matrix", "scenarios", "--models", "openai:a,openai:b", "--lock", "uv.lock"],
            "--lock: only without --models",
        ),
        (["matrix", "scenarios", "--project", "."], "--project .: no pyproject.toml or setup.py there"),
        (
            ["matrix", "scenarios", "--python", "no-such-python-3.99"],
            "--python no-such-python-3.99: no such interpreter",
        ),
        (["matrix", "scenarios", "--jobs", "0"], "--jobs"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    workdir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run_main(capsys, *argv)
    assert code == 2
    assert message in err


def test_a_regression_exits_1_and_names_it(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_environment(cli_spec("2.38.0"), {"a": "passed"})
    fake_environment(cli_spec("2.68.0"), {"a": "failed"})

    code, out, err = run_main(capsys, *["matrix", "scenarios", "--versions", "2.38.0,2.68.0", "--out", "m"])

    assert code == 1, err
    assert "[2/2] pydantic-ai 2.68.0: 0 passed, 1 failed" in err
    assert "regression: a failed on pydantic-ai 2.68.0" in out
    assert "wrote m/compatibility.md, m/compatibility.json and m/compatibility.html" in out
    assert (workdir / "m" / "compatibility.html").is_file()
    document = json.loads((workdir / "m" / "compatibility.json").read_text(encoding="utf-8"))
    assert document["command"] == "agentrig matrix scenarios --versions 2.38.0,2.68.0 --out m"
    assert document["exit_code"] == 1


def test_no_regression_exits_0(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_environment(cli_spec("2.38.0"), {"a": "passed"})
    fake_environment(cli_spec("2.40.0"), {"a": "passed"})
    code, out, err = run_main(capsys, *["matrix", "scenarios", "--versions", "2.38.0,2.40.0", "-j", "2", "-k", "a"])
    assert code == 0, err
    document = json.loads((workdir / "agentrig-matrix" / "compatibility.json").read_text(encoding="utf-8"))
    assert (
        document["command"] == "agentrig matrix scenarios --versions 2.38.0,2.40.0 --out agentrig-matrix -k a --jobs 2"
    )
    assert document["versions"][0]["command"][-2:] == ["-k", "a"]
    assert "1 scenarios x 2 versions: 0 regression(s)" in out
    assert (workdir / "agentrig-matrix" / "compatibility.md").is_file()


def test_an_environment_that_cannot_be_built_exits_3_with_one_line(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    uv = executable(
        workdir / "fakebin" / "uv",
        "#!/bin/sh\necho 'error: no matching distribution for pydantic-ai-slim==9.9.9' >&2\nexit 2\n",
    )
    monkeypatch.setattr(matrix_module, "find_uv", lambda: str(uv))

    code, out, err = run_main(capsys, *["matrix", "scenarios", "--versions", "9.9.9"])

    assert code == 3
    progress, line = err.strip().splitlines()
    assert progress.startswith("[1/1] pydantic-ai 9.9.9: environment not built: cannot build the environment ")
    assert line.startswith("agentrig: error: pydantic-ai 9.9.9: cannot build the environment ")
    assert line.endswith("error: no matching distribution for pydantic-ai-slim==9.9.9")
    # The page is written all the same, with the error and the end of the build log.
    assert "wrote agentrig-matrix/compatibility.md" in out
    markdown = (workdir / "agentrig-matrix" / "compatibility.md").read_text(encoding="utf-8")
    assert "## Environments that could not be built" in markdown
    assert "error: no matching distribution for pydantic-ai-slim==9.9.9" in markdown
    document = json.loads((workdir / "agentrig-matrix" / "compatibility.json").read_text(encoding="utf-8"))
    assert document["exit_code"] == 3
    assert document["versions"][0]["build_log"] == "logs/9.9.9.build.log"


def test_stream_runs_every_version_streamed(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_environment(cli_spec("2.38.0"), {"a": "passed"})
    code, _, err = run_main(capsys, *["matrix", "scenarios", "--versions", "2.38.0", "--stream"])
    assert code == 0, err
    document = json.loads((workdir / "agentrig-matrix" / "compatibility.json").read_text(encoding="utf-8"))
    assert document["command"].endswith("--stream")
    assert document["versions"][0]["command"][-1] == "--stream"
