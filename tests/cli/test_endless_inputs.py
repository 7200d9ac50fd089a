"""Inputs that never end (`/dev/zero`, `/dev/urandom`, a FIFO) and files over their limit: every command that reads
a file refuses them at once, with one line and exit code 2, and never reads an over-limit file whole.

Real processes with a timeout: a regression reads `/dev/zero` until memory runs out, and must fail this test
rather than hang the suite (`check /dev/zero` once reached 10 GB in 14 s)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentrig.input_files import HISTORY_FILE_LIMIT, PROMPT_LIMIT, SCENARIO_FILE_LIMIT

pytestmark = pytest.mark.process

ENDS_WITHIN_S = 60.0
"""A generous bound for a command that must end at once (it is the regression's guard, not a timing check)."""

_SCENARIO = "name: fine\nturns:\n  - user: hi\n    model:\n      - text: done\n"
_HISTORY = '{"format": "agentrig.history/1", "messages": []}\n'


_MEASURED = """
import atexit, resource, sys
# A regression reads /dev/zero until memory runs out: at 2 GiB (ten times what a run needs) it fails, alone.
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
peak_file = sys.argv.pop(1)

def write_peak():  # the most memory this process held: /proc's high-water mark, kept per process image
    with open("/proc/self/status") as status, open(peak_file, "w") as out:
        out.write(next(line for line in status if line.startswith("VmHWM:")).split()[1])

atexit.register(write_peak)
sys.argv[0] = "agentrig"
from agentrig.__main__ import main
main()
"""


def _agentrig(*args: str, cwd: Path, stdin: int | None = None) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak resident memory in KiB) of `agentrig ARGS` in a process of its own."""
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "OPENAI_API_KEY": "sk-test"}
    peak = cwd / f".peak-{os.getpid()}-{threading.get_ident()}"
    try:
        finished = subprocess.run(
            [sys.executable, "-c", _MEASURED, str(peak), *args],
            cwd=cwd,
            env=environment,
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=ENDS_WITHIN_S,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"agentrig {' '.join(args)} did not end within {ENDS_WITHIN_S:.0f}s") from None
    peak_kib = int(peak.read_text(encoding="utf-8")) if peak.exists() else 0
    peak.unlink(missing_ok=True)
    return finished.returncode, finished.stdout, finished.stderr, peak_kib


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    """A FIFO nobody writes to: opening it to read blocks, reading it never ends."""
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


def _commands(source: str, tmp_path: Path) -> dict[str, list[str]]:
    fine = tmp_path / "fine.json"
    fine.write_text(_HISTORY, encoding="utf-8")
    return {
        "check": ["check", source],
        "validate": ["validate", source],
        "convert": ["convert", source],
        "diff": ["diff", str(fine), source],
        "scaffold": ["scaffold", source, "-o", str(tmp_path / "scenario.yaml")],
        "run": ["run", source, "--out", str(tmp_path / "out")],
        "prompt --session": ["prompt", "hi", "--session", source, "--model", "openai:gpt-4o"],
    }


COMMANDS = ["check", "validate", "convert", "diff", "scaffold", "run", "prompt --session"]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("source", ["/dev/zero", "fifo"])
def test_a_device_or_a_fifo_is_refused_at_once_and_exits_2(
    command: str, source: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    path = str(request.getfixturevalue("fifo")) if source == "fifo" else source
    kind = "a FIFO (named pipe)" if source == "fifo" else "a character device"

    code, out, err, _ = _agentrig(*_commands(path, tmp_path)[command], cwd=tmp_path)

    assert code == 2, out + err
    said = out if command == "validate" else err  # validate reports on stdout, as for any invalid file
    assert f"{path}: " in said, said
    assert kind in said, said
    assert len(err.splitlines()) == (0 if command == "validate" else 1), err


def test_dev_urandom_is_refused_too(tmp_path: Path) -> None:
    code, _, err, _ = _agentrig("check", "/dev/urandom", cwd=tmp_path)
    assert (code, err) == (2, "agentrig: error: /dev/urandom: is a character device, not a regular file\n")


def test_a_run_output_whose_report_is_a_fifo_is_refused_by_merge_and_report(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "report.json")
    for args in (["merge", str(run), "--out", str(tmp_path / "merged")], ["report", str(run)]):
        code, _, err, _ = _agentrig(*args, cwd=tmp_path)
        assert code == 2, err
        assert err.startswith(f"agentrig: error: {run}"), err  # no report.json they can read
        assert len(err.splitlines()) == 1, err


def test_a_fifo_in_a_scenario_folder_stops_a_merge_with_one_line(tmp_path: Path) -> None:
    scenario = tmp_path / "fine.yaml"
    scenario.write_text(_SCENARIO, encoding="utf-8")
    run = tmp_path / "run"
    assert _agentrig("run", str(scenario), "--out", str(run), "--quiet", cwd=tmp_path)[0] == 0
    os.mkfifo(run / "scenarios" / "fine" / "notes.json")

    code, _, err, _ = _agentrig("merge", str(run), "--out", str(tmp_path / "merged"), cwd=tmp_path)

    assert code == 2, err
    assert err == (
        f"agentrig: error: {run / 'scenarios' / 'fine' / 'notes.json'}: is a FIFO (named pipe), not a regular file; "
        "merge copies only the folders and regular files a run writes, and touched nothing\n"
    )
    assert not (tmp_path / "merged").exists()


def _sparse(path: Path, size: int) -> Path:
    """A file of `size` bytes that takes no room on disk (and no time to make)."""
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


def test_a_history_over_its_limit_is_refused_without_being_read(tmp_path: Path) -> None:
    big = _sparse(tmp_path / "big.json", HISTORY_FILE_LIMIT + 1)

    code, _, err, peak_kib = _agentrig("check", str(big), cwd=tmp_path)

    assert code == 2
    assert err == (
        f"agentrig: error: {big}: the file is {HISTORY_FILE_LIMIT + 1:,} bytes, over the 256 MiB limit for a JSON "
        "file (a history, session, dump, recording or report)\n"
    )
    assert peak_kib * 1024 < HISTORY_FILE_LIMIT / 2  # read whole, the process would have held it all


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_scenario_file_over_its_limit_is_refused(command: str, tmp_path: Path) -> None:
    big = _sparse(tmp_path / "big.yaml", SCENARIO_FILE_LIMIT + 1)
    args = ["validate", str(big)] if command == "validate" else ["run", str(big), "--out", str(tmp_path / "out")]

    code, out, err, _ = _agentrig(*args, cwd=tmp_path)

    assert code == 2, out + err
    expected = f"{big}: cannot read file: the file is {SCENARIO_FILE_LIMIT + 1:,} bytes, over the 16 MiB limit"
    assert expected in (out if command == "validate" else err)


def test_a_file_a_scenario_names_is_read_within_the_limit_too(tmp_path: Path) -> None:
    (tmp_path / "prompt.txt").write_text("", encoding="utf-8")
    _sparse(tmp_path / "prompt.txt", SCENARIO_FILE_LIMIT + 1)
    scenario = tmp_path / "named.yaml"
    scenario.write_text(_SCENARIO + "system_prompt_file: prompt.txt\n", encoding="utf-8")

    code, out, err, _ = _agentrig("run", str(scenario), "--out", str(tmp_path / "out"), cwd=tmp_path)

    assert code == 3, out + err  # the scenario could not run: its error, reported
    assert "over the 16 MiB limit for a file a scenario names" in out + err


def test_an_endless_prompt_on_stdin_is_refused(tmp_path: Path) -> None:
    with open("/dev/zero", "rb") as zeros:
        prompt = ["prompt", "-", "--model", "openai:gpt-4o"]
        code, out, err, peak_kib = _agentrig(*prompt, cwd=tmp_path, stdin=zeros.fileno())

    assert (code, out) == (2, "")
    assert err == "agentrig: error: the prompt on stdin is over the 16 MiB limit\n"
    assert peak_kib * 1024 < PROMPT_LIMIT * 16  # read up to the limit, not on and on
