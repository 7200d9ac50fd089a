"""Bad values of the provider flags: one line naming the flag, exit code 2, nothing touched (the earlier run's
output directory stays as it was), for `run`, `prompt`, `matrix` and the pytest plugin."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.cli.provider_flags import as_arguments, provider_options
from tests.cli.cli_helpers import run_main

pytest_plugins = ["pytester"]

_SCENARIO = "name: hello\nturns:\n  - user: hi\n    model:\n      - text: hello\n"

BAD_RUN_FLAGS = [
    (["--rpm", "0"], "--rpm must be a number of requests per minute above 0, got 0"),
    (["--rpm", "-5"], "--rpm must be a number of requests per minute above 0, got -5"),
    (["--tpm", "0"], "--tpm must be at least 1 token per minute, got 0"),
    (["--max-concurrency", "0"], "--max-concurrency must be at least 1 request in flight, got 0"),
    (["--max-concurrency", "-1"], "--max-concurrency must be at least 1 request in flight, got -1"),
    (
        ["--max-concurrency", "8", "--adaptive-concurrency", "4"],
        "--adaptive-concurrency 4 must be at least --max-concurrency 8: "
        "the bound grows from --max-concurrency up to it",
    ),
    (["--max-attempts", "0"], "--max-attempts must be at least 1 (1: no retry), got 0"),
    (["--max-retry-wait", "-1"], "--max-retry-wait must be a number of seconds, 0 or more, got -1"),
    (["--retry-budget", "-1"], "--retry-budget must be 0 or more retries, got -1"),
    (["--request-timeout", "0"], "--request-timeout must be a number of seconds above 0, got 0"),
    (["--request-timeout", "inf"], "--request-timeout must be a number of seconds above 0, got inf"),
    (["--timeout", "-2"], "--timeout must be a number of seconds above 0, got -2"),
]


@pytest.mark.parametrize(("flags", "message"), BAD_RUN_FLAGS, ids=lambda value: " ".join(value)[:40])
def test_run_refuses_a_bad_value_in_one_line_before_touching_anything(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "hello.yaml").write_text(_SCENARIO)
    out = tmp_path / "out"
    assert run_main(capsys, "run", str(tmp_path / "hello.yaml"), "--out", str(out))[0] == 0
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}

    code, stdout, stderr = run_main(capsys, "run", str(tmp_path / "hello.yaml"), "--out", str(out), *flags)

    assert (code, stdout, stderr) == (2, "", f"agentrig: error: {message}\n")
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--timeout", "0"], "--timeout must be a number of seconds above 0, got 0"),
        (["--request-timeout", "-1"], "--request-timeout must be a number of seconds above 0, got -1"),
        (["--max-attempts", "0"], "--max-attempts must be at least 1 (1: no retry), got 0"),
    ],
)
def test_prompt_refuses_a_bad_value_before_sending_anything(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, stderr = run_main(capsys, "prompt", "hi", "--model", "openai:gpt-4o", *flags)
    assert (code, stdout, stderr) == (2, "", f"agentrig: error: {message}\n")


def test_matrix_refuses_a_bad_value_before_building_anything(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scenarios").mkdir()
    code, _, stderr = run_main(capsys, "matrix", "--rpm", "0")
    assert (code, stderr) == (2, "agentrig: error: --rpm must be a number of requests per minute above 0, got 0\n")
    assert list(tmp_path.iterdir()) == [tmp_path / "scenarios"]


def test_matrix_passes_the_flags_on_to_each_run() -> None:
    options = provider_options(max_concurrency=16, rpm=120.0, max_attempts=5, request_timeout=30.0)
    assert as_arguments(options, timeout=60.0) == (
        "--max-concurrency", "16", "--rpm", "120", "--max-attempts", "5", "--request-timeout", "30", "--timeout", "60",
    )  # fmt: skip
    assert as_arguments(provider_options()) == ()


def test_the_plugin_refuses_a_bad_value_naming_its_own_option(pytester: pytest.Pytester) -> None:
    (pytester.path / "scenarios").mkdir()
    (pytester.path / "scenarios" / "hello.yaml").write_text(_SCENARIO)
    result = pytester.runpytest_inprocess("--agentrig-rpm", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agentrig-rpm must be a number of requests per minute above 0, got 0"])
    result = pytester.runpytest_inprocess("--agentrig-timeout", "0")
    result.stderr.fnmatch_lines(["*--agentrig-timeout must be a number of seconds above 0, got 0"])
