"""Inputs real projects produce that once ended in a traceback or a runaway run: a scenario file whose name is not
UTF-8, a golden path that is a directory (or sits under a file), a YAML byte bomb, a 30-digit token count. Each is
one line and a documented exit code; the previous run's output is left as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentrig.runtime.suite import scenario_run
from tests.cli.cli_helpers import run_main
from tests.runtime.runner_fakes import fake_execute

SCENARIO = """\
name: {name}
turns:
  - user: hi
    model: [{{text: hello, usage: {{input_tokens: {tokens}, output_tokens: 1}}}}]
{expect}"""


@pytest.fixture(autouse=True)
def quiet_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("CI", raising=False)


def scenario_text(name: str = "alpha", *, tokens: str = "5", expect: str = "") -> str:
    return SCENARIO.format(name=name, tokens=tokens, expect=expect)


def non_utf8_file(directory: Path) -> Path:
    """`café.yaml` written by a Latin-1 system: the name's byte 0xe9 is no UTF-8."""
    raw = os.fsencode(directory) + b"/caf\xe9.yaml"
    try:
        with open(raw, "wb") as handle:
            handle.write(scenario_text().encode())
    except OSError:  # a file system that insists on UTF-8 names (macOS APFS) cannot hold one
        pytest.skip("this file system refuses non-UTF-8 file names")
    return Path(os.fsdecode(raw))


def test_validate_names_a_non_utf8_file_name_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    non_utf8_file(tmp_path)
    code, out, _ = run_main(capsys, "validate", str(tmp_path))
    assert code == 2
    assert f"error  {tmp_path}/caf\\xe9.yaml: the file name is not UTF-8; rename the file" in out

    code, out, _ = run_main(capsys, "validate", str(tmp_path), "--json")
    assert code == 2
    (file,) = json.loads(out)["files"]
    assert file["path"] == f"{tmp_path.as_posix()}/caf\\xe9.yaml"


def test_run_refuses_a_non_utf8_file_name_before_touching_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scenario_run, "_default_execute", lambda: fake_execute)
    suite = tmp_path / "suite"
    suite.mkdir()
    non_utf8_file(suite)
    out = tmp_path / "out"

    code, _, err = run_main(capsys, "run", str(suite), "--out", str(out))

    assert (code, err) == (
        2,
        f"agentrig: error: {suite}/caf\\xe9.yaml: the file name is not UTF-8; rename the file (reports name it)\n",
    )
    assert not out.exists()


def test_a_golden_path_that_is_a_directory_is_a_file_error_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scenario_run, "_default_execute", lambda: fake_execute)
    (tmp_path / "alpha.yaml").write_text(scenario_text(expect="expect: {golden: golden/alpha.json}\n"), "utf-8")
    (tmp_path / "golden" / "alpha.json").mkdir(parents=True)

    code, _, err = run_main(
        capsys, "run", str(tmp_path / "alpha.yaml"), "--out", str(tmp_path / "out"), "--update-golden"
    )

    assert code == 2
    assert err == (
        f"agentrig: error: {tmp_path}/alpha.yaml:5:18: expect.golden: {tmp_path}/golden/alpha.json is a directory;"
        " name the golden file\n"
    )
    assert not (tmp_path / "out").exists()


def test_a_golden_file_that_cannot_be_written_fails_its_check_and_the_run_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "alpha.yaml").write_text(scenario_text(expect="expect: {golden: golden/alpha.json}\n"), "utf-8")
    (tmp_path / "golden").write_text("a file where the golden folder should be", "utf-8")
    out = tmp_path / "out"

    code, stdout, _ = run_main(capsys, "run", str(tmp_path / "alpha.yaml"), "--out", str(out), "--update-golden")

    assert code == 1
    assert f"cannot write {tmp_path}/golden/alpha.json: a file is in the way of its folder" in stdout
    report = json.loads((out / "report.json").read_text("utf-8"))
    assert report["scenarios"][0]["status"] == "failed"


def test_a_yaml_byte_bomb_fails_validate_and_run_before_anything_grows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bomb = tmp_path / "bomb.yaml"
    copies = ", ".join(["*s"] * 200)
    bomb.write_text(f'name: bomb\nturns:\n  - user: &s "{"x" * 100_000}"\n    model: [{{text: [{copies}]}}]\n', "utf-8")

    code, out, _ = run_main(capsys, "validate", str(bomb))
    assert code == 2
    assert f"{bomb}:4:20: the aliases here expand to 20,000,000 characters" in out

    code, _, err = run_main(capsys, "run", str(bomb), "--out", str(tmp_path / "out"))
    assert code == 2
    assert err.startswith(f"agentrig: error: {bomb}:4:20: the aliases here expand to 20,000,000 characters")
    assert not (tmp_path / "out").exists()


def test_a_30_digit_token_count_fails_validate_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(scenario_text(tokens="1" + "0" * 29), "utf-8")

    code, out, _ = run_main(capsys, "validate", str(path))

    assert code == 2
    assert f"{path}:4:49: turns[0].model[0].usage.input_tokens: the integer 1000000000" in out
