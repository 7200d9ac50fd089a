"""Scenario suites for provider tests: N scenarios of T one-request turns, answered by any text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentrig.runtime.runfolder import jsonio

SCENARIO = """\
name: {name}
system_prompt: You are terse.
{settings}turns:
{turns}"""

TURN = """\
  - user: Say hello, {number}.
    model:
      - text: Hello!
"""


def write_suite(directory: Path, count: int, *, turns: int = 1, settings: str = "", prefix: str = "s") -> Path:
    """`count` scenario files in `directory` (created), each of `turns` turns; `settings` is YAML for `settings:`."""
    directory.mkdir(parents=True, exist_ok=True)
    block = f"settings:\n{settings}" if settings else ""
    for index in range(count):
        name = f"{prefix}{index:03d}"
        text = SCENARIO.format(name=name, settings=block, turns="".join(TURN.format(number=n) for n in range(turns)))
        (directory / f"{name}.yaml").write_text(text)
    return directory


def run_agentrig(*args: str, timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """`agentrig ARGS` in a subprocess (a run of its own: workers, its own limiter), output captured."""
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}
    command = [sys.executable, "-m", "agentrig", *args]
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=timeout_s)


def report(out: Path) -> dict[str, Any]:
    """The run's report.json."""
    data: dict[str, Any] = jsonio.read_json_file(out / "report.json")
    return data


def scenario_file(out: Path, name: str, file: str) -> Any:
    """A scenario's JSON file of the run in `out`."""
    return jsonio.read_json_file(out / "scenarios" / name / file)


def events(out: Path, name: str) -> list[dict[str, Any]]:
    """A scenario's events.jsonl as JSON objects."""
    lines = (out / "scenarios" / name / "events.jsonl").read_bytes().splitlines()
    return [jsonio.loads(line) for line in lines if line.strip()]
